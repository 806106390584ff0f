import Foundation
import Hummingbird
import Logging
import ServiceLifecycle
import TalariaReferenceServer
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A response as read off the wire by `RawHTTP`.
struct HTTPResult: Sendable {
    var status: Int
    var headers: [(String, String)]
    var body: [UInt8]
    /// The whole body arrived (Content-Length satisfied, or the last chunk of a chunked body seen).
    var complete: Bool

    var text: String { String(decoding: body, as: UTF8.self) }
    func header(_ name: String) -> String? { headers.first { $0.0.lowercased() == name.lowercased() }?.1 }
    /// The body as a JSON object, nil when it is not one.
    var object: [String: Any]? { try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any] }
    func json() throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any], "not a JSON object: \(text)")
    }
}

enum RawHTTPError: Error {
    case connect(Int32)
    /// The connection closed (or failed) before any response byte: a dropped transfer.
    case noResponse
    case badResponse(String)
}

/// A deliberately small HTTP/1.1 client over a blocking socket on its own thread (never on the cooperative pool),
/// so tests see exactly what the server sent: broken transfers, unterminated chunked streams, raw SSE text.
/// (HummingbirdTesting is not used: its target links NIOSSL and AsyncHTTPClient, i.e. a BoringSSL build this
/// package avoids; and its `.router` mode has no connection to break.)
enum RawHTTP {
    static func send(
        port: Int, method: String, path: String, headers: [(String, String)] = [], body: [UInt8] = [],
        timeout: Double = 30
    ) async throws -> HTTPResult {
        let raw = try await onThread {
            try exchange(port: port, method: method, path: path, headers: headers, body: body, timeout: timeout)
        }
        return try parse(raw)
    }

    private static func onThread<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            let thread = Thread { continuation.resume(with: Result { try work() }) }
            thread.start()
        }
    }

    /// Sends the request, then reads until the server closes or `timeout` passes.
    private static func exchange(
        port: Int, method: String, path: String, headers: [(String, String)], body: [UInt8], timeout: Double
    ) throws -> [UInt8] {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw RawHTTPError.connect(errno) }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else { throw RawHTTPError.connect(errno) }
        var head = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        if !body.isEmpty || method == "POST" { head += "Content-Length: \(body.count)\r\n" }
        head += "\r\n"
        let request = Array(head.utf8) + body
        var sent = 0
        while sent < request.count {
            let n = request[sent...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n <= 0 { break }  // the server closed on us: read what (if anything) it said
            sent += n
        }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let remaining = deadline.timeIntervalSinceNow
            if remaining <= 0 { break }
            var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&pfd, 1, Int32(min(remaining, 1) * 1000))
            if ready < 0 { break }
            if ready == 0 { continue }
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n <= 0 { break }
            received += buffer[0..<n]
        }
        return received
    }

    static func parse(_ raw: [UInt8]) throws -> HTTPResult {
        guard !raw.isEmpty else { throw RawHTTPError.noResponse }
        let separator: [UInt8] = Array("\r\n\r\n".utf8)
        guard let headEnd = raw.firstRange(of: separator) else {
            throw RawHTTPError.badResponse(String(decoding: raw, as: UTF8.self))
        }
        let headText = String(decoding: raw[..<headEnd.lowerBound], as: UTF8.self)
        var lines = headText.components(separatedBy: "\r\n")
        let statusLine = lines.removeFirst().split(separator: " ")
        guard statusLine.count >= 2, let status = Int(statusLine[1]) else { throw RawHTTPError.badResponse(headText) }
        let headers: [(String, String)] = lines.compactMap { line in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
        var result = HTTPResult(status: status, headers: headers, body: [], complete: false)
        let rest = Array(raw[headEnd.upperBound...])
        if result.header("transfer-encoding")?.lowercased() == "chunked" {
            var i = 0
            while true {
                guard let lineEnd = rest[i...].firstRange(of: Array("\r\n".utf8)) else { break }
                let sizeText = String(decoding: rest[i..<lineEnd.lowerBound], as: UTF8.self)
                guard let size = Int(sizeText.split(separator: ";").first ?? "", radix: 16) else { break }
                let start = lineEnd.upperBound
                if size == 0 {
                    result.complete = true
                    break
                }
                let end = min(start + size, rest.count)
                result.body += rest[start..<end]
                if start + size + 2 > rest.count { break }
                i = start + size + 2
            }
        } else if let length = result.header("content-length").flatMap({ Int($0) }) {
            result.body = Array(rest.prefix(length))
            result.complete = rest.count >= length
        } else {
            result.body = rest
            result.complete = true
        }
        return result
    }
}

