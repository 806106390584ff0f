import Foundation

/// A job's state as the server reports it (§4), aliases folded.
public enum JobStatus: Hashable, Sendable, CustomStringConvertible {
    case queued
    case processing
    case completed
    case failed
    case canceled
    /// A value this client does not know; treated as still running.
    case other(String)

    public init(tolerating raw: String?) {
        switch raw?.lowercased().trimmed {
        case "queued", "initialized", "initialised", "pending", "accepted", "created": self = .queued
        case "processing", "running", "analyzing", "analysing", "in_progress", "started", "enriching":
            self = .processing
        case "completed", "complete", "done", "succeeded", "success", "finished": self = .completed
        case "failed", "failure", "error": self = .failed
        case "canceled", "cancelled": self = .canceled
        case let other?: self = .other(other)
        case nil: self = .other("")
        }
    }

    /// `completed`, `failed` or `canceled`: the job will not change any more.
    public var isTerminal: Bool {
        switch self {
        case .completed, .failed, .canceled: true
        default: false
        }
    }

    public var description: String {
        switch self {
        case .queued: "queued"
        case .processing: "processing"
        case .completed: "completed"
        case .failed: "failed"
        case .canceled: "canceled"
        case .other(let raw): raw.isEmpty ? "unknown" : raw
        }
    }
}

/// A URL the server gave (absolute, or relative to the base: `/v3/jobs/…/stream`), judged by the rule
/// for every URL the device follows (docs/protocol.md §1): `https`, or `http` to a loopback host, as
/// `backend.url` itself must be.
public enum ServerURL: Hashable, Sendable {
    /// None given: an empty value, or one that does not parse as a URL.
    case absent
    case accepted(URL)
    /// Given, but another scheme or plain `http` to a host that is not loopback: the job is not followed there.
    case refused(field: String, url: String)

    public init(_ raw: String?, field: String, base: URL) {
        guard let raw = raw?.trimmed, !raw.isEmpty, let url = URL(string: raw, relativeTo: base)?.absoluteURL else {
            self = .absent
            return
        }
        self = TalariaEndpoints.allowsPlainHTTP(url) ? .accepted(url) : .refused(field: field, url: url.absoluteString)
    }

    public var url: URL? {
        if case .accepted(let url) = self { return url }
        return nil
    }

    /// Why a refused URL is not followed, for the scan's reason; `nil` unless refused.
    public var refusal: String? {
        guard case .refused(let field, let url) = self else { return nil }
        return "the backend named \(field) \"\(url.prefix(200))\", which is neither https nor http to a loopback "
            + "address; the device follows no other URL (docs/protocol.md §1): fix the backend, then "
            + "`swiftwing queue retry`"
    }
}

/// Resolves a URL the server gave; `nil` when it is absent or refused (``ServerURL``).
public func resolveTalariaURL(_ raw: String?, base: URL) -> URL? {
    ServerURL(raw, field: "a URL", base: base).url
}

/// A job id is one path segment of the job's URLs (docs/protocol.md §1). `nil` when `jobID` is one;
/// else why not: an id holding `/` or `\`, `.` or `..`, a percent-encoded separator or dot, or a
/// control character would aim the status, results and cleanup requests at another path.
public func jobIDProblem(_ jobID: String) -> String? {
    guard !jobID.isEmpty else { return "it is empty" }
    guard jobID.utf8.count <= 256 else { return "it is longer than 256 bytes" }
    var text = jobID
    // Every layer of percent-encoding a server might decode: "%252F" is a "/" to one that decodes twice.
    for _ in 0..<4 {
        if text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
            return "it holds a control character"
        }
        if text.contains("/") || text.contains("\\") { return "it holds a path separator" }
        if text == "." || text == ".." { return "it is a relative path segment" }
        let upper = text.uppercased()
        if upper.contains("%2F") || upper.contains("%5C") { return "it holds a percent-encoded path separator" }
        if upper.contains("%2E") { return "it holds a percent-encoded dot" }
        guard let decoded = text.removingPercentEncoding, decoded != text else { break }
        text = decoded
    }
    return nil
}

// MARK: - Upload (§1)

/// What a 202 (or 200) to `POST /v3/jobs/scans` told us. Persist it before opening the stream.
public struct UploadAccepted: Hashable, Sendable {
    public var jobID: String
    public var status: JobStatus?
    /// The SSE stream, or `nil` when the server gave none: poll ``statusURL`` then.
    public var streamURL: URL?
    /// The job's bearer token for the stream (`authToken` or `token`; may be `nil`).
    public var streamToken: String?
    /// The job's status URL (given, or `{base}/v3/jobs/scans/{jobID}`).
    public var statusURL: URL
    /// `{base}/v3/jobs/scans/{jobID}/results` unless the server gave one.
    public var resultsURL: URL
    public var cancelURL: URL?
    public var requestID: String?
    /// Why the job cannot be followed: the server named a URL the device does not follow
    /// (``ServerURL/refused(field:url:)``). The scan fails with this reason; `nil` when all is well.
    public var refusal: String?

