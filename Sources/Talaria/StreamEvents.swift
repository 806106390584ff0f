import Foundation

/// A `progress` event: a stage update.
public struct JobProgress: Hashable, Sendable {
    public var status: JobStatus?
    /// 0–1, whichever scale the server used.
    public var fraction: Double?
    public var processedCount: Int?
    public var totalCount: Int?
    public var message: String?

    public init(
        status: JobStatus? = nil, fraction: Double? = nil, processedCount: Int? = nil, totalCount: Int? = nil,
        message: String? = nil
    ) {
        self.status = status
        self.fraction = fraction
        self.processedCount = processedCount
        self.totalCount = totalCount
        self.message = message
    }
}

/// A terminal failure (`failed`/`error`), or the server giving up (`timeout`).
public struct JobFailure: Hashable, Sendable, CustomStringConvertible {
    public var code: String?
    public var message: String?
    /// The server's word; `timeout` is always retryable.
    public var retryable: Bool

    public init(code: String?, message: String?, retryable: Bool) {
        self.code = code
        self.message = message
        self.retryable = retryable
    }

    public var isCanceled: Bool { code?.uppercased() == "CANCELED" || code?.uppercased() == "CANCELLED" }

    public var description: String {
        [code, message].compactMap { $0 }.joined(separator: ": ").isEmpty
            ? "no reason given" : [code, message].compactMap { $0 }.joined(separator: ": ")
    }
}

/// A terminal success.
public struct JobCompletion: Hashable, Sendable {
    public var status: JobStatus
    public var books: [TalariaBook]
    /// False when the event carried no `books`/`results` list at all (stripped): fetch §4 results.
    public var booksIncluded: Bool
    public var resultsURL: URL?
    /// Why the job cannot be finished as told: its `resultsUrl` is one the device does not follow
    /// (``ServerURL/refusal``). `nil` when all is well.
    public var refusal: String?
    /// Spines the backend read but did not identify (docs/protocol.md §6 `unmatched`), kept to be checked.
    public var spines: [TalariaSpine]

    public init(
        status: JobStatus = .completed, books: [TalariaBook], booksIncluded: Bool = true, resultsURL: URL? = nil,
        refusal: String? = nil, spines: [TalariaSpine] = []
    ) {
        self.status = status
        self.books = books
        self.spines = spines
        self.booksIncluded = booksIncluded
        self.resultsURL = resultsURL
        self.refusal = refusal
    }
}

/// One Talaria stream event, aliases folded (docs/protocol.md §2).
public enum TalariaEvent: Hashable, Sendable {
    case progress(JobProgress)
    /// A `result` event: books (possibly none: status-only), status and message when given.
    case result(books: [TalariaBook], status: JobStatus?, message: String?)
    case completed(JobCompletion)
    case failed(JobFailure)
    /// The server gave up on the stream (`STREAM_TIMEOUT`); retryable: poll or reconnect.
    case timeout(JobFailure)
    case ping
    case enrichmentDegraded(isbn: String?, title: String?, reason: String?, fallbackSource: String?)

    /// `completed`, `failed`: the job is over. (`timeout` ends the stream, not the job.)
    public var isTerminal: Bool {
        switch self {
        case .completed, .failed: true
        default: false
        }
    }
}

/// Turns ``SSEEvent``s of one job's stream into ``TalariaEvent``s. Never throws: an unknown event
/// is ignored, a malformed one is skipped with a warning, a malformed book inside a good event is
/// skipped with a warning and the others are kept, a second terminal event is ignored.
///
/// Stateful per job: once a progress above 1 is seen the job's progress is read as 0–100 for the
/// rest of the stream (so a later `1` means 1 %, not 100 %).
public struct TalariaStreamDecoder: Sendable {
    public let base: URL
    public private(set) var terminalSeen = false
    private var percentScale = false

    public init(base: URL) {
        self.base = base
    }

    public struct Output: Hashable, Sendable {
        /// `nil` for an ignored event (unknown, malformed, duplicate terminal, empty data).
        public var event: TalariaEvent?
        public var warnings: [TalariaWarning]
    }