/// One SSE event as parsed by the tests (the server writes LF line ends only).
struct SSEEvent: Equatable {
    var id: String?
    var event: String?
    var data: String
    var json: [String: Any]? { try? JSONSerialization.jsonObject(with: Data(data.utf8)) as? [String: Any] }
    static func == (a: SSEEvent, b: SSEEvent) -> Bool { a.id == b.id && a.event == b.event && a.data == b.data }
}

func parseSSE(_ text: String) -> (comments: [String], retry: String?, events: [SSEEvent]) {
    var comments: [String] = []
    var retry: String?
    var events: [SSEEvent] = []
    for block in text.components(separatedBy: "\n\n") where !block.isEmpty {
        var event = SSEEvent(data: "")
        var dataLines: [String] = []
        var isEvent = false
        for line in block.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix(":") {
                comments.append(String(line.dropFirst()).trimmingCharacters(in: .whitespaces))
                continue
            }
            guard let colon = line.firstIndex(of: ":") else { continue }
            var value = String(line[line.index(after: colon)...])
            if value.hasPrefix(" ") { value.removeFirst() }
            switch line[..<colon] {
            case "id": event.id = value
            case "event": event.event = value
            case "data":
                dataLines.append(value)
                isEvent = true
            case "retry": retry = value
            default: break
            }
        }
        if isEvent {
            event.data = dataLines.joined(separator: "\n")
            events.append(event)
        }
    }
    return (comments, retry, events)
}

/// A minimal valid-looking JPEG (magic FF D8 FF E0, then `seed`).
func jpeg(_ seed: String) -> [UInt8] { [0xFF, 0xD8, 0xFF, 0xE0] + Array(seed.utf8) + [0xFF, 0xD9] }

/// A `multipart/form-data` body written here rather than by the server's parser library, as a client writes it.
func multipartBody(
    boundary: String, parts: [(name: String, filename: String?, contentType: String?, body: [UInt8])]
) -> [UInt8] {
    var out: [UInt8] = []
    for part in parts {
        var head = "--\(boundary)\r\nContent-Disposition: form-data; name=\"\(part.name)\""
        if let filename = part.filename { head += "; filename=\"\(filename)\"" }
        head += "\r\n"
        if let contentType = part.contentType { head += "Content-Type: \(contentType)\r\n" }
        out += Array((head + "\r\n").utf8) + part.body + Array("\r\n".utf8)
    }
    return out + Array("--\(boundary)--\r\n".utf8)
}

/// A running reference server on a free port, and helpers that speak to it.
struct TestServer: Sendable {
    let port: Int

    func request(
        _ method: String, _ path: String, headers: [(String, String)] = [], body: [UInt8] = [], timeout: Double = 30
    ) async throws -> HTTPResult {
        try await RawHTTP.send(port: port, method: method, path: path, headers: headers, body: body, timeout: timeout)
    }

    func upload(
        key: String? = "scan-1", device: String? = "device-1", image: [UInt8] = jpeg("spine"),
        partName: String = "photos[]",
        partType: String? = "image/jpeg", bearer: String? = nil, timeout: Double = 30
    ) async throws -> HTTPResult {
        let boundary = "----swiftwing\(UInt32.random(in: 0...UInt32.max))"
        let body = multipartBody(
            boundary: boundary, parts: [(name: partName, filename: "spine.jpg", contentType: partType, body: image)])
        return try await upload(
            contentType: "multipart/form-data; boundary=\(boundary)", body: body, key: key, device: device,
            bearer: bearer, timeout: timeout)
    }

