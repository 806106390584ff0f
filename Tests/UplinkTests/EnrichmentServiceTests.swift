import Foundation
import HTTPEngine
import Logging
import Store
import SwiftWingTesting
import Synchronization
import Talaria
import Testing

@testable import Uplink

/// An enrichment service over the scripted backend of an ``UplinkHarness`` (its uplink is never
/// started, so every request is a catalogue lookup), on the harness's manual clock and real SQLite file.
private final class EnrichmentRig: Sendable {
    let harness: UplinkHarness
    let service: EnrichmentService
    private let running = ServiceTask()

    init(
        provider: CatalogProvider = .openLibrary,
        script: @escaping @Sendable (HTTPRequest, Int) -> ScriptedBackend.Reply
    ) throws {
        harness = try UplinkHarness(script: script)
        var settings = EnrichmentSettings(
            provider: provider, base: URL(string: "http://127.0.0.1:9/")!, version: "test")
        settings.retry = RetryPolicy(backoff: [2, 8, 30], roundInterval: 600, random: { 0.5 })
        settings.idleInterval = 3600
        service = EnrichmentService(
            settings: settings, transport: harness.backend, database: harness.database, logger: Logger(label: "test"),
            clock: harness.clock, wallClock: harness.wallClock)
    }

    func start() {
        let service = self.service
        running.start { try await service.run() }
    }

    func stop() async { await running.stop() }

    /// A book known by its ISBN alone, as a barcode scan leaves it.
    @discardableResult
    func addBarcodeBook(_ isbn13: String = "9780131103627") throws -> BookRecord {
        let book = try harness.database.library.insert(
            BookRecord(isbn13: isbn13, title: "", addedAt: harness.now))
        service.wake()
        return book
    }

    func book(_ isbn13: String = "9780131103627") throws -> BookRecord {
        try #require(try harness.database.library.book(isbn13: isbn13))
    }

    /// Each time the service sleeps (it is idle: the scripted catalogue answers at once), moves the
    /// clock to its wake-up time, until `condition` holds; records an issue when that would pass
    /// `limit` seconds of clock time. Waiting for the sleep, not for real time, keeps this exact on
    /// a busy machine.
    func jump(
        _ what: String, upTo limit: TimeInterval, sourceLocation: SourceLocation = #_sourceLocation,
        until condition: () throws -> Bool
    ) async throws {
        let clock = harness.clock
        let end = clock.now.advanced(by: Duration.nanoseconds(Int64(limit * 1e9)))
        while try !condition() {
            try await harness.eventually("the service sleeps", sourceLocation: sourceLocation) {
                try clock.sleeperCount > 0 || condition()
            }
            if try condition() { return }
            guard let next = clock.nextDeadline, next <= end else {
                Issue.record("not reached within \(limit) s on the clock: \(what)", sourceLocation: sourceLocation)
                return
            }
            clock.advance(by: max(Duration.zero, clock.now.duration(to: next)))
        }
    }

    func lookups() -> [Date] {
        harness.backend.times(.get, pathSuffix: "/api/books") + harness.backend.times(.get, pathSuffix: "/volumes")
    }
}

