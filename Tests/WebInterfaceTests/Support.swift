import Appliance
import Foundation
import Logging
import ServiceLifecycle
import Store
import Synchronization
import Testing

@testable import WebInterface

#if canImport(Glibc)
    import Glibc
#endif

/// A response as read off the wire.
struct HTTPResult: Sendable {
    var status: Int
    var headers: [(String, String)]
    var body: [UInt8]

    var text: String { String(decoding: body, as: UTF8.self) }
    func header(_ name: String) -> String? { headers.first { $0.0.lowercased() == name.lowercased() }?.1 }
}

/// A small HTTP/1.1 client over a blocking loopback socket on a thread of its own (never the cooperative pool):
/// one request per connection, read until the server closes.
enum RawHTTP {
    /// `source`: the loopback address to send from (127.0.0.2 is another client); `host`: the `Host` header.
    static func send(
        port: Int, method: String, path: String, headers: [(String, String)], body: [UInt8], source: String? = nil,
        host: String? = nil
    ) async throws
        -> HTTPResult
    {
        let raw = try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<[UInt8], any Error>) in
            let thread = Thread {
                continuation.resume(
                    with: Result {
                        try exchange(
                            port: port, method: method, path: path, headers: headers, body: body, source: source,
                            host: host)
                    })
            }
            thread.start()
        }
        return try parse(raw)
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// A connected loopback socket, bound to `source` when given.
    static func connectedSocket(port: Int, source: String? = nil) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket: errno \(errno)") }
        if let source {
            var local = sockaddr_in()
            local.sin_family = sa_family_t(AF_INET)
            local.sin_addr.s_addr = inet_addr(source)
            let bound = withUnsafePointer(to: &local) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            guard bound == 0 else {
                close(fd)
                throw Failure(description: "bind \(source): errno \(errno)")
            }
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            close(fd)
            throw Failure(description: "connect: errno \(errno)")
        }
        return fd
    }

    /// Sends all of `bytes`.
    static func sendAll(_ fd: Int32, _ bytes: [UInt8]) {
        var sent = 0
        while sent < bytes.count {
            let count = bytes[sent...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if count <= 0 { break }
            sent += count
        }
    }

    private static func exchange(
        port: Int, method: String, path: String, headers: [(String, String)], body: [UInt8], source: String?,
        host: String?
    ) throws -> [UInt8] {
        let fd = try connectedSocket(port: port, source: source)
        defer { close(fd) }
        var timeout = timeval(tv_sec: 30, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var head = "\(method) \(path) HTTP/1.1\r\nHost: \(host ?? "127.0.0.1:\(port)")\r\nConnection: close\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        if method == "POST" { head += "Content-Length: \(body.count)\r\n" }
        head += "\r\n"
        sendAll(fd, Array(head.utf8) + body)
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count <= 0 { break }
            received += buffer[0..<count]
        }
        return received
    }

    static func parse(_ raw: [UInt8]) throws -> HTTPResult {
        guard let headEnd = raw.firstRange(of: Array("\r\n\r\n".utf8)) else {
            throw Failure(description: "no response head in \(raw.count) bytes")
        }
        var lines = String(decoding: raw[..<headEnd.lowerBound], as: UTF8.self).components(separatedBy: "\r\n")
        let statusLine = lines.removeFirst().split(separator: " ")
        guard statusLine.count >= 2, let status = Int(statusLine[1]) else {
            throw Failure(description: "bad status line")
        }
        let headers: [(String, String)] = lines.compactMap { line in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
        var result = HTTPResult(status: status, headers: headers, body: [])
        let rest = Array(raw[headEnd.upperBound...])
        if result.header("transfer-encoding")?.lowercased() == "chunked" {
            var index = 0
            while let lineEnd = rest[index...].firstRange(of: Array("\r\n".utf8)),
                let size = Int(String(decoding: rest[index..<lineEnd.lowerBound], as: UTF8.self), radix: 16), size > 0
            {
                let start = lineEnd.upperBound
                result.body += rest[start..<min(start + size, rest.count)]
                index = start + size + 2
                if index >= rest.count { break }
            }
        } else {
            result.body = rest
        }
        return result
    }
}

/// A clock the tests move by hand.
final class TestClock: Sendable {
    private let current = Mutex(Date(timeIntervalSince1970: 1_800_000_000))

    var now: Date { current.withLock { $0 } }
    func advance(_ seconds: TimeInterval) { current.withLock { $0 = $0.addingTimeInterval(seconds) } }
    var webClock: WebClock { WebClock { self.now } }
}

/// A device as the web process finds it: a state directory with the daemon's migrated database (a real SQLite
/// file, held open by a writer as the daemon holds it), optionally a control socket answered by `daemon`, and
/// `swiftwing-web` serving on a free loopback port.
struct WebDevice: Sendable {
    let app: WebApp
    let port: Int
    let configuration: ApplianceConfiguration
    let database: AppDatabase
    let clock: TestClock

    func request(_ method: String, _ path: String, headers: [(String, String)] = [], body: [UInt8] = []) async throws
        -> HTTPResult
    {
        try await RawHTTP.send(port: port, method: method, path: path, headers: headers, body: body)
    }

    func get(_ path: String, cookie: String? = nil) async throws -> HTTPResult {
        try await request("GET", path, headers: cookie.map { [("Cookie", $0)] } ?? [])
    }

    /// Posts a form; `fields` are encoded as a browser encodes them. `source`: another loopback address to send from.
    func post(_ path: String, _ fields: [(String, String)], cookie: String? = nil, source: String? = nil) async throws
        -> HTTPResult
    {
        let body = fields.map { FormFields.encode($0.0) + "=" + FormFields.encode($0.1) }.joined(separator: "&")
        var headers = [("Content-Type", "application/x-www-form-urlencoded")]
        if let cookie { headers.append(("Cookie", cookie)) }
        return try await RawHTTP.send(
            port: port, method: "POST", path: path, headers: headers, body: Array(body.utf8), source: source)
    }

    /// Pairs as a person would: a code from `swiftwing web pair`'s code, entered on the page. Returns the cookie
    /// and the CSRF token the pages carry.
    func pair() async throws -> (cookie: String, csrf: String) {
        let printed = try WebPairing.pair(configuration: configuration, now: clock.now)
        let code = try #require(printed.split(separator: " ").dropFirst().first.map(String.init))
        let answer = try await post("/pair", [("code", code)])
        #expect(answer.status == 303, "\(answer.text)")
        let setCookie = try #require(answer.header("Set-Cookie"))
        let cookie = String(try #require(setCookie.split(separator: ";").first))
        let page = try await get("/", cookie: cookie)
        #expect(page.status == 200)
        return (cookie, try #require(csrf(in: page.text)))
    }

    func csrf(in html: String) -> String? {
        guard let range = html.range(of: "name=\"csrf\" value=\"") else { return nil }
        return String(html[range.upperBound...].prefix { $0 != "\"" })
    }
}

/// A temporary directory removed afterwards; short, as a Unix socket path inside it must fit 107 bytes.
func withTemporaryDirectory<T>(_ body: (String) async throws -> T) async throws -> T {
    var template = Array("/tmp/sw-web-XXXXXX".utf8CString)
    let path = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)) }
    defer { try? FileManager.default.removeItem(atPath: path) }
    return try await body(path)
}

