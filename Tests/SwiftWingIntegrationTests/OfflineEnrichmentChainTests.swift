import Foundation
import Imaging
import SwiftWingCore
import SwiftWingTesting
import Testing

/// The offline path end to end, on real processes: the daemon (synthetic camera replaying a shelf
/// with a book's EAN-13 label) and the reference backend, which is both the recognition backend and
/// the catalogue. The catalogue cannot be reached when the barcode is scanned; the scan is done at
/// once and its book waits with its ISBN alone; when the catalogue answers, the same book gets its
/// title, and nothing was uploaded.
@Suite(.serialized) struct OfflineEnrichmentChainTests {
    static let width = 1280
    static let height = 720
    static let isbn = BookScenes.catalogueISBN

    /// The daemon configured for `backend` as recognition backend and catalogue, its camera on the scene.
    static func daemon(for backend: BackendHarness) throws -> DaemonHarness {
        let harness = try DaemonHarness.forBackend(
            backend, extraConfig: "[enrichment]\nbase_url = \"\(backend.url)\"\n")
        let folder = harness.root.appendingPathComponent("camera").path
        let scene = try #require(
            try BookScenes.shelfWithBarcode(isbn: isbn, width: width, height: height), "the shelf photos are missing")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try Data(try JPEGEncoder(quality: 92).encode(scene)).write(to: URL(fileURLWithPath: folder + "/book.jpg"))
        try harness.startDaemon(camera: "synthetic:\(folder)", width: width, height: height)
        return harness
    }

    /// Presses once; the scan must be done at once with the label's ISBN read, and its book must be in
    /// the library with the ISBN alone (source barcode, enrichment pending).
    static func pressAndExpectOfflineBook(_ harness: DaemonHarness) throws -> String {
        let press = harness.press()
        let id = try #require(press.id, "the press was refused: \(press.result.error)\n\(harness.log)")
        let scan = try #require(try harness.queue().first { $0.id == id })
        #expect(scan.state == "done", "\(scan.lastError ?? "")")
        #expect(scan.jobId == nil, "a barcode scan is not sent to the backend")
        #expect(scan.barcodes?.map(\.text) == [isbn])
        let books = try harness.library()
        #expect(books.count == 1)
        let book = try #require(books.first)
        #expect(book.isbn13 == isbn && book.title.isEmpty && book.scanId?.lowercased() == id)
        #expect(book.source == "barcode" && book.enrichmentStatus == "pending")
        return id
    }

    /// Waits until the library's one book has its title, then checks nothing went to the backend
    /// and no second book appeared. The library is read once more after the deadline: a test process
    /// starved by other suites may wake only after it, while the daemon went on.
    static func expectTitleArrives(_ harness: DaemonHarness, backend: BackendHarness, scan id: String) throws {
        let deadline = Date().addingTimeInterval(60)
        var books: [DaemonHarness.LibraryBook] = []
        while Date() < deadline {
            books = (try? harness.library()) ?? []
            if books.first?.enrichmentStatus == "success" { break }
            Thread.sleep(forTimeInterval: 0.2)
        }
        if books.first?.enrichmentStatus != "success" { books = try harness.library() }
        #expect(books.count == 1, "one book, not a second one for the same ISBN: \(books.map(\.isbn13))")
        let book = try #require(books.first, "\(harness.log.suffix(4000))")
        #expect(book.enrichmentStatus == "success", "\(harness.log.suffix(4000))")
        #expect(book.title == "The C Programming Language" && book.isbn13 == isbn)
        #expect(book.scanId?.lowercased() == id)
        let lookups = try backend.stats()["catalogLookups"] as? [String: Int] ?? [:]
        #expect((lookups[isbn] ?? 0) >= 1)
        #expect(backend.stat("uploads") == 0, "the barcode scan was uploaded")
        #expect(try harness.queue().first { $0.id == id }?.state == "done")
    }

    @Test func aBarcodeScanWithTheCatalogueDownIsEnrichedWhenItComesBack() throws {
        // The reference backend is down: connections to the catalogue are refused.
        let backend = try BackendHarness()
        let harness = try Self.daemon(for: backend)
        let id = try Self.pressAndExpectOfflineBook(harness)
        try backend.start()
        try Self.expectTitleArrives(harness, backend: backend, scan: id)

        // The same barcode again: a second scan, the same book, the title kept.
        let again = harness.press()
        #expect(again.id != nil, "\(again.result.error)")
        let books = try harness.library()
        #expect(books.count == 1 && books.first?.title == "The C Programming Language")
        harness.killDaemon(signal: SIGTERM)
    }

    /// The first lookup goes out with the press (the scan wakes the lookups; the service's own look at
    /// the library is 60 s away), so two 503s and the answer fit in the 60 s this waits.
    @Test func aBarcodeScanWhileTheCatalogueAnswers503IsEnrichedAfterIt() throws {
        let backend = try BackendHarness()
        try backend.start()
        try backend.queueFaults(["catalog:503", "catalog:503"])
        let harness = try Self.daemon(for: backend)
        let id = try Self.pressAndExpectOfflineBook(harness)
        try Self.expectTitleArrives(harness, backend: backend, scan: id)
        let lookups = try backend.stats()["catalogLookups"] as? [String: Int] ?? [:]
        #expect(lookups[Self.isbn] == 3, "two 503s, then the answer")
        harness.killDaemon(signal: SIGTERM)
    }
}