    /// No stream: the job is followed by polling its status (≤ 1 request / 2 s).
    public var needsPolling: Bool { streamURL == nil }

    /// Reads the upload response body. Every `data` shape of docs/protocol.md §1 is accepted, and a body
    /// without the `{success, data}` envelope too; `_links.stream` is used when `data` has no
    /// stream URL. Throws when the body is not JSON or carries no job id.
    public static func decode(_ body: some Collection<UInt8>, base: URL) throws(TalariaDecodingError) -> UploadAccepted
    {
        let what = "the upload response"
        let endpoints = TalariaEndpoints(base: base)
        let base = endpoints.base
        let json = try JSONValue.parse(body, what: what)
        let data = json["data"].flatMap { $0.objectValue == nil ? nil : $0 } ?? json
        guard let jobID = data.first("jobId", "jobID", "job_id", "id")?.stringValue, !jobID.isEmpty else {
            throw .missingField(what: what, field: "data.jobId", prefix: TalariaDecodingError.quotedPrefix(of: body))
        }
        if let problem = jobIDProblem(jobID) {
            throw .invalidField(
                what: what, field: "data.jobId", reason: "\(problem), so it is not one path segment",
                prefix: TalariaDecodingError.quotedPrefix(of: body))
        }
        let links = json["_links"]
        func link(_ name: String) -> String? {
            // `_links.stream` may be a string or a HAL object `{href}`.
            links?[name]?.stringValue ?? links?[name]?["href"]?.stringValue
        }
        func given(_ field: String, _ keys: String...) -> ServerURL {
            for key in keys {
                if let raw = data[key]?.stringValue {
                    let url = ServerURL(raw, field: "\(field == "_links" ? "" : "data.")\(key)", base: base)
                    if url != .absent { return url }
                }
            }
            return .absent
        }
        var stream = given("data", "sseUrl", "streamUrl", "stream_url", "sse_url")
        if stream == .absent { stream = ServerURL(link("stream"), field: "_links.stream", base: base) }
        let status = given("data", "statusUrl", "status_url")
        let results = given("data", "resultsUrl", "results_url")
        let cancel = ServerURL(link("cancel"), field: "_links.cancel", base: base)
        return UploadAccepted(
            jobID: jobID,
            status: data["status"]?.stringValue.map { JobStatus(tolerating: $0) },
            streamURL: stream.url,
            streamToken: data.first("authToken", "token", "streamToken")?.stringValue,
            statusURL: status.url ?? endpoints.job(jobID),
            resultsURL: results.url ?? endpoints.results(jobID),
            cancelURL: cancel.url,
            requestID: json["metadata"]?["requestId"]?.stringValue,
            refusal: [stream, status, results, cancel].lazy.compactMap(\.refusal).first)
    }
}

// MARK: - Errors (§1)

/// An error body: RFC 9457 problem details, plain `application/json` errors, the non-RFC 429
/// `{error, code, details: {retryAfter}}`, or not JSON at all. Every field is optional.
public struct ProblemDetails: Hashable, Sendable, CustomStringConvertible {
    public var type: String?
    public var title: String?
    public var status: Int?
    public var detail: String?
    public var instance: String?
    /// `INVALID_FILE`, `FILE_TOO_LARGE`, `RATE_LIMIT_EXCEEDED`, …
    public var code: String?
    public var retryable: Bool?
    /// Body `retryAfterMs`.
    public var retryAfterMilliseconds: Double?
    /// Non-RFC `details.retryAfter` (or a top-level `retryAfter`), in seconds.
    public var retryAfterSeconds: Double?
    /// `errors[]`, each as a readable line.
    public var errors: [String]
    /// The start of a body that was not JSON (an HTML error page), quoted.
    public var unreadableBody: String?

    public init(
        type: String? = nil, title: String? = nil, status: Int? = nil, detail: String? = nil,
        instance: String? = nil, code: String? = nil, retryable: Bool? = nil, retryAfterMilliseconds: Double? = nil,
        retryAfterSeconds: Double? = nil, errors: [String] = [], unreadableBody: String? = nil
    ) {
        self.type = type
        self.title = title
        self.status = status
        self.detail = detail
        self.instance = instance
        self.code = code
        self.retryable = retryable
        self.retryAfterMilliseconds = retryAfterMilliseconds
        self.retryAfterSeconds = retryAfterSeconds
        self.errors = errors
        self.unreadableBody = unreadableBody
    }

