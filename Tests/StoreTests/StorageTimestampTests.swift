import Foundation
import GRDB
import SwiftWingCore
import Testing

@testable import Store

/// ``StorageTimestamp`` against GRDB's own DateFormatter and Calendar (which the daemon does not run).
@Suite("Storage timestamps: GRDB's date text without ICU")
struct StorageTimestampTests {
    /// Whole milliseconds, the instants either side of them, and random fractions; 1900 to 2200.
    private static func sampleDates() -> [Date] {
        var generator = SystemRandomNumberGenerator()
        let fixed: [TimeInterval] = [
            0, -0.0005, -0.001, -1, 0.0005, 0.9995, 0.999_999_9, 951_782_400, 951_868_799.999, 1_795_000_000.123,
            4_102_444_799.9999, -2_208_988_800, 7_258_118_399.999,
        ]
        let wholeMilliseconds = (0..<2000).map { _ in
            TimeInterval(Int.random(in: -2_208_988_800_000...7_258_118_399_999, using: &generator)) / 1000
        }
        let fractions = (0..<3000).map { _ in
            TimeInterval.random(in: -2_208_988_800...7_258_118_399, using: &generator)
        }
        let dates = (fixed + wholeMilliseconds + fractions).map { Date(timeIntervalSince1970: $0) }
        let neighbours = dates.flatMap { date in
            [date.timeIntervalSinceReferenceDate.nextUp, date.timeIntervalSinceReferenceDate.nextDown]
                .map { Date(timeIntervalSinceReferenceDate: $0) }
        }
        let referenceIntervals = (0..<1000).map { _ in
            Date(timeIntervalSinceReferenceDate: TimeInterval.random(in: -1e9...1e9, using: &generator))
        }
        return dates + neighbours + referenceIntervals
    }

    @Test("the text is GRDB's, byte for byte, milliseconds rounded the same way")
    func matchesGRDB() {
        var mismatches = 0
        for date in Self.sampleDates() {
            let grdb = String.fromDatabaseValue(date.databaseValue)
            let mine = StorageTimestamp.string(from: date)
            #expect(mine == grdb, "\(date.timeIntervalSinceReferenceDate)")
            if mine != grdb { mismatches += 1 }
            if mismatches > 10 { break }
        }
    }

    @Test("reading the text back gives the date to the nearest millisecond, and the same text")
    func roundTrips() throws {
        for date in Self.sampleDates() {
            let text = StorageTimestamp.string(from: date)
            let read = try #require(StorageTimestamp.date(from: text.databaseValue), "\(text)")
            #expect(StorageTimestamp.string(from: read) == text)
            // Half a millisecond, and the rounding error of a Double holding seconds since 2001.
            #expect(abs(read.timeIntervalSince(date)) <= 0.000_51, "\(text)")
        }
    }

    @Test(
        "reading agrees with GRDB's Date.fromDatabaseValue",
        arguments: [
            "2026-11-18", "2026-11-18 11:06", "2026-11-18 11:06:40", "2026-11-18 11:06:40.123",
            "2026-11-18T11:06", "2026-11-18T11:06:40", "2026-11-18T11:06:40.5", "2026-11-18T11:06:40.05",
            "1969-12-31 23:59:59.999", "2000-02-29 00:00:00.000", "1900-03-01 12:00:00.001", "2024-13-01",
            "2024-02-30 10:00", "11:06", "11:06:40.123", "yesterday", "2026-11-18 11:06:40Z", "",
        ])
    func readsLikeGRDB(text: String) {
        let grdb = Date.fromDatabaseValue(text.databaseValue)
        let mine = StorageTimestamp.date(from: text.databaseValue)
        #expect(mine == grdb, "\(String(describing: mine)) vs \(String(describing: grdb))")
    }

    @Test("numbers are seconds since 1970; NULL and blobs are no date")
    func numbersAndOthers() {
        #expect(StorageTimestamp.date(from: 1_800_000_000.databaseValue) == Date(timeIntervalSince1970: 1_800_000_000))
        #expect(StorageTimestamp.date(from: 12.5.databaseValue) == Date(timeIntervalSince1970: 12.5))
        #expect(StorageTimestamp.date(from: .null) == nil)
        #expect(StorageTimestamp.date(from: Data([1, 2]).databaseValue) == nil)
    }

    @Test("UTC fields and seconds since 1970 are inverses; months and days roll over")
    func partsInverse() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<5000 {
            let seconds = Int.random(in: -62_135_596_800...253_402_300_799, using: &generator)
            #expect(UTCDateParts(secondsSince1970: seconds).secondsSince1970 == seconds, "\(seconds)")
        }
        #expect(
            UTCDateParts(year: 2024, month: 13, day: 1).secondsSince1970
                == UTCDateParts(year: 2025, month: 1, day: 1).secondsSince1970)
        #expect(
            UTCDateParts(year: 2024, month: 2, day: 30).secondsSince1970
                == UTCDateParts(year: 2024, month: 3, day: 1).secondsSince1970)
        #expect(
            UTCDateParts(year: 2024, month: 0, day: 1).secondsSince1970
                == UTCDateParts(year: 2023, month: 12, day: 1).secondsSince1970)
        #expect(UTCDateParts(secondsSince1970: 1_795_000_000).iso8601 == "2026-11-18T11:06:40Z")
        #expect(UTCDateParts(secondsSince1970: -62_135_596_800).iso8601 == "0001-01-01T00:00:00Z")
    }

    @Test("scan and book rows hold GRDB's text, and queries compare against it")
    func recordsUseTheStorageText() throws {
        let database = try AppDatabase.inMemory()
        let pressed = Date(timeIntervalSince1970: 1_795_000_000.123_4)
        let scan = try database.queue.enqueue(
            NewScan(
                id: UUID(), pressedAt: MonotonicInstant(nanoseconds: 1), pressedWallAt: pressed, frameAt: nil,
                image: SpooledImage(fileName: "x.jpg", path: "/s/x.jpg", size: 1), width: 1, height: 1),
            now: pressed)
        let due = Date(timeIntervalSince1970: 1_795_000_060.5)
        _ = try database.queue.requeue(scan.id, reason: "backoff", notBefore: due, now: pressed)
        let book = try database.library.upsert(
            BookRecord(isbn13: "9780306406157", title: "T", addedAt: pressed, updatedAt: pressed), now: pressed)
        let (scanRow, bookRow) = try database.writer.read { db in
            (
                try Row.fetchOne(db, sql: "SELECT pressedWallAt, createdAt, nextAttemptAt FROM scan"),
                try Row.fetchOne(db, sql: "SELECT addedAt, updatedAt FROM book WHERE id = ?", arguments: [book.id])
            )
        }
        let expected = String.fromDatabaseValue(pressed.databaseValue)
        #expect(expected == "2026-11-18 11:06:40.123")
        #expect(scanRow?["pressedWallAt"] == expected)
        #expect(scanRow?["createdAt"] == expected)
        #expect(scanRow?["nextAttemptAt"] == String.fromDatabaseValue(due.databaseValue))
        #expect(bookRow?["addedAt"] == expected)
        #expect(bookRow?["updatedAt"] == expected)
        #expect(try database.queue.earliestNextAttempt() == StorageTimestamp.date(from: due.databaseValue))
        #expect(try database.queue.pending(dueBy: due.addingTimeInterval(-0.001)).isEmpty)
        #expect(try database.queue.pending(dueBy: due).map(\.id) == [scan.id])
    }
}
