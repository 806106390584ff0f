import Foundation
import GRDB
import Testing

@testable import Store

/// Scans the device identified by itself (barcodes, the quality check), on a real SQLite file.
@Suite("Identified scans: barcode books, poor frames, their constraints (v3-identify)")
struct IdentifiedScanTests {
    static let dune = "9780441013593"
    static let blurred = ScanQuality(
        verdict: .blurry, sharpness: 12.5, exposure: .init(mean: 120, shadows: 0.01, highlights: 0.02))

    func scan(quality: ScanQuality? = nil, barcodes: [ScanBarcode] = []) -> NewScan {
        var scan = newScan()
        scan.quality = quality
        scan.barcodes = barcodes
        return scan
    }

    @Test("a barcode scan is done with its book in the library, in one transaction")
    func barcodeScanIsDoneWithItsBook() throws {
        let directory = TemporaryDirectory()
        let database = try AppDatabase.open(directory.stateDirectory)
        let good = ScanQuality(verdict: .good, sharpness: 900, exposure: .init(mean: 130, shadows: 0, highlights: 0))
        let new = scan(quality: good, barcodes: [ScanBarcode(format: "EAN-13", text: Self.dune)])

        let (done, books) = try database.completeIdentifiedScan(new, isbns: [Self.dune])

        #expect(done.state == .done && done.progress == 1)
        #expect(done.cleanupPending == false, "no job at the backend: no cleanup is owed")
        let book = try #require(books.first)
        #expect(books.count == 1)
        #expect(book.isbn13 == Self.dune && book.isbn10 == "0441013597")
        #expect(book.title.isEmpty && book.source == .barcode && book.enrichmentStatus == .pending)
        #expect(book.scanID == new.id)
        // As read back from the file by another connection.
        let reopened = try AppDatabase.openReadOnly(directory.stateDirectory)
        let stored = try #require(try reopened.queue.scan(id: new.id))
        #expect(stored.state == .done && stored.quality == good && stored.barcodes == new.barcodes)
        #expect(try reopened.library.book(isbn13: Self.dune)?.source == .barcode)
        #expect(try reopened.queue.pending().isEmpty, "a barcode scan is not uploaded")
    }

    @Test("a barcode book is deduplicated by ISBN-13 and never undoes a known title")
    func barcodeBookDedupes() throws {
        let directory = TemporaryDirectory()
        let database = try AppDatabase.open(directory.stateDirectory)
        try database.library.insert(
            BookRecord(isbn13: Self.dune, title: "Dune", authors: ["Frank Herbert"], enrichmentStatus: .success))

        let (_, books) = try database.completeIdentifiedScan(scan(), isbns: [Self.dune])

        #expect(try database.library.bookCount() == 1)
        #expect(books.first?.title == "Dune" && books.first?.enrichmentStatus == .success)
        #expect(books.first?.source == .backend)
    }

    @Test("a book the schema refuses rolls the whole scan back: no row, no book")
    func failedBookRollsBackTheScan() throws {
        let directory = TemporaryDirectory()
        let database = try AppDatabase.open(directory.stateDirectory)
        let new = scan()

        #expect(throws: StoreError.self) {
            try database.completeIdentifiedScan(new, isbns: [Self.dune, "97804410135"])
        }

        #expect(try database.queue.scan(id: new.id) == nil)
        #expect(try database.library.bookCount() == 0)
    }

    @Test("a poor frame waits for a person, and is queued despite its quality when retried")
    func poorFrameWaitsForRetry() throws {
        let directory = TemporaryDirectory()
        let database = try AppDatabase.open(directory.stateDirectory)
        let queue = database.queue
        let kept = try queue.enqueue(scan(quality: Self.blurred), attention: "the frame is blurry")
        #expect(kept.state == .needsAttention && kept.lastError == "the frame is blurry")
        #expect(try queue.pending().isEmpty)
        #expect(try queue.scan(id: kept.id)?.quality == Self.blurred)

        let retried = try queue.retry(kept.id)

        #expect(retried.state == .queued && retried.uploadDespiteQuality)
        #expect(try queue.pending().map(\.id) == [kept.id])
    }

    @Test("a scan kept for another reason (its photo is missing) is not retried by hand")
    func onlyPoorFramesAreRetriedFromAttention() throws {
        let database = try AppDatabase.inMemory()
        let queue = database.queue
        let good = ScanQuality(verdict: .good, sharpness: 500, exposure: .init(mean: 128, shadows: 0, highlights: 0))
        let scan = try queue.enqueue(scan(quality: good), attention: "its photo is missing")
        #expect(throws: StoreError.notRetryable(id: scan.id, state: .needsAttention)) { try queue.retry(scan.id) }
    }

    @Test("the schema refuses unknown verdicts and sources, a partial quality and non-array barcodes")
    func constraints() throws {
        let directory = TemporaryDirectory()
        let database = try AppDatabase.open(directory.stateDirectory)
        let scan = try database.queue.enqueue(scan(quality: Self.blurred))
        let id = scan.idString
        let refused = [
            "UPDATE scan SET qualityVerdict = 'fuzzy' WHERE id = '\(id)'",
            "UPDATE scan SET qualityVerdict = NULL WHERE id = '\(id)'",
            "UPDATE scan SET sharpness = -1 WHERE id = '\(id)'",
            "UPDATE scan SET exposureShadows = 1.5 WHERE id = '\(id)'",
            "UPDATE scan SET barcodes = '{}' WHERE id = '\(id)'",
            "UPDATE scan SET uploadDespiteQuality = 2 WHERE id = '\(id)'",
            "INSERT INTO book (title, addedAt, updatedAt, source) VALUES ('x', 0, 0, 'guess')",
        ]
        for sql in refused {
            #expect(throws: (any Error).self, "\(sql)") {
                try database.writer.write { db in try db.execute(sql: sql) }
            }
        }
        // What the schema allows: a book from the backend by default.
        try database.writer.write { db in
            try db.execute(sql: "INSERT INTO book (title, addedAt, updatedAt) VALUES ('x', 0, 0)")
        }
        #expect(try database.library.books().first?.source == .backend)
    }

    @Test("queue and library JSON carry quality, barcodes and source")
    func json() throws {
        let database = try AppDatabase.inMemory()
        let new = scan(quality: Self.blurred, barcodes: [ScanBarcode(format: "EAN-13", text: Self.dune)])
        let (done, books) = try database.completeIdentifiedScan(new, isbns: [Self.dune])
        let encoder = JSONEncoder()
        let scanJSON = try #require(try JSONSerialization.jsonObject(with: encoder.encode(done)) as? [String: Any])
        let quality = try #require(scanJSON["quality"] as? [String: Any])
        #expect(quality["verdict"] as? String == "blurry")
        #expect((quality["exposure"] as? [String: Any])?["mean"] as? Double == 120)
        #expect((scanJSON["barcodes"] as? [[String: String]])?.first?["text"] == Self.dune)
        let bookJSON = try #require(try JSONSerialization.jsonObject(with: encoder.encode(books[0])) as? [String: Any])
        #expect(bookJSON["source"] as? String == "barcode")
    }

    @Test("ISBN-10 from ISBN-13: 978 only, X for ten")
    func isbn10() {
        #expect(BookRecord(barcodeISBN13: Self.dune).isbn10 == "0441013597")
        #expect(BookRecord(barcodeISBN13: "9780306406157").isbn10 == "0306406152")
        #expect(BookRecord(barcodeISBN13: "9780975229804").isbn10 == "097522980X")
        #expect(BookRecord(barcodeISBN13: "9791032305690").isbn10 == nil)
    }
}