    /// Reads any error body; never fails (a body that is not JSON is kept as ``unreadableBody``).
    public static func decode(_ body: some Collection<UInt8>) -> ProblemDetails {
        guard !body.isEmpty else { return ProblemDetails() }
        let json: JSONValue
        do {
            json = try JSONValue.parse(body, what: "the error body")
        } catch {
            return ProblemDetails(unreadableBody: TalariaDecodingError.quotedPrefix(of: body))
        }
        return decode(json)
    }

    /// Reads an error object (also the `error` of an SSE `failed` event).
    public static func decode(_ json: JSONValue) -> ProblemDetails {
        var problem = ProblemDetails()
        if case .string(let text) = json {
            problem.detail = text
            return problem
        }
        // `{error: {code, message}}` or `{error: "…"}` or the fields at the top.
        let inner = json["error"]?.objectValue != nil ? json["error"]! : json
        problem.type = json["type"]?.stringValue
        problem.title = json["title"]?.stringValue ?? json["error"]?.stringValue
        problem.status = json["status"]?.intValue
        problem.detail = inner.first("detail", "message")?.stringValue ?? json.first("detail", "message")?.stringValue
        problem.instance = json["instance"]?.stringValue
        problem.code = inner["code"]?.stringValue ?? json["code"]?.stringValue
        problem.retryable = inner["retryable"]?.boolValue ?? json["retryable"]?.boolValue
        problem.retryAfterMilliseconds = inner["retryAfterMs"]?.doubleValue ?? json["retryAfterMs"]?.doubleValue
        problem.retryAfterSeconds =
            json["details"]?["retryAfter"]?.doubleValue ?? inner["retryAfter"]?.doubleValue
            ?? json["retryAfter"]?.doubleValue
        if let list = json["errors"]?.arrayValue {
            problem.errors = list.map { item in
                if let text = item.stringValue { return text }
                let field = item.first("field", "path", "pointer")?.stringValue
                let message = item.first("message", "detail")?.stringValue ?? item.jsonText
                return field.map { "\($0): \(message)" } ?? message
            }
        }
        return problem
    }

    /// The server's reason in one line: "FILE_TOO_LARGE: Image exceeds 10 MB".
    public var reason: String {
        var parts: [String] = []
        if let code { parts.append(code) }
        if let text = detail ?? title { parts.append(text) }
        var line = parts.joined(separator: ": ")
        if !errors.isEmpty {
            line += (line.isEmpty ? "" : " (") + errors.joined(separator: "; ") + (line.isEmpty ? "" : ")")
        }
        if line.isEmpty, let unreadableBody { line = "a body that is not JSON: \(unreadableBody)" }
        return line.isEmpty ? "no reason given" : line
    }

    public var description: String { reason }
}

/// An HTTP response's header fields, looked up case-insensitively (names as received).
public struct HTTPFields: Hashable, Sendable, ExpressibleByDictionaryLiteral {
    public var fields: [(name: String, value: String)] {
        get { storage.map { ($0.name, $0.value) } }
        set { storage = newValue.map { Field(name: $0.name, value: $0.value) } }
    }

    private struct Field: Hashable, Sendable {
        var name: String
        var value: String
    }

    private var storage: [Field]

    public init(_ fields: [(name: String, value: String)] = []) {
        storage = fields.map { Field(name: $0.name, value: $0.value) }
    }

    public init(dictionaryLiteral elements: (String, String)...) {
        storage = elements.map { Field(name: $0.0, value: $0.1) }
    }

    /// The first value of `name` (any case), trimmed.
    public subscript(name: String) -> String? {
        storage.first { Self.sameName($0.name, name) }?.value
            .trimmed
    }

    /// Field names are ASCII tokens (RFC 9110 §5.1): compared byte by byte, ASCII letters folded.
    static func sameName(_ a: String, _ b: String) -> Bool {
        a.utf8.elementsEqual(b.utf8) { x, y in x == y || (x | 0x20 == y | 0x20 && (x | 0x20) &- 0x61 < 26) }
    }

    public mutating func append(name: String, value: String) {
        storage.append(Field(name: name, value: value))
    }
}

/// When a rate-limited client may send again (docs/protocol.md §1, 429).
public enum RetryAfter {
    /// The wait when the server says nothing usable.
    public static let defaultDelay: TimeInterval = 60
    /// A longer wait is treated as a mistake (a year-2100 date must not stop a kiosk for good).
    public static let maximumDelay: TimeInterval = 24 * 60 * 60

