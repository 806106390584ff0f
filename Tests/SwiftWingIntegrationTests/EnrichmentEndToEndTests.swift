import Foundation
import HTTPEngine
import Logging
import Store
import Talaria
import Testing
import Uplink

/// Enrichment through the real HTTP engine (libcurl) against the real reference backend's catalogue
/// on loopback, into a real SQLite file: a book row with only an ISBN, as a barcode scan leaves it.
@Suite(.serialized) struct EnrichmentEndToEndTests {
    /// The C Programming Language, from the reference backend's catalog.
    static let isbn = "9780131103627"

    /// A state directory with one ISBN-only book, an engine and an enrichment service against `backend`.
    final class Rig: Sendable {
        let directory: String
        let database: AppDatabase
        let engine: CurlEngine
        let service: EnrichmentService

        init(backend: BackendHarness, provider: CatalogProvider) throws {
            directory = NSTemporaryDirectory() + "swiftwing-enrichment-" + UUID().uuidString
            let state = StateDirectory(path: directory)
            try state.create()
            database = try AppDatabase.open(state)
            engine = CurlEngine(logger: Logger(label: "http"))
            var settings = EnrichmentSettings(provider: provider, base: URL(string: backend.url)!, version: "test")
            // Short waits so a round of retries fits in a test; 429's Retry-After is the server's.
            settings.retry = RetryPolicy(backoff: [0.2, 0.4, 0.8], roundInterval: 2)
            settings.idleInterval = 1
            service = EnrichmentService(
                settings: settings, transport: engine, database: database, logger: Logger(label: "enrichment"))
            try database.library.insert(BookRecord(isbn13: EnrichmentEndToEndTests.isbn, title: ""))
        }

        deinit {
            engine.shutdown()
            try? FileManager.default.removeItem(atPath: directory)
        }

        var book: BookRecord? { try? database.library.book(isbn13: EnrichmentEndToEndTests.isbn) }

        /// Runs the service until the book's status is `status` (or 1,500 looks 20 ms apart), then
        /// stops it. Counted in looks, not wall time: suites that block the test process's threads
        /// stall this loop and the in-process service alike, and must not use up its time.
        func run(until status: EnrichmentStatus) async throws -> BookRecord {
            let service = self.service
            let task = Task { try await service.run() }
            var looks = 0
            while looks < 1500, book?.enrichmentStatus != status {
                looks += 1
                try await Task.sleep(for: .milliseconds(20))
            }
            task.cancel()
            _ = await task.result
            return try #require(book)
        }
    }

    static func lookups(_ backend: BackendHarness) throws -> Int {
        let counts = try backend.stats()["catalogLookups"] as? [String: Int] ?? [:]
        return counts[isbn] ?? 0
    }

    static func expectCompleted(_ book: BookRecord, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(book.enrichmentStatus == .success, sourceLocation: sourceLocation)
        #expect(book.title == "The C Programming Language", sourceLocation: sourceLocation)
        #expect(book.authors == ["Brian W. Kernighan", "Dennis M. Ritchie"], sourceLocation: sourceLocation)
        #expect(book.publisher == "Prentice Hall", sourceLocation: sourceLocation)
        #expect(book.pageCount == 272, sourceLocation: sourceLocation)
        #expect(book.publishedDate == "1988", sourceLocation: sourceLocation)
        #expect(book.isbn10 == "0131103628", sourceLocation: sourceLocation)
    }

    @Test(arguments: CatalogProvider.allCases)
    func anISBNOnlyBookIsCompleted(provider: CatalogProvider) async throws {
        let backend = try BackendHarness()
        try backend.start()
        let rig = try Rig(backend: backend, provider: provider)
        Self.expectCompleted(try await rig.run(until: .success))
        #expect(try Self.lookups(backend) == 1)
    }

    @Test func rateLimitedThenCompletedAfterRetryAfter() async throws {
        let backend = try BackendHarness()
        try backend.start()
        try backend.queueFaults(["catalog:429:1"])
        let rig = try Rig(backend: backend, provider: .googleBooks)
        let started = Date()
        let book = try await rig.run(until: .success)
        Self.expectCompleted(book)
        #expect(try Self.lookups(backend) == 2)
        // The second lookup waited for Retry-After: 1.
        #expect(book.updatedAt.timeIntervalSince(started) >= 1)
    }

    @Test func anUnknownBookIsNotFound() async throws {
        let backend = try BackendHarness()
        try backend.start()
        try backend.queueFaults(["catalog:not-found"])
        let rig = try Rig(backend: backend, provider: .openLibrary)
        let book = try await rig.run(until: .notFound)
        #expect(book.enrichmentStatus == .notFound)
        #expect(book.title == "")
        #expect(try Self.lookups(backend) == 1)
    }

    @Test(arguments: [["catalog:malformed"], ["catalog:500"], ["catalog:malformed", "catalog:500", "catalog:html"]])
    func faultsAreRetriedThenCompleted(faults: [String]) async throws {
        let backend = try BackendHarness()
        try backend.start()
        try backend.queueFaults(faults)
        let rig = try Rig(backend: backend, provider: .openLibrary)
        Self.expectCompleted(try await rig.run(until: .success))
        #expect(try Self.lookups(backend) == faults.count + 1)
    }

    @Test func aRoundOfFailuresIsAnErrorThenTheNextRoundCompletes() async throws {
        let backend = try BackendHarness()
        try backend.start()
        // A 503 with Retry-After (the catalogue's 1 s) pauses the lookups and is not a failure; three failures then
        // use up the first round; the next round fails once more, then completes.
        try backend.queueFaults(["catalog:503", "catalog:500", "catalog:html", "catalog:500", "catalog:500"])
        let rig = try Rig(backend: backend, provider: .openLibrary)
        #expect(try await rig.run(until: .error).enrichmentStatus == .error)
        #expect(try Self.lookups(backend) == 4)
        Self.expectCompleted(try await rig.run(until: .success))
        #expect(try Self.lookups(backend) == 6)
    }
}
