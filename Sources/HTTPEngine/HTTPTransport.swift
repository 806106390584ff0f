import Foundation

/// One header line. Order and repeats are kept as the wire had them.
public struct HTTPHeader: Hashable, Sendable {
    public var name: String
    public var value: String

    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }
}

/// How long a transfer may take before it is abandoned as `HTTPError.timedOut`.
public struct HTTPTimeouts: Hashable, Sendable {
    /// TCP + TLS handshake.
    public var connect: Duration
    /// The whole transfer; `nil` for streams that are meant to stay open.
    public var total: Duration?
    /// Abort when less than one byte arrives for this long (a stalled upload or a silent stream).
    public var stall: Duration?

    public init(connect: Duration = .seconds(10), total: Duration? = .seconds(60), stall: Duration? = .seconds(30)) {
        self.connect = connect
        self.total = total
        self.stall = stall
    }

    /// For a progress stream: no total limit; a stream quiet for longer than the server's 30 s
    /// pings (plus slack) is treated as dropped.
    public static let eventStream = HTTPTimeouts(connect: .seconds(10), total: nil, stall: .seconds(75))
}

/// A file sent between two pieces held in memory, read in chunks while curl sends it (a photo in
/// its multipart envelope): the file is never loaded whole. The transfer opens it when it starts and
/// announces prefix + the file's size then + suffix as the body's length.
public struct HTTPFileBody: Hashable, Sendable {
    /// Sent before the file.
    public var prefix: [UInt8]
    /// The file's absolute path.
    public var path: String
    /// Sent after the file.
    public var suffix: [UInt8]

    public init(prefix: [UInt8] = [], path: String, suffix: [UInt8] = []) {
        self.prefix = prefix
        self.path = path
        self.suffix = suffix
    }
}

/// What a request sends after its head.
public enum HTTPRequestBody: Hashable, Sendable {
    /// Bytes in memory; empty for no body.
    case bytes([UInt8])
    /// A file streamed from disk between in-memory pieces.
    case file(HTTPFileBody)

    /// True for no body at all (a file body always counts, even an empty file).
    public var isEmpty: Bool {
        if case .bytes(let bytes) = self { return bytes.isEmpty }
        return false
    }
}

public struct HTTPRequest: Sendable {
    public enum Method: String, Hashable, Sendable {
        case get = "GET"
        case post = "POST"
        case delete = "DELETE"
    }

    public var method: Method
    public var url: URL
    public var headers: [HTTPHeader]
    public var body: HTTPRequestBody
    public var timeouts: HTTPTimeouts

    public init(
        method: Method, url: URL, headers: [HTTPHeader] = [], body: [UInt8] = [],
        timeouts: HTTPTimeouts = HTTPTimeouts()
    ) {
        self.init(method: method, url: url, headers: headers, body: .bytes(body), timeouts: timeouts)
    }

    public init(
        method: Method, url: URL, headers: [HTTPHeader] = [], body: HTTPRequestBody,
        timeouts: HTTPTimeouts = HTTPTimeouts()
    ) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.timeouts = timeouts
    }

    /// Header names whose values are secrets: never logged, never in an error.
    public static let secretHeaderNames: Set<String> = ["authorization", "proxy-authorization", "cookie"]

    /// The headers with secret values replaced by `<redacted>`, for logs.
    public var redactedHeaders: [HTTPHeader] {
        headers.map {
            HTTPRequest.secretHeaderNames.contains($0.name.lowercased())
                ? HTTPHeader(name: $0.name, value: "<redacted>") : $0
        }
    }
}

// swift-format-ignore: AlwaysUseLowerCamelCase
// The cases are named as the protocol versions are written.
public enum HTTPVersion: String, Hashable, Sendable {
    case http1_0 = "HTTP/1.0"
    case http1_1 = "HTTP/1.1"
    case http2 = "HTTP/2"
    case http3 = "HTTP/3"
    case unknown = "HTTP/?"
}

/// A status line and headers, as received.
public struct HTTPResponseHead: Hashable, Sendable {
    public var status: Int
    public var headers: [HTTPHeader]
    public var version: HTTPVersion

    public init(status: Int, headers: [HTTPHeader], version: HTTPVersion) {
        self.status = status
        self.headers = headers
        self.version = version
    }