    /// Posts `body` as an upload with this content type, whatever the body holds.
    func upload(
        contentType: String, body: [UInt8], key: String? = "scan-1", device: String? = "device-1",
        bearer: String? = nil,
        timeout: Double = 30
    ) async throws -> HTTPResult {
        var headers = [("Content-Type", contentType)]
        if let key { headers.append(("Idempotency-Key", key)) }
        if let device { headers.append(("X-Device-ID", device)) }
        if let bearer { headers.append(("Authorization", "Bearer \(bearer)")) }
        return try await request("POST", "/v3/jobs/scans", headers: headers, body: body, timeout: timeout)
    }

    /// Uploads and returns (jobId, stream path, token) from an sse-relative envelope.
    func createJob(key: String = "scan-1", image: [UInt8] = jpeg("spine")) async throws -> (
        id: String, stream: String, token: String
    ) {
        let response = try await upload(key: key, image: image)
        #expect(response.status == 202, "\(response.text)")
        let data = try #require(try response.json()["data"] as? [String: Any])
        return (
            try #require(data["jobId"] as? String), try #require(data["sseUrl"] as? String),
            try #require(data["authToken"] as? String)
        )
    }

    func stream(_ path: String, token: String, lastEventID: String? = nil, timeout: Double = 10) async throws
        -> HTTPResult
    {
        var headers = [("Accept", "text/event-stream"), ("Authorization", "Bearer \(token)")]
        if let lastEventID { headers.append(("Last-Event-ID", lastEventID)) }
        return try await request("GET", path, headers: headers, timeout: timeout)
    }

    func queueFaults(_ faults: [String]) async throws {
        let body = try JSONSerialization.data(withJSONObject: ["faults": faults])
        let response = try await request(
            "POST", "/_faults", headers: [("Content-Type", "application/json")], body: Array(body))
        #expect(response.status == 200, "\(response.text)")
    }

    func stats() async throws -> [String: Any] { try await request("GET", "/_stats").json() }

    /// Polls the job's status until it is finished.
    func waitFinished(_ id: String) async throws -> String {
        for _ in 0..<500 {
            let status = try await request("GET", "/v3/jobs/scans/\(id)")
            if status.status == 200, let data = try status.json()["data"] as? [String: Any],
                let s = data["status"] as? String,
                ["completed", "failed", "canceled"].contains(s)
            {
                return s
            }
            try await Task.sleep(for: .milliseconds(10))
        }
        Issue.record("job \(id) did not finish")
        return "timeout"
    }
}

/// Runs `body` against a live server (random port) with fast test timings, then stops the server.
func withServer(
    recognizer: any PhotoRecognizing = HashRecognizer(), clock: any Clock<Duration> = ContinuousClock(),
    _ configure: (inout ReferenceConfiguration) -> Void = { _ in }, _ body: (TestServer) async throws -> Void
) async throws {
    var configuration = ReferenceConfiguration()
    configuration.recognitionDelayMs = 60
    configuration.retryMs = 50
    configuration.pingIntervalMs = 2000
    configure(&configuration)
    var logger = Logger(label: "talaria-reference-test")
    logger.logLevel = .critical  // shutdown of deliberately broken connections logs errors
    let (ports, continuation) = AsyncStream.makeStream(of: Int.self)
    let state = ReferenceState(configuration: configuration, recognizer: recognizer, clock: clock)
    let app = ReferenceServer.makeApplication(configuration: configuration, state: state, logger: logger) { port in
        continuation.yield(port)
    }
    let services = ServiceGroup(configuration: .init(services: [app], logger: logger))
    try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask { try await services.run() }
        var iterator = ports.makeAsyncIterator()
        let port = try #require(await iterator.next())
        do {
            try await body(TestServer(port: port))
        } catch {
            await services.triggerGracefulShutdown()
            throw error
        }
        await services.triggerGracefulShutdown()
        try await group.waitForAll()
    }
}
