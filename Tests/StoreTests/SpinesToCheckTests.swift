import Foundation
import GRDB
import SwiftWingCore
import Testing

@testable import Store

/// `spineToCheck` (issue 34): spines read but not identified land with their scan's books in one transaction, keep
/// their picture once cut (idempotently), and leave the list when the owner picks a book or dismisses them. On a
/// real SQLite file in a state directory.
@Suite struct SpinesToCheckTests {
    static let jpeg: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0, 1, 2, 3, 0xFF, 0xD9]
    static let candidates = [
        SpineCandidateRecord(
            title: "Correr per ser feliç", authors: ["Haruki Murakami"], isbn13: "9788497871839", confidence: 0.62,
            source: "catalogue"),
        SpineCandidateRecord(title: "Tòquio blues", authors: ["Haruki Murakami"], confidence: 0.21),
        SpineCandidateRecord(title: "Kafka a la platja", authors: ["Haruki Murakami"], confidence: 0.05),
    ]

    private func open(_ directory: TemporaryDirectory) throws -> (AppDatabase, SpoolDirectory) {
        try directory.stateDirectory.create()
        return (try AppDatabase.open(directory.stateDirectory), SpoolDirectory(directory.stateDirectory))
    }

    /// A scan done with one book and two spines to check (one with a box, one without).
    private func land(_ database: AppDatabase, spool: SpoolDirectory) throws -> (ScanRecord, [SpineToCheck]) {
        let scan = try pressShutter(database, spool: spool)
        let (_, books, spines) = try database.completeScanMatchingTitles(
            scan.id,
            books: [BookRecord(isbn13: "9780262033848", title: "Introduction to Algorithms", confidence: 0.93)],
            spines: [
                NewSpineToCheck(
                    text: "CORRER PER SER FELIC", box: SpineBox(x: 0.2, y: 0.1, width: 0.05, height: 0.8),
                    candidates: Self.candidates),
                NewSpineToCheck(text: "2018", box: nil, candidates: []),
            ], jobID: "job-1")
        #expect(books.count == 1)
        return (scan, spines)
    }

    @Test("spines land with the books and done, once; a second landing of a done scan adds nothing")
    func spinesLandWithTheBooks() throws {
        let directory = TemporaryDirectory()
        defer { withExtendedLifetime(directory) {} }
        let (database, spool) = try open(directory)
        let (scan, landed) = try land(database, spool: spool)
        #expect(landed.map(\.text) == ["CORRER PER SER FELIC", "2018"])
        #expect(landed.map(\.cropState) == [.pending, .none])
        #expect(try database.queue.scan(id: scan.id)?.state == .done)
        #expect(try database.spinesToCheckCount() == 2)
        let stored = try database.spinesToCheck()
        // As landed (the stored time is to the millisecond, so the times are compared apart).
        #expect(
            stored.map { spine in
                var same = spine
                same.createdAt = .distantPast
                return same
            }
                == landed.map { spine in
                    var same = spine
                    same.createdAt = .distantPast
                    return same
                })
        #expect(zip(stored, landed).allSatisfy { abs($0.createdAt.timeIntervalSince($1.createdAt)) < 0.002 })
        #expect(stored.first?.candidates == Self.candidates && stored.first?.jobID == "job-1")

        // The same results again (a stream replayed after a crash): the scan is done, nothing is added.
        let again = try database.completeScanMatchingTitles(
            scan.id, books: [], spines: [NewSpineToCheck(text: "AGAIN", box: nil, candidates: [])], jobID: "job-1")
        #expect(again.spines.isEmpty)
        #expect(try database.spinesToCheckCount() == 2)
    }

    @Test("a spine's picture waits for the cut, keeps the photo meanwhile, and is cut once")
    func cropIsPendingUntilCutAndIdempotent() throws {
        let directory = TemporaryDirectory()
        defer { withExtendedLifetime(directory) {} }
        let (database, spool) = try open(directory)
        let (scan, landed) = try land(database, spool: spool)
        let spine = landed[0]
        // As after a SIGKILL between landing and cutting: the photo is kept for the cut.
        #expect(try database.scansAwaitingSpines() == [scan.id])
        #expect(try database.queue.reconcile(spool: spool).photosKeptForSpines == [scan.id])
        #expect(try database.spinesAwaitingCrop(scanID: scan.id).map(\.id) == [spine.id])

        #expect(
            try database.saveSpineCrops([SpinePicture(spineID: spine.id, jpeg: Self.jpeg, width: 40, height: 320)]) == 1
        )
        // Cut again (a restart between the cut and the photo's removal): the first picture stays.
        #expect(
            try database.saveSpineCrops([SpinePicture(spineID: spine.id, jpeg: Self.jpeg + [0], width: 41, height: 320)]
            )
                == 0)
        #expect(try database.spineCrop(id: spine.id)?.width == 40)
        #expect(try database.spinesAwaitingCrop(scanID: scan.id).isEmpty)
        #expect(try database.scansAwaitingSpines().isEmpty)
        #expect(try database.spineToCheck(id: spine.id)?.cropState == .kept)
    }

    @Test("picking a candidate lands the book, reviewed, with the spine's picture; the spine leaves the list")
    func pickLandsTheBook() throws {
        let directory = TemporaryDirectory()
        defer { withExtendedLifetime(directory) {} }
        let (database, spool) = try open(directory)
        let (scan, landed) = try land(database, spool: spool)
        let spine = landed[0]
        try database.saveSpineCrops([SpinePicture(spineID: spine.id, jpeg: Self.jpeg, width: 40, height: 320)])

        #expect(try database.pickBook(spineID: spine.id, candidate: 3) == .noSuchCandidate(count: 3))
        guard case .picked(let book) = try database.pickBook(spineID: spine.id, candidate: 0) else {
            Issue.record("the candidate was not picked")
            return
        }
        #expect(book.title == "Correr per ser feliç" && book.isbn13 == "9788497871839")
        #expect(book.scanID == scan.id && !book.needsReview && book.reviewedAt != nil)
        let id = try #require(book.id)
        #expect(try database.bookCover(id: id) == BookCover(bookID: id, jpeg: Self.jpeg, width: 40, height: 320))
        #expect(try database.library.bookCount() == 2)
        #expect(try database.spinesToCheckCount() == 1)
        let picked = try #require(try database.spineToCheck(id: spine.id))
        #expect(picked.state == .picked && picked.bookID == id && picked.resolvedAt != nil)
        let raw = try #require(book.rawJSON)
        #expect(raw.contains("\"text\":\"CORRER PER SER FELIC\""))

        // Twice is refused, and so is dismissing a picked spine.
        #expect(try database.pickBook(spineID: spine.id, candidate: 1) == .alreadyResolved(.picked))
        #expect(try database.dismissSpine(id: spine.id) == .alreadyResolved(.picked))
        #expect(try database.pickBook(spineID: 999, candidate: 0) == .notFound)

        // The book deleted later: the spine stays picked, its book gone.
        _ = try database.library.delete(id: id)
        #expect(try database.spineToCheck(id: spine.id)?.bookID == nil)
        #expect(try database.spineToCheck(id: spine.id)?.state == .picked)
    }

    @Test("picking a book already in the library joins it; a named book lands too; dismiss leaves the list")
    func pickIntoExistingBookAndDismiss() throws {
        let directory = TemporaryDirectory()
        defer { withExtendedLifetime(directory) {} }
        let (database, spool) = try open(directory)
        let (_, landed) = try land(database, spool: spool)
        let owned = try database.library.insert(
            BookRecord(isbn13: "9788497871839", title: "Correr per ser feliç", authors: ["Haruki Murakami"]))
        guard case .picked(let book) = try database.pickBook(spineID: landed[0].id, candidate: 0) else {
            Issue.record("not picked")
            return
        }
        #expect(book.id == owned.id)
        #expect(try database.library.bookCount() == 2)

        #expect(try database.dismissSpine(id: landed[1].id) == .dismissed)
        #expect(try database.spinesToCheckCount() == 0)
        #expect(try database.spinesToCheck(all: true).map(\.state) == [.picked, .dismissed])

        let csv = String(decoding: SpinesCSV.encode(try database.spinesToCheck(all: true)), as: UTF8.self)
        let lines = csv.split(separator: "\r\n")
        #expect(lines.count == 3)
        #expect(lines[0].hasPrefix("Spine Id,State,Text Read,Candidates"))
        #expect(
            lines[1].contains("picked")
                && lines[1].contains("Correr per ser feliç — Haruki Murakami [9788497871839] (62 %)"))
        #expect(lines[2].contains("dismissed") && lines[2].contains("2018"))
    }

    @Test("the schema refuses a spine that breaks an invariant")
    func schemaHoldsTheInvariants() throws {
        let directory = TemporaryDirectory()
        defer { withExtendedLifetime(directory) {} }
        let (database, spool) = try open(directory)
        let scan = try pressShutter(database, spool: spool)
        let id = scan.id.uuidString.lowercased()
        let now = "2026-12-02 13:00:00.000"
        let bad: [(String, String)] = [
            (
                "no scan",
                "INSERT INTO spineToCheck (scanId, text, cropState, createdAt) VALUES ('\(UUID().uuidString.lowercased())', 'x', 'none', '\(now)')"
            ),
            (
                "empty text",
                "INSERT INTO spineToCheck (scanId, text, cropState, createdAt) VALUES ('\(id)', '  ', 'none', '\(now)')"
            ),
            (
                "half a box",
                "INSERT INTO spineToCheck (scanId, text, boxX, cropState, createdAt) VALUES ('\(id)', 'x', 0.1, 'none', '\(now)')"
            ),
            (
                "box outside",
                "INSERT INTO spineToCheck (scanId, text, boxX, boxY, boxWidth, boxHeight, cropState, createdAt) VALUES ('\(id)', 'x', 0.9, 0, 0.5, 0.5, 'pending', '\(now)')"
            ),
            (
                "pending without box",
                "INSERT INTO spineToCheck (scanId, text, cropState, createdAt) VALUES ('\(id)', 'x', 'pending', '\(now)')"
            ),
            (
                "candidates not a list",
                "INSERT INTO spineToCheck (scanId, text, candidates, cropState, createdAt) VALUES ('\(id)', 'x', '{}', 'none', '\(now)')"
            ),
            (
                "kept without crop",
                "INSERT INTO spineToCheck (scanId, text, cropState, createdAt) VALUES ('\(id)', 'x', 'kept', '\(now)')"
            ),
            (
                "crop not a JPEG",
                "INSERT INTO spineToCheck (scanId, text, cropState, crop, cropWidth, cropHeight, createdAt) VALUES ('\(id)', 'x', 'kept', x'89504E470000', 10, 10, '\(now)')"
            ),
            (
                "resolved without time",
                "INSERT INTO spineToCheck (scanId, text, cropState, state, createdAt) VALUES ('\(id)', 'x', 'none', 'dismissed', '\(now)')"
            ),
            (
                "book on a dismissed spine",
                "INSERT INTO spineToCheck (scanId, text, cropState, state, bookId, createdAt, resolvedAt) VALUES ('\(id)', 'x', 'none', 'dismissed', 1, '\(now)', '\(now)')"
            ),
            (
                "unknown state",
                "INSERT INTO spineToCheck (scanId, text, cropState, state, createdAt) VALUES ('\(id)', 'x', 'none', 'maybe', '\(now)')"
            ),
        ]
        for (what, sql) in bad {
            #expect(throws: DatabaseError.self, "\(what)") {
                try database.writer.write { db in try db.execute(sql: sql) }
            }
        }
        try database.writer.write { db in
            try db.execute(
                sql:
                    "INSERT INTO spineToCheck (scanId, text, cropState, createdAt) VALUES ('\(id)', 'x', 'none', '\(now)')"
            )
        }
        #expect(try database.spinesToCheckCount() == 1)
    }
}
