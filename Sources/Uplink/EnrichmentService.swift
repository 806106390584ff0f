import Foundation
import HTTPEngine
import Logging
import ServiceLifecycle
import Store
import Synchronization
import Talaria

/// Where and how books known only by their ISBN are completed.
public struct EnrichmentSettings: Sendable {
    public var provider: CatalogProvider
    /// The catalogue's base URL (``CatalogProvider/defaultBaseURL`` unless configured).
    public var base: URL
    /// For `User-Agent: swiftwing/<version>` (Open Library asks clients to name themselves).
    public var version: String
    /// Backoff within a round, and the wait before the next round once a round is used up.
    public var retry = RetryPolicy(backoff: [2, 8, 30], roundInterval: 600)
    /// With nothing to do, the library is looked at again this often (a ``EnrichmentService/wake()``
    /// comes sooner).
    public var idleInterval: TimeInterval = 60
    public var timeouts = HTTPTimeouts(connect: .seconds(10), total: .seconds(20), stall: .seconds(15))

    public init(provider: CatalogProvider, base: URL? = nil, version: String) {
        self.provider = provider
        self.base = base ?? provider.defaultBaseURL
        self.version = version
    }
}

/// A book's enrichment changed: the panel shows the title once it is known.
public struct EnrichmentEvent: Sendable, Hashable {
    public var book: BookRecord
}

/// Completes books that have an ISBN but no title from a public catalogue (``CatalogProvider``),
/// one lookup at a time, and records the result in the book's `enrichmentStatus`: `success`,
/// `not_found`, or `error` after a round of attempts failed (tried again in the next round).
///
/// The discipline is the uploads': transport failures, 5xx and unreadable answers are retried with
/// ``RetryPolicy``'s backoff; a 429 pauses every lookup until its `Retry-After`; a round used up
/// waits for the next. Nothing here touches the scan path: SQLite runs on a ``StoreLane`` of its
/// own, HTTP on the transport's thread, time on the injected `Clock` and ``WallClock``.
public final class EnrichmentService: Service, Sendable {
    public let settings: EnrichmentSettings
    private let transport: any HTTPTransport
    private let library: Library
    private let logger: Logger
    private let clock: UplinkTime
    private let events: @Sendable (EnrichmentEvent) -> Void
    private let store = StoreLane(name: "sw-enrich-sql")
    private let doorbell = Doorbell()

    private struct Pacing {
        var gate = RateLimitGate()
        /// Per book: the attempt number within its round, and when it may be tried again.
        var attempt: [Int64: Int] = [:]
        var notBefore: [Int64: Date] = [:]
    }

    private let pacing = Mutex(Pacing())

    public init(
        settings: EnrichmentSettings, transport: any HTTPTransport, database: AppDatabase, logger: Logger,
        clock: any Clock<Duration> = ContinuousClock(), wallClock: WallClock = .system,
        events: @escaping @Sendable (EnrichmentEvent) -> Void = { _ in }
    ) {
        self.settings = settings
        self.transport = transport
        self.library = Library(database: database)
        self.logger = logger
        self.clock = UplinkTime(clock: clock, wall: wallClock)
        self.events = events
    }

    /// A book may be waiting (a barcode scan landed): look now.
    public func wake() { doorbell.ring() }

    /// Seconds left of a catalogue's rate-limit pause (0 when none).
    public var rateLimitRemainingSeconds: Int {
        let now = clock.now
        return pacing.withLock { $0.gate.remaining(at: now) }
    }

    public func run() async throws {
        logger.info(
            "enrichment started",
            metadata: [
                "provider": "\(settings.provider.rawValue)", "catalogue": "\(UplinkLog.redacted(settings.base))",
            ])
        await cancelWhenGracefulShutdown {
            await self.lookupLoop()
        }
        logger.info("enrichment stopped")
    }

    private func lookupLoop() async {
        let library = self.library
        while !Task.isCancelled {
            let now = clock.now
            let (paused, waiting) = pacing.withLock { ($0.gate.isPaused(at: now), $0.notBefore) }
            if !paused {
                let candidates =
                    (try? await store.run { () throws(StoreError) in try library.booksAwaitingEnrichment(limit: 50) })
                    ?? []
                for book in candidates where waiting[book.id ?? -1].map({ $0 <= now }) ?? true {
                    if Task.isCancelled { return }
                    guard await enrich(book) else { break }
                }
            }
            let wakeAt = pacing.withLock { pacing -> Date in
                let now = clock.now
                let dates = Array(pacing.notBefore.values) + [pacing.gate.pausedUntil].compactMap { $0 }
                return dates.filter { $0 > now }.min().map { min($0, now.addingTimeInterval(settings.idleInterval)) }
                    ?? now.addingTimeInterval(settings.idleInterval)
            }
            await doorbell.wait(until: wakeAt.addingTimeInterval(0.01), on: clock)
        }
    }