/// Runs `body` against a live `swiftwing-web` on a free loopback port over a fresh state directory.
func withWebDevice(
    books: [BookRecord] = [], daemon: ControlSocketServer.Handler? = nil, logger given: Logger? = nil,
    bookSearch: (any BookSearching)? = nil,
    _ configure: (inout WebSettings) -> Void = { _ in }, _ body: (WebDevice) async throws -> Void
) async throws {
    try await withTemporaryDirectory { directory in
        let state = StateDirectory(path: directory + "/state")
        try state.create()
        let database = try AppDatabase.open(state)
        for book in books { try database.library.insert(book) }
        var configuration = ApplianceConfiguration()
        configuration.stateDirectory = state.path
        configuration.controlSocket = directory + "/control.sock"
        configuration.web.enabled = true
        configuration.web.address = "127.0.0.1"
        configuration.web.port = 0
        var logger = given ?? Logger(label: "swiftwing-web-test")
        if given == nil { logger.logLevel = .critical }
        var socket: ControlSocketServer?
        if let daemon {
            let server = try ControlSocketServer(path: configuration.controlSocket, logger: logger, handler: daemon)
            Thread { server.serve() }.start()
            socket = server
        }
        defer { socket?.stop() }
        var settings = WebSettings(configuration: configuration)
        settings.statusIntervalMilliseconds = 50
        configure(&settings)
        let clock = TestClock()
        let web = try WebApp(
            settings: settings, clock: clock.webClock, logger: logger,
            bookSearch: bookSearch ?? RecognizerBookSearch(backendURL: settings.configuration.backend.url))
        let (ports, continuation) = AsyncStream.makeStream(of: Int.self)
        let app = web.makeApplication { port in continuation.yield(port) }
        let services = ServiceGroup(configuration: .init(services: [app], logger: logger))
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await services.run() }
            var iterator = ports.makeAsyncIterator()
            let port = try #require(await iterator.next())
            do {
                try await body(
                    WebDevice(app: web, port: port, configuration: configuration, database: database, clock: clock))
            } catch {
                await services.triggerGracefulShutdown()
                throw error
            }
            await services.triggerGracefulShutdown()
            try await group.waitForAll()
        }
    }
}

/// What mustache makes of a text in a page.
func htmlEscaped(_ text: String) -> String {
    text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
        .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
        .replacingOccurrences(of: "'", with: "&#39;")
}
