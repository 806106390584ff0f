import Foundation
import GRDB
import Testing

@testable import Store

/// `BookRecord` writes its row column by column: every stored property, in the formats its `Codable`
/// reading expects, and the match key with it.
@Suite("Book records: the row written column by column")
struct BookRecordEncodingTests {
    static let full = BookRecord(
        isbn13: "9780441013593", isbn10: "0441013597", title: "Dune: Book One",
        authors: ["Frank Herbert", "A/B \"C\" é"],
        format: "paperback", publisher: "Ace", publishedDate: "1990-09", pageCount: 535, coverURL: "https://x/c.jpg",
        confidence: 0.75, enrichmentStatus: .reviewNeeded, addedAt: Date(timeIntervalSince1970: 1_795_000_000.25),
        updatedAt: Date(timeIntervalSince1970: 1_795_000_100.5), scanID: nil, rawJSON: #"{"title":"Dune"}"#,
        reviewReason: "the backend asked for review", reviewedAt: Date(timeIntervalSince1970: 1_795_000_200),
        editedAt: Date(timeIntervalSince1970: 1_795_000_300))

    @Test("every stored property has its column, the match key two more, and they are the table's columns")
    func everyPropertyWritten() throws {
        let properties = Mirror(reflecting: Self.full).children.compactMap(\.label)
        #expect(BookRecord.storedColumns.count == properties.count + 2, "\(BookRecord.storedColumns) for \(properties)")
        let values = try Self.full.storedValues()
        #expect(values.count == BookRecord.storedColumns.count)
        let key = Dictionary(uniqueKeysWithValues: zip(BookRecord.storedColumns, values))
        #expect(key["matchTitle"] == "dune".databaseValue)
        #expect(key["matchAuthor"] == "frank herbert".databaseValue)
        let database = try AppDatabase.inMemory()
        let tableColumns = try database.writer.read { db in try db.columns(in: "book").map(\.name) }
        #expect(Set(tableColumns) == Set(BookRecord.storedColumns + ["needsReview"]))
    }

    @Test("a full record reads back as it was written; its authors are the JSON text Codable wrote")
    func roundTrip() throws {
        let database = try AppDatabase.inMemory()
        var book = Self.full
        book.source = .barcode
        let scan = try database.queue.enqueue(newScan())
        book.scanID = scan.id
        let inserted = try database.library.insert(book)
        let id = try #require(inserted.id)
        let read = try #require(try database.library.book(id: id))
        #expect(read == inserted)
        let authors = try database.writer.read { db in
            try String.fetchOne(db, sql: "SELECT authors FROM book WHERE id = ?", arguments: [inserted.id])
        }
        let codable = try BookRecord.databaseJSONEncoder(for: "authors").encode(book.authors)
        #expect(authors == String(decoding: codable, as: UTF8.self))
        #expect(try database.library.book(matching: #require(book.matchKey))?.id == inserted.id)
    }

    @Test("a record's changes from another are the columns whose stored values differ, with its values of them")
    func changesAreTheDifferingValues() throws {
        let other = BookRecord(
            isbn13: "9780441013594", isbn10: nil, title: "Dune", authors: ["Frank Herbert"], format: nil,
            publisher: "Ace Books", publishedDate: nil, pageCount: 600, coverURL: nil, confidence: nil,
            enrichmentStatus: .success,
            addedAt: Date(timeIntervalSince1970: 1_795_000_000.2504),  // the same millisecond as `full`'s
            updatedAt: Date(timeIntervalSince1970: 1_795_000_101), scanID: UUID(), rawJSON: nil,
            reviewReason: nil, reviewedAt: nil, editedAt: Date(timeIntervalSince1970: 1_795_000_300))
        // Each field from `full` or from `other`, chosen by the bits of `choice` (seeded, so the cases are fixed).
        func mixed(_ choice: UInt32) -> BookRecord {
            var book = Self.full
            func take(_ bit: UInt32) -> Bool { choice & (1 << bit) != 0 }
            if take(0) { book.isbn13 = other.isbn13 }
            if take(1) { book.isbn10 = other.isbn10 }
            if take(2) { book.title = other.title }
            if take(3) { book.authors = other.authors }
            if take(4) { book.format = other.format }
            if take(5) { book.publisher = other.publisher }
            if take(6) { book.publishedDate = other.publishedDate }
            if take(7) { book.pageCount = other.pageCount }
            if take(8) { book.coverURL = other.coverURL }
            if take(9) { book.confidence = other.confidence }
            if take(10) { book.enrichmentStatus = other.enrichmentStatus }
            if take(11) { book.addedAt = other.addedAt }
            if take(12) { book.updatedAt = other.updatedAt }
            if take(13) { book.scanID = other.scanID }
            if take(14) { book.rawJSON = other.rawJSON }
            if take(15) { book.source = .barcode }
            if take(16) { book.reviewReason = other.reviewReason }
            if take(17) { book.reviewedAt = other.reviewedAt }
            if take(18) { book.editedAt = nil }
            if take(19) { book.id = 7 }
            if take(20) { book.addedAt = Date(timeIntervalSince1970: 1_795_000_050) }  // a different millisecond
            return book
        }
        var state: UInt64 = 20
        let timestamps = StorageTimestampMemo()
        var changedSomewhere = Set<Int>()
        for _ in 0..<300 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let (new, old) = (mixed(UInt32(truncatingIfNeeded: state >> 40)), mixed(UInt32(truncatingIfNeeded: state)))
            let (newKey, oldKey) = (new.matchKey, state & (1 << 63) == 0 ? old.matchKey : nil)
            let newValues = try new.storedValues(matchKey: newKey)
            let oldValues = try old.storedValues(matchKey: oldKey)
            let expected = newValues.indices.filter { newValues[$0] != oldValues[$0] }
            let changes = try new.storedChanges(
                from: old, matchKey: newKey, oldMatchKey: oldKey, timestamps: timestamps)
            #expect(changes.columns == expected, "\(new) from \(old)")
            #expect(changes.values == expected.map { newValues[$0] })
            changedSomewhere.formUnion(expected)
        }
        // Every column changed in some case: a column added without a field mixed above is caught here.
        let untried = Set(BookRecord.storedColumns.indices).subtracting(changedSomewhere)
        #expect(untried.isEmpty, "never changed: \(untried.sorted().map { BookRecord.storedColumns[$0] })")
    }
}