    public mutating func decode(_ sse: SSEEvent) -> Output {
        var warnings: [TalariaWarning] = []
        let json: JSONValue
        if sse.data.utf8.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }) {
            json = .object([:])  // a ping or a terminal event without data
        } else {
            do {
                json = try JSONValue.parse(sse.data, what: "event")
            } catch {
                let what =
                    "the \"\(sse.type)\" event (last event id \(sse.lastEventID.isEmpty ? "none" : sse.lastEventID))"
                return Output(event: nil, warnings: [TalariaWarning("\(error.renamed(what)); event skipped")])
            }
        }
        var type = sse.type.lowercased()
        if type == "message", let inner = json.first("type", "event")?.stringValue {
            type = inner.lowercased()  // servers that name the event inside the data
        }
        let event: TalariaEvent?
        switch type {
        case "progress", "status":
            var fraction = json["progress"]?.doubleValue
            if let value = fraction, value > 1 { percentScale = true }
            if let value = fraction {
                fraction = percentScale ? (value <= 100 ? value / 100 : nil) : normaliseProgress(value)
            }
            event = .progress(
                JobProgress(
                    status: json["status"]?.stringValue.map { JobStatus(tolerating: $0) }, fraction: fraction,
                    processedCount: json["processedCount"]?.intValue, totalCount: json["totalCount"]?.intValue,
                    message: json["message"]?.stringValue))
        case "result", "results", "book":
            let (books, found) = booksIn(json, singleBookAllowed: true)
            warnings += found
            event = .result(
                books: books, status: json["status"]?.stringValue.map { JobStatus(tolerating: $0) },
                message: json["message"]?.stringValue)
        case "completed", "complete", "done", "success":
            let (books, found) = booksIn(json, singleBookAllowed: false)
            warnings += found
            let included = json.first("books", "results") != nil || json["data"]?.first("books", "results") != nil
            let resultsURL = ServerURL(json["resultsUrl"]?.stringValue, field: "resultsUrl", base: base)
            let (spines, spineWarnings) = TalariaSpine.decodeList(json["unmatched"] ?? json["data"]?["unmatched"])
            warnings += spineWarnings
            event = .completed(
                JobCompletion(
                    status: json["status"]?.stringValue.map { JobStatus(tolerating: $0) } ?? .completed, books: books,
                    booksIncluded: included, resultsURL: resultsURL.url, refusal: resultsURL.refusal, spines: spines))
        case "failed", "error", "failure", "canceled", "cancelled":
            let problem = ProblemDetails.decode(json)
            var code = problem.code
            if code == nil, type.hasPrefix("cancel") { code = "CANCELED" }
            event = .failed(
                JobFailure(
                    code: code, message: problem.detail ?? problem.title, retryable: problem.retryable ?? false))
        case "timeout":
            let problem = ProblemDetails.decode(json)
            event = .timeout(
                JobFailure(
                    code: problem.code ?? "STREAM_TIMEOUT", message: problem.detail ?? problem.title, retryable: true))
        case "ping", "heartbeat", "keepalive", "keep-alive":
            event = .ping
        case "enrichment_degraded":
            event = .enrichmentDegraded(
                isbn: json["isbn"]?.stringValue, title: json["title"]?.stringValue,
                reason: json["reason"]?.stringValue, fallbackSource: json["fallbackSource"]?.stringValue)
        default:
            event = nil  // unknown events are ignored, never fatal
        }
        if let event, event.isTerminal {
            if terminalSeen {
                return Output(event: nil, warnings: warnings + [TalariaWarning("a second terminal event was ignored")])
            }
            terminalSeen = true
        }
        return Output(event: event, warnings: warnings)
    }

    /// Books under `books` or `results` (also inside `data`), or the event itself as one book.
    private func booksIn(_ json: JSONValue, singleBookAllowed: Bool) -> ([TalariaBook], [TalariaWarning]) {
        let container = json["data"]?.objectValue != nil ? json["data"]! : json
        if let list = container.first("books", "results") ?? json.first("books", "results") {
            guard let array = list.arrayValue else {
                if list.objectValue != nil { return TalariaBook.decodeList([list]) }
                return (
                    [], [TalariaWarning("a book list that is not an array was skipped: \(list.jsonText.prefix(80))")]
                )
            }
            return TalariaBook.decodeList(array)
        }
        if let book = container["book"], book.objectValue != nil { return TalariaBook.decodeList([book]) }
        // A bare book: it has a title or an ISBN. A status-only result (`{jobId, status, message}`) has none.
        if singleBookAllowed, container.first("title", "isbn", "isbn13") != nil {
            return TalariaBook.decodeList([container])
        }
        return ([], [])
    }
}