private let found = #"""
    {"ISBN:9780131103627": {"title": "The C Programming Language", "authors": [{"name": "Brian W. Kernighan"},
    {"name": "Dennis M. Ritchie"}], "publishers": [{"name": "Prentice Hall"}], "publish_date": "1988",
    "number_of_pages": 272}}
    """#

@Suite("Enrichment over a scripted catalogue on a manual clock")
struct EnrichmentServiceTests {
    @Test("a barcode-only book is completed from Open Library; a titled book is never looked up")
    func completes() async throws {
        let rig = try EnrichmentRig { _, _ in .response(status: 200, body: found) }
        try rig.harness.database.library.insert(
            BookRecord(isbn13: "9780262033848", title: "Introduction to Algorithms"))
        rig.start()
        try rig.addBarcodeBook()
        try await rig.harness.eventually("the book is enriched") { try rig.book().enrichmentStatus == .success }
        await rig.stop()
        let book = try rig.book()
        #expect(book.title == "The C Programming Language")
        #expect(book.authors == ["Brian W. Kernighan", "Dennis M. Ritchie"])
        #expect(book.publisher == "Prentice Hall")
        #expect(book.pageCount == 272)
        #expect(book.publishedDate == "1988")
        let requests = rig.harness.backend.requests
        #expect(requests.count == 1)
        #expect(requests.first?.url.query == "bibkeys=ISBN:9780131103627&format=json&jscmd=data")
        #expect(try rig.book("9780262033848").enrichmentStatus == .pending)
    }

    @Test("Google Books: totalItems 0 is not_found, and the book is not asked for again")
    func notFound() async throws {
        let rig = try EnrichmentRig(provider: .googleBooks) { _, _ in
            .response(status: 200, body: #"{"kind": "books#volumes", "totalItems": 0}"#)
        }
        rig.start()
        try rig.addBarcodeBook()
        try await rig.harness.eventually("the book is not found") { try rig.book().enrichmentStatus == .notFound }
        try await rig.harness.eventually("the service sleeps") { rig.harness.clock.sleeperCount > 0 }
        rig.harness.clock.advance(by: .seconds(4000))  // past the idle interval: the library is read again
        try await rig.harness.eventually("the service sleeps again") { rig.harness.clock.sleeperCount > 0 }
        await rig.stop()
        #expect(rig.lookups().count == 1)
        #expect(try rig.book().title == "")
    }

    @Test("429 with Retry-After: 30 pauses every lookup for 30 s on the clock, then succeeds")
    func rateLimited() async throws {
        let rig = try EnrichmentRig { _, earlier in
            earlier == 0
                ? .response(status: 429, headers: [HTTPHeader(name: "Retry-After", value: "30")], body: "{}")
                : .response(status: 200, body: found)
        }
        rig.start()
        try rig.addBarcodeBook()
        try await rig.harness.eventually("the 429 arrived") { rig.lookups().count == 1 }
        try await rig.harness.eventually("the pause is set") { rig.service.rateLimitRemainingSeconds > 0 }
        #expect(rig.service.rateLimitRemainingSeconds == 30)
        try await rig.jump("enriched after the pause", upTo: 120) {
            try rig.book().enrichmentStatus == .success
        }
        await rig.stop()
        let times = rig.lookups()
        #expect(times.count == 2)
        #expect(gaps(times).allSatisfy { $0 >= 30 })
    }

    @Test("offline: a round of backoff 2 s, 8 s, then `error`; the next round 600 s later succeeds")
    func offline() async throws {
        // The first three lookups find no network; any later one finds the catalogue.
        let rig = try EnrichmentRig { _, earlier in
            earlier < 3
                ? .failure(.couldNotConnect(host: "127.0.0.1", detail: "refused"))
                : .response(status: 200, body: found)
        }
        rig.start()
        try rig.addBarcodeBook()
        try await rig.jump("the round is used up", upTo: 60) { try rig.book().enrichmentStatus == .error }
        #expect(rig.lookups().count == 3)
        try await rig.jump("enriched in the next round", upTo: 1200) { try rig.book().enrichmentStatus == .success }
        await rig.stop()
        let times = rig.lookups()
        #expect(times.count == 4)
        #expect(gaps(times).map { $0.rounded() } == [2, 8, 600])
        #expect(try rig.book().title == "The C Programming Language")
    }

    @Test("malformed JSON and a 500 are retried with backoff, then the answer is recorded")
    func malformedThenServerError() async throws {
        let rig = try EnrichmentRig { _, earlier in
            switch earlier {
            case 0: .response(status: 200, body: #"{"ISBN:9780131103627": {"title": "Unterminat"#)
            case 1: .response(status: 500, body: #"{"error": {"code": 500, "message": "Backend Error"}}"#)
            default: .response(status: 200, body: found)
            }
        }
        rig.start()
        try rig.addBarcodeBook()
        try await rig.jump("enriched on the third attempt", upTo: 60) { try rig.book().enrichmentStatus == .success }
        await rig.stop()
        #expect(gaps(rig.lookups()).map { $0.rounded() } == [2, 8])
        #expect(try rig.book().authors.count == 2)
    }
}