    /// The first header of that name (case-insensitive), if any.
    public func header(_ name: String) -> String? {
        let wanted = name.lowercased()
        return headers.first { $0.name.lowercased() == wanted }?.value
    }
}

/// A whole response, body buffered (bounded by the engine's `maximumBodyBytes`).
public struct HTTPResponse: Hashable, Sendable {
    public var head: HTTPResponseHead
    public var body: [UInt8]

    public init(head: HTTPResponseHead, body: [UInt8]) {
        self.head = head
        self.body = body
    }

    public var status: Int { head.status }
    public func header(_ name: String) -> String? { head.header(name) }
}

/// What a streamed transfer delivers: the head once, then body bytes in whatever chunks arrived.
public enum HTTPStreamPart: Hashable, Sendable {
    case head(HTTPResponseHead)
    case body([UInt8])
}

/// Why a transfer did not produce a complete response. Texts read like advice and never contain
/// secrets (no header values, no URL query strings).
public enum HTTPError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The URL is malformed or not http(s).
    case invalidURL(String)
    /// Plain `http://` to a host that is not a loopback address (TLS is required off-box).
    case insecureURL(String)
    /// DNS, refused, unreachable, proxy failure: no connection was made.
    case couldNotConnect(host: String, detail: String)
    /// The certificate, host name or TLS version was refused, or the handshake failed.
    case tls(host: String, detail: String)
    /// A connect, total or stall timeout expired.
    case timedOut(detail: String)
    /// The connection dropped mid-request or mid-response (partial body, reset, HTTP/2 stream error).
    case connectionLost(detail: String)
    /// A buffered response body was larger than the engine accepts.
    case responseTooLarge(limit: Int)
    /// The caller cancelled (task cancellation or `cancel`).
    case cancelled
    /// The engine was shut down before or during the transfer.
    case engineStopped
    /// A file body could not be opened or read, or it shrank while being sent: the transfer was
    /// stopped rather than send a body shorter than announced.
    case requestBodyUnreadable(path: String, detail: String)
    /// Anything else curl reported: its error number and text.
    case other(code: Int, detail: String)

    /// True when trying again later may succeed (the network, the server or a timeout).
    public var isTransient: Bool {
        switch self {
        case .couldNotConnect, .timedOut, .connectionLost, .other: true
        case .invalidURL, .insecureURL, .tls, .responseTooLarge, .cancelled, .engineStopped, .requestBodyUnreadable:
            false
        }
    }

    public var description: String {
        switch self {
        case .invalidURL(let url): "\(url) is not a usable http(s) URL; fix backend.url in the configuration"
        case .insecureURL(let host):
            "plain http:// to \(host) is refused: only loopback addresses may skip TLS; use an https:// backend URL"
        case .couldNotConnect(let host, let detail): "could not connect to \(host) (\(detail))"
        case .tls(let host, let detail):
            "TLS with \(host) failed (\(detail)); check the device clock, the server's certificate, or backend.ca_file"
        case .timedOut(let detail): "timed out (\(detail))"
        case .connectionLost(let detail): "the connection dropped (\(detail))"
        case .responseTooLarge(let limit): "the response was larger than \(limit) bytes and was refused"
        case .cancelled: "cancelled"
        case .engineStopped: "the HTTP engine has stopped"
        case .requestBodyUnreadable(let path, let detail):
            "\(path) could not be read whole to be sent (\(detail)); the transfer stopped rather than send a short body"
        case .other(let code, let detail): "curl error \(code) (\(detail))"
        }
    }
}

/// What the uplink needs of an HTTP client. ``CurlEngine`` is the real one; tests of logic use an
/// in-memory double that implements this same protocol.
public protocol HTTPTransport: Sendable {
    /// Performs `request` and returns the whole response (any status: a 4xx/5xx is a response, not
    /// an error). Task cancellation cancels the transfer and throws `.cancelled`.
    func send(_ request: HTTPRequest) async throws(HTTPError) -> HTTPResponse

    /// Starts `request` and delivers its head, then its body in chunks as they arrive. The stream
    /// finishes at the end of the body, or throws an ``HTTPError``. Ending iteration (or cancelling
    /// the iterating task) cancels the transfer promptly.
    func stream(_ request: HTTPRequest) -> AsyncThrowingStream<HTTPStreamPart, any Error>
}
