/// Faults the reference server can inject, per run (`--fault`) or per request (`POST /_faults`).
///
/// Spelled `KIND:NAME[:ARG]`, e.g. `upload:429-seconds`, `upload:429-ms:1500`, `stream:drop-after:2`,
/// `status:404`, `cleanup:slow:500`.

public enum RequestKind: String, Sendable, CaseIterable {
    case upload, stream, status, results, cleanup
    /// The book-catalogue lookups (Open Library's and Google Books' ISBN APIs).
    case catalog
}

public enum EnvelopeShape: String, Sendable, CaseIterable {
    /// `{jobId, sseUrl, authToken, statusUrl}` with absolute URLs.
    case sseAbsolute = "sse-absolute"
    /// `{jobId, sseUrl, authToken, statusUrl}` with URLs relative to the base.
    case sseRelative = "sse-relative"
    /// `{jobId, status: "queued", streamUrl, token}`.
    case streamToken = "stream-token"
    /// `{jobId, status}` only: no stream, the client polls.
    case statusOnly = "status-only"
}

public enum FaultAction: Sendable, Equatable {
    // any kind
    case slow(ms: Int)
    // upload
    case rateLimitMs(Int?)
    case rateLimitSeconds(Int?)
    case rateLimitDate(Int?)
    case rateLimitReset(Int?)
    case rateLimitLegacy(Int?)
    case http500
    case http503
    case http401
    case http413
    case invalidFile
    case html
    case drop
    case envelope(EnvelopeShape)
    case noStream
    // stream
    case dropAfter(Int)
    case malformed
    case duplicateTerminal
    case resultsKey
    case completeAlias
    case stripped
    case progress100
    case timeoutEvent
    case neverEnd
    case hugeLine
    case failed
    case failedRetryable
    case badISBN
    case wrongTypes
    // status, results, cleanup
    case http404
    // catalog
    case unknownBook
    case rateLimited(seconds: Int?)
}

public struct Fault: Sendable, Equatable, CustomStringConvertible {
    public let kind: RequestKind
    public let action: FaultAction
    public let spelling: String

    public var description: String { spelling }

    public init(kind: RequestKind, action: FaultAction, spelling: String) {
        self.kind = kind
        self.action = action
        self.spelling = spelling
    }

    public enum ParseError: Error, CustomStringConvertible {
        case invalid(String, String)
        public var description: String {
            switch self {
            case .invalid(let spelling, let why): "invalid fault '\(spelling)': \(why)"
            }
        }
    }

    /// Every fault name per kind, as accepted by `parse` (`N`/`MS` are integers, `[:N]` optional).
    public static let catalog: [RequestKind: [String]] = [
        .upload: [
            "429-ms[:MS]", "429-seconds[:N]", "429-date[:N]", "429-reset[:MS]", "429-legacy[:N]", "500", "503", "401",
            "413",
            "400-invalid-file", "html", "slow:MS", "drop",
            "envelope:" + EnvelopeShape.allCases.map(\.rawValue).joined(separator: "|"),
            "no-stream",
        ],
        .stream: [
            "drop-after:N", "malformed", "duplicate-terminal", "results-key", "complete-alias", "stripped",
            "progress-100",
            "timeout-event", "never-end", "huge-line", "failed", "failed-retryable", "bad-isbn",
            "wrong-types", "slow:MS", "429[:N]",
        ],
        .status: ["404", "500", "slow:MS"],
        .results: ["404", "500", "slow:MS"],
        .cleanup: ["404", "500", "slow:MS"],
        .catalog: ["429[:N]", "500", "503", "html", "malformed", "not-found", "drop", "slow:MS"],
    ]

    public static func parse(_ spelling: String) throws(ParseError) -> Fault {
        let pieces = spelling.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        guard pieces.count >= 2, let kind = RequestKind(rawValue: pieces[0]) else {
            throw .invalid(
                spelling,
                "expected KIND:NAME with KIND one of " + RequestKind.allCases.map(\.rawValue).joined(separator: ", "))
        }
        let name = pieces[1]
        let arg: String? = pieces.count > 2 ? pieces[2...].joined(separator: ":") : nil
        func int() throws(ParseError) -> Int {
            guard let arg, let n = Int(arg), n >= 0 else {
                throw .invalid(spelling, "\(name) needs a non-negative integer")
            }
            return n
        }
        func optionalInt() throws(ParseError) -> Int? { arg == nil ? nil : try int() }
        func none() throws(ParseError) {
            if arg != nil { throw .invalid(spelling, "\(name) takes no argument") }
        }
        let action: FaultAction
        switch (kind, name) {
        case (_, "slow"): action = .slow(ms: try int())
        case (.upload, "429-ms"): action = .rateLimitMs(try optionalInt())
        case (.upload, "429-seconds"): action = .rateLimitSeconds(try optionalInt())
        case (.upload, "429-date"): action = .rateLimitDate(try optionalInt())
        case (.upload, "429-reset"): action = .rateLimitReset(try optionalInt())
        case (.upload, "429-legacy"): action = .rateLimitLegacy(try optionalInt())
        case (.catalog, "429"): action = .rateLimited(seconds: try optionalInt())
        case (.catalog, "not-found"):
            try none()
            action = .unknownBook
        case (.catalog, "malformed"):
            try none()
            action = .malformed
        case (.upload, "500"), (.status, "500"), (.results, "500"), (.cleanup, "500"), (.catalog, "500"):
            try none()
            action = .http500
        case (.upload, "503"), (.catalog, "503"):
            try none()
            action = .http503
        case (.upload, "401"):
            try none()
            action = .http401
        case (.upload, "413"):
            try none()
            action = .http413
        case (.upload, "400-invalid-file"):
            try none()
            action = .invalidFile
        case (.upload, "html"), (.catalog, "html"):
            try none()
            action = .html
        case (.upload, "drop"), (.catalog, "drop"):
            try none()
            action = .drop
        case (.upload, "envelope"):
            guard let arg, let shape = EnvelopeShape(rawValue: arg) else {
                throw .invalid(
                    spelling, "envelope needs one of " + EnvelopeShape.allCases.map(\.rawValue).joined(separator: ", "))
            }
            action = .envelope(shape)
        case (.upload, "no-stream"):
            try none()
            action = .noStream
        case (.stream, "drop-after"): action = .dropAfter(try int())
        case (.stream, "429"): action = .rateLimited(seconds: try optionalInt())
        case (.stream, let simple):
            try none()
            switch simple {
            case "malformed": action = .malformed
            case "duplicate-terminal": action = .duplicateTerminal
            case "results-key": action = .resultsKey
            case "complete-alias": action = .completeAlias
            case "stripped": action = .stripped
            case "progress-100": action = .progress100
            case "timeout-event": action = .timeoutEvent
            case "never-end": action = .neverEnd
            case "huge-line": action = .hugeLine
            case "failed": action = .failed
            case "failed-retryable": action = .failedRetryable
            case "bad-isbn": action = .badISBN
            case "wrong-types": action = .wrongTypes
            default:
                throw .invalid(
                    spelling, "unknown stream fault; known: " + (catalog[.stream] ?? []).joined(separator: ", "))
            }
        case (.status, "404"), (.results, "404"), (.cleanup, "404"):
            try none()
            action = .http404
        default:
            throw .invalid(
                spelling, "unknown \(kind.rawValue) fault; known: " + (catalog[kind] ?? []).joined(separator: ", "))
        }
        return Fault(kind: kind, action: action, spelling: spelling)
    }
}