    /// The latest of: body `retryAfterMs` (or non-RFC `details.retryAfter` seconds), the
    /// `Retry-After` header (delay-seconds or an HTTP date), `X-RateLimit-Reset` (epoch ms; epoch
    /// seconds and small delta-seconds values are recognised too). ``defaultDelay`` after `now`
    /// when none is usable; never more than ``maximumDelay`` after `now`.
    public static func resumeInstant(problem: ProblemDetails?, headers: HTTPFields, now: Date) -> Date {
        var candidates: [Date] = []
        if let ms = problem?.retryAfterMilliseconds, ms.isFinite, ms >= 0 {
            candidates.append(now.addingTimeInterval(ms / 1000))
        }
        if let seconds = problem?.retryAfterSeconds, seconds.isFinite, seconds >= 0 {
            candidates.append(now.addingTimeInterval(seconds))
        }
        if let header = headers["Retry-After"] {
            if let seconds = Double(header), seconds.isFinite, seconds >= 0 {
                candidates.append(now.addingTimeInterval(seconds))
            } else if let date = HTTPDate.parse(header) {
                candidates.append(date)
            }
        }
        if let header = headers["X-RateLimit-Reset"], let value = Double(header), value.isFinite, value >= 0 {
            if value >= 100_000_000_000 {
                candidates.append(Date(timeIntervalSince1970: value / 1000))  // epoch ms (docs/protocol.md §1)
            } else if value >= 1_000_000_000 {
                candidates.append(Date(timeIntervalSince1970: value))  // epoch seconds (GitHub style)
            } else {
                candidates.append(now.addingTimeInterval(value))  // seconds from now (IETF draft style)
            }
        }
        guard let latest = candidates.max() else { return now.addingTimeInterval(defaultDelay) }
        return min(max(latest, now), now.addingTimeInterval(maximumDelay))
    }
}

// MARK: - Status and results (§4)

/// `GET /v3/jobs/scans/{id}`.
public struct JobStatusResponse: Hashable, Sendable {
    public var jobID: String?
    public var status: JobStatus
    /// 0–1 (a 0–100 value is scaled).
    public var progress: Double?
    public var error: ProblemDetails?

    public static func decode(_ body: some Collection<UInt8>) throws(TalariaDecodingError) -> JobStatusResponse {
        let json = try JSONValue.parse(body, what: "the job status response")
        let data = json["data"].flatMap { $0.objectValue == nil ? nil : $0 } ?? json
        guard let raw = data["status"]?.stringValue else {
            throw .missingField(
                what: "the job status response", field: "data.status",
                prefix: TalariaDecodingError.quotedPrefix(of: body))
        }
        return JobStatusResponse(
            jobID: data.first("jobId", "id")?.stringValue, status: JobStatus(tolerating: raw),
            progress: normaliseProgress(data["progress"]?.doubleValue),
            error: data["error"].flatMap { $0.isNull ? nil : ProblemDetails.decode($0) })
    }
}

/// `GET /v3/jobs/scans/{id}/results`.
public struct JobResultsResponse: Hashable, Sendable {
    public var jobID: String?
    public var status: JobStatus
    public var books: [TalariaBook]
    /// Books that were skipped, ISBNs that failed their checksum.
    public var warnings: [TalariaWarning]
    /// `data.unmatched` (docs/protocol.md §6): spines read but not identified; empty when the backend sends none.
    public var spines: [TalariaSpine] = []

    public static func decode(_ body: some Collection<UInt8>) throws(TalariaDecodingError) -> JobResultsResponse {
        let json = try JSONValue.parse(body, what: "the job results response")
        let data = json["data"].flatMap { $0.objectValue == nil && $0.arrayValue == nil ? nil : $0 } ?? json
        let list = data.arrayValue ?? data.first("results", "books")?.arrayValue ?? []
        let (books, warnings) = TalariaBook.decodeList(list)
        let (spines, spineWarnings) = TalariaSpine.decodeList(data.arrayValue == nil ? data["unmatched"] : nil)
        return JobResultsResponse(
            jobID: data.first("jobId", "id")?.stringValue,
            status: data["status"]?.stringValue.map { JobStatus(tolerating: $0) } ?? .completed,
            books: books, warnings: warnings + spineWarnings, spines: spines)
    }
}

/// 0–1 as is; (1, 100] read as a percentage; anything else `nil`. Exactly 1 is 100 %.
func normaliseProgress(_ value: Double?) -> Double? {
    guard let value, value.isFinite, value >= 0 else { return nil }
    if value <= 1 { return value }
    if value <= 100 { return value / 100 }
    return nil
}
