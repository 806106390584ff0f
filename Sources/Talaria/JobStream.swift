import Foundation

/// Following one job's progress stream, as pure logic: bytes and clock readings in, actions out.
/// The transfer engine owns the connection; this decides what its bytes mean and what comes next
/// (docs/protocol.md §2, §4).
///
/// - Books from `result` events are collected; a terminal `completed` with a non-empty list wins,
///   an empty or missing list falls back to the collected ones, and a stripped one with nothing
///   collected asks for the results endpoint (§4).
/// - After the terminal event, everything else on the stream is ignored (a duplicate terminal).
/// - A dropped connection is resumed with ``lastEventID`` after ``reconnectDelay``; a `timeout`
///   event, a stream over the parser's limits, or ``abandonAfter`` since the stream was first
///   opened without a terminal event ask for the job's status to be polled (never a re-upload).
public struct JobStream: Sendable {
    public enum Action: Hashable, Sendable {
        /// A stage update for the panel (0–1, when the server gave one).
        case progress(fraction: Double?, message: String?)
        /// Terminal success: commit these books, the spines to check (docs/protocol.md §6) and the scan's `done`
        /// in one transaction.
        case complete(books: [TalariaBook], spines: [TalariaSpine] = [])
        /// Terminal success without books: `GET` ``UploadAccepted/resultsURL`` (or `url`).
        case fetchResults(url: URL?)
        /// Terminal failure as the server reported it (`retryable` decides: queue again or fail).
        case failed(JobFailure)
        /// Stop reading this stream and poll the job's status (≤ 1 request / 2 s).
        case pollStatus(reason: String)
        /// Something skipped (a bad event or book): log it, never fatal.
        case warning(TalariaWarning)
        /// The server named a URL the device does not follow (``ServerURL``): the job fails with `reason`.
        case refusedURL(reason: String)
        /// More books, or larger ones, than ``TalariaLimits`` allow: nothing is committed and the scan
        /// needs a person's attention, with `reason`.
        case overLimit(reason: String)
    }

    public let jobID: String
    /// A stream open this long without a terminal event is abandoned for polling (5 minutes).
    public let abandonAfter: TimeInterval
    public private(set) var openedAt: Date?
    /// True once this stream is done with: a terminal event, or a `.pollStatus` (a `timeout` event,
    /// a broken limit, abandonment). Later bytes are ignored; ``disconnected()`` says not to resume.
    public private(set) var finished = false

    private var parser: SSEParser
    private var decoder: TalariaStreamDecoder
    private var collected: [TalariaBook] = []
    private var terminalEventID = ""

    /// - Parameter resumingAfter: the last event id persisted before a restart: the first
    ///   connection already sends it as `Last-Event-ID`.
    public init(
        jobID: String, base: URL, limits: SSEParser.Limits = .default, abandonAfter: TimeInterval = 300,
        resumingAfter lastEventID: String? = nil
    ) {
        self.jobID = jobID
        self.abandonAfter = abandonAfter
        parser = SSEParser(limits: limits, lastEventID: lastEventID ?? "")
        decoder = TalariaStreamDecoder(base: base)
    }

    /// The `Last-Event-ID` to send when reconnecting, or `nil` when the server sent no id.
    /// Frozen at the terminal event (bytes after it in the same chunk are parsed but not acted on).
    public var lastEventID: String? {
        let id = finished ? terminalEventID : parser.lastEventID
        return id.isEmpty ? nil : id
    }

    /// The wait before reconnecting: the server's `retry:` or 5 s.
    public var reconnectDelay: TimeInterval { Double(parser.reconnectionTime ?? 5_000) / 1_000 }

    /// Call when a connection (first or resumed) got its 200 response.
    public mutating func connected(now: Date) {
        if openedAt == nil { openedAt = now }
    }

    /// Bytes from the stream, in whatever chunks the connection delivered them.
    public mutating func receive<Bytes: Collection<UInt8>>(_ chunk: Bytes, now: Date) -> [Action] {
        guard !finished else { return [] }
        var actions: [Action] = []
        var events: [SSEEvent] = []
        do throws(SSEError) {
            try parser.feed(chunk) { events.append($0) }
        } catch {
            for event in events where !finished { handle(event, into: &actions) }
            if !finished {
                finished = true
                terminalEventID = parser.lastEventID
                parser.finish()
                actions.append(.pollStatus(reason: "\(error)"))
            }
            return actions
        }
        for event in events where !finished { handle(event, into: &actions) }
        if !finished, let abandoned = tick(now: now) { actions.append(abandoned) }
        return actions
    }

    /// The connection closed (by the server or an error). An unterminated event is discarded.
    /// Returns `true` when the stream should be resumed (after ``reconnectDelay``, with
    /// ``lastEventID``); `false` when the job is finished here.
    public mutating func disconnected() -> Bool {
        parser.finish()
        return !finished
    }

    /// Checked on a timer while the stream is quiet: `.pollStatus`, once, when the stream has been
    /// open ``abandonAfter`` without a terminal event (pings do not count). Close the stream then.
    public mutating func tick(now: Date) -> Action? {
        guard !finished, let openedAt, now.timeIntervalSince(openedAt) >= abandonAfter else { return nil }
        finished = true
        terminalEventID = parser.lastEventID
        return .pollStatus(
            reason:
                "no terminal event \(Int(abandonAfter)) s after the stream opened; the job's status is polled instead")
    }

    private mutating func handle(_ event: SSEEvent, into actions: inout [Action]) {
        let output = decoder.decode(event)
        defer { if finished, terminalEventID.isEmpty { terminalEventID = event.lastEventID } }
        actions += output.warnings.map(Action.warning)
        guard let decoded = output.event else { return }
        switch decoded {
        case .progress(let progress):
            actions.append(.progress(fraction: progress.fraction, message: progress.message))
        case .result(let books, _, let message):
            collected += books
            // Checked as they come, so a stream of endless books holds no more than the limit in memory.
            if let reason = TalariaLimits.violation(in: collected) {
                finished = true
                collected = []
                actions.append(.overLimit(reason: reason))
                return
            }
            if let message { actions.append(.progress(fraction: nil, message: message)) }
        case .completed(let completion):
            finished = true
            let books = completion.books.isEmpty ? collected : completion.books
            if let reason = completion.refusal {
                actions.append(.refusedURL(reason: reason))
            } else if let reason = TalariaLimits.violation(in: books) ?? TalariaSpine.violation(in: completion.spines) {
                actions.append(.overLimit(reason: reason))
            } else if books.isEmpty, !completion.booksIncluded {
                actions.append(.fetchResults(url: completion.resultsURL))
            } else {
                actions.append(.complete(books: books, spines: completion.spines))
            }
        case .failed(let failure):
            finished = true
            actions.append(.failed(failure))
        case .timeout(let failure):
            finished = true
            actions.append(.pollStatus(reason: "the server ended the stream (\(failure)); the job's status is polled"))
        case .ping, .enrichmentDegraded:
            break
        }
    }
}