    /// One lookup of `book`, its outcome recorded. Returns `false` when lookups must pause (429).
    private func enrich(_ book: BookRecord) async -> Bool {
        guard let id = book.id, let isbn = book.isbn13 else { return true }
        let provider = settings.provider
        let request = HTTPRequest(
            method: .get, url: provider.lookupURL(isbn: isbn, base: settings.base),
            headers: [
                HTTPHeader(name: "Accept", value: "application/json"),
                HTTPHeader(name: "User-Agent", value: "swiftwing/\(settings.version)"),
            ],
            timeouts: settings.timeouts)
        let outcome: TransferOutcome
        do {
            outcome = TransferOutcome(try await transport.send(request))
        } catch {
            outcome = TalariaClient.outcome(of: error)
        }
        if Task.isCancelled { return false }
        let now = clock.now
        var verdict = RetryPolicy.classify(outcome, operation: "the catalogue lookup", now: now)
        if case .success = verdict, case .response(_, _, let body) = outcome {
            do throws(TalariaDecodingError) {
                switch try provider.read(body, isbn: isbn) {
                case .found(let record):
                    var completion = BookRecord(
                        title: record.fullTitle, authors: record.authors, publisher: record.publisher,
                        publishedDate: record.publishedDate, pageCount: record.pageCount, coverURL: record.coverURL)
                    completion.isbn10 = record.isbn10
                    await settle(id, isbn: isbn, status: .success, completion: completion)
                case .notFound:
                    await settle(id, isbn: isbn, status: .notFound, completion: nil)
                }
                return true
            } catch {
                let said: String
                switch error {
                case .notJSON(let what, let prefix): said = "\(what) is not JSON: it starts with \(prefix)"
                case .missingField(let what, let field, _): said = "\(what) has no \"\(field)\""
                case .invalidField(let what, let field, let reason, _): said = "\(what) has \"\(field)\": \(reason)"
                }
                verdict = .transient(
                    reason: "the catalogue's answer could not be read (\(said)); check enrichment.base_url if this "
                        + "persists; looked up again")
            }
        }
        let attempt = pacing.withLock { $0.attempt[id] ?? 1 }
        switch settings.retry.decide(after: verdict, attemptInRound: attempt, now: now) {
        case .done:
            return true
        case .retry(let at, let next):
            logger.notice(
                "catalogue lookup failed; retrying",
                metadata: [
                    "isbn": "\(isbn)", "attempt": "\(attempt)", "reason": "\(verdict.reason ?? "")",
                ])
            pacing.withLock {
                $0.attempt[id] = next
                $0.notBefore[id] = at
            }
            return true
        case .nextRound(let notBefore, let reason):
            let roundStart = max(notBefore, settings.retry.nextRoundStart(after: now))
            await giveUpRound(id, isbn: isbn, until: roundStart, reason: reason)
            return true
        case .fail(let reason, _):
            await giveUpRound(id, isbn: isbn, until: settings.retry.nextRoundStart(after: now), reason: reason)
            return true
        case .pauseAll(let until, let reason, _):
            logger.warning(
                "catalogue lookups paused: the catalogue is rate limiting",
                metadata: [
                    "until": "\(until)", "reason": "\(reason)",
                ])
            pacing.withLock {
                $0.gate.pause(until: until)
                $0.notBefore[id] = until
            }
            return false
        }
    }

    /// The round is used up: the book is marked `error` and waits for the next round.
    private func giveUpRound(_ id: Int64, isbn: String, until: Date, reason: String) async {
        logger.notice(
            "catalogue lookup round over; the book is looked up again later",
            metadata: [
                "isbn": "\(isbn)", "next_round": "\(until)", "reason": "\(reason)",
            ])
        pacing.withLock {
            $0.attempt[id] = nil
            $0.notBefore[id] = until
        }
        await record(id, status: .error, completion: nil)
    }

    private func settle(_ id: Int64, isbn: String, status: EnrichmentStatus, completion: BookRecord?) async {
        pacing.withLock {
            $0.attempt[id] = nil
            $0.notBefore[id] = nil
        }
        if let saved = await record(id, status: status, completion: completion) {
            logger.info(
                "book looked up in the catalogue",
                metadata: [
                    "isbn": "\(isbn)", "status": "\(status.rawValue)", "title": "\(saved.title)",
                ])
        }
    }

    @discardableResult
    private func record(_ id: Int64, status: EnrichmentStatus, completion: BookRecord?) async -> BookRecord? {
        let (library, now) = (self.library, clock.now)
        do {
            let saved = try await store.run { () throws(StoreError) in
                try library.recordEnrichment(id, status: status, completion: completion, now: now)
            }
            if let saved { events(EnrichmentEvent(book: saved)) }
            return saved
        } catch {
            // Not recorded: the book stays owed and is looked up again after a pause.
            logger.error(
                "a catalogue lookup's result was not saved; the book is looked up again in 30 s",
                metadata: [
                    "book_id": "\(id)", "error": "\(error)",
                ])
            let until = now.addingTimeInterval(30)
            pacing.withLock { $0.notBefore[id] = until }
            return nil
        }
    }
}
