import Foundation
import SwiftWingTesting
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// What the test server read from one request, byte for byte.
struct RecordedRequest: Sendable {
    var method: String
    var target: String
    var headers: [(name: String, value: String)]
    var body: [UInt8]

    func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }
}

/// A scripted HTTP/1.1 server on 127.0.0.1 (port chosen by the kernel): one plain thread per
/// connection runs `script`, which decides what goes on the wire, byte by byte and pause by pause.
/// Every connection closes after its script returns.
final class LoopbackServer: Sendable {
    typealias Script = @Sendable (ServerConnection, RecordedRequest) -> Void

    let port: Int
    private let listener: Int32
    private let script: Script
    private let recorded = Mutex<[RecordedRequest]>([])
    private let peerCloses = Mutex<[ContinuousClock.Instant]>([])
    let stopped = Atomic<Bool>(false)

    var requests: [RecordedRequest] { recorded.withLock { $0 } }
    /// When the server noticed a client closing its connection (in `ServerConnection.write`/`wait`).
    var peerCloseTimes: [ContinuousClock.Instant] { peerCloses.withLock { $0 } }

    /// Whether a request's body is read before the script runs (false: a script can drop the
    /// connection while the client is still sending).
    private let readsBodies: Bool

    init(readsBodies: Bool = true, _ script: @escaping Script) throws {
        let (fd, port) = try LoopbackSocket.listen(reuseAddress: true)
        self.port = port
        listener = fd
        self.script = script
        self.readsBodies = readsBodies
        let thread = Thread { [self] in acceptLoop() }
        thread.start()
    }

    deinit { stop() }

    /// Stops accepting; running scripts see `wait` return false. Idempotent.
    func stop() {
        guard !stopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }

    var url: String { "http://127.0.0.1:\(port)" }

    private func acceptLoop() {
        while !stopped.load(ordering: .acquiring) {
            let client = accept(listener, nil, nil)
            if client < 0 {
                if errno == EINTR { continue }
                return
            }
            let connection = ServerConnection(fd: client, server: self)
            let thread = Thread { [self] in
                defer { connection.close() }
                guard let request = connection.readRequest(body: readsBodies) else { return }
                recorded.withLock { $0.append(request) }
                script(connection, request)
            }
            thread.start()
        }
    }

    fileprivate func notePeerClosed() {
        peerCloses.withLock { $0.append(.now) }
    }
}

/// POLLRDHUP (peer shut down its side); Glibc hides it behind _GNU_SOURCE.
private let pollReadHangUp: Int16 = 0x2000

/// One accepted connection, for a script.
final class ServerConnection: @unchecked Sendable {
    private let fd: Int32
    private let server: LoopbackServer
    private var closed = false
    private var peerGone = false

    fileprivate init(fd: Int32, server: LoopbackServer) {
        self.fd = fd
        self.server = server
    }

    /// Reads one request head and its Content-Length body; nil if the client closed first.
    fileprivate func readRequest(body readsBody: Bool) -> RecordedRequest? {
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        let separator: [UInt8] = Array("\r\n\r\n".utf8)
        var headEnd: Int?
        while headEnd == nil {
            let count = recv(fd, &buffer, buffer.count, 0)
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return nil }
            bytes += buffer[0..<count]
            if bytes.count >= 4 {
                headEnd = (0...(bytes.count - 4)).first { bytes[$0..<($0 + 4)].elementsEqual(separator) }
            }
        }
        let headText = String(decoding: bytes[0..<headEnd!], as: UTF8.self)
        var lines = headText.components(separatedBy: "\r\n")
        let requestLine = lines.removeFirst().split(separator: " ")
        let headers = lines.compactMap { line -> (name: String, value: String)? in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (
                String(line[..<colon]), String(line[line.index(after: colon)...]).trimmingCharacters(in: .whitespaces)
            )
        }
        var body = Array(bytes[(headEnd! + 4)...])
        let length = headers.first { $0.name.lowercased() == "content-length" }.flatMap { Int($0.value) } ?? 0
        while readsBody && body.count < length {
            let count = recv(fd, &buffer, buffer.count, 0)
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            body += buffer[0..<count]
        }
        return RecordedRequest(
            method: requestLine.first.map(String.init) ?? "",
            target: requestLine.count > 1 ? String(requestLine[1]) : "",
            headers: headers, body: body)
    }

    /// Reads the next request on a connection kept alive, body included; nil if the client closed first.
    func readNextRequest() -> RecordedRequest? {
        readRequest(body: true)
    }

    /// Reads and discards until the client closes; returns how many bytes came.
    func readUntilClosed() -> Int {
        var buffer = [UInt8](repeating: 0, count: 65536)
        var total = 0
        while true {
            let count = recv(fd, &buffer, buffer.count, 0)
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return total }
            total += count
        }
    }

    /// Sends bytes; false once the client is gone.
    @discardableResult
    func write(_ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if sent < 0 && errno == EINTR { continue }
            guard sent > 0 else {
                notePeerGone()
                return false
            }
            offset += sent
        }
        return true
    }

    @discardableResult
    func write(_ text: String) -> Bool { write(Array(text.utf8)) }

    /// A complete response with Content-Length and `Connection: close`.
    @discardableResult
    func respond(status: Int, reason: String = "X", headers: [String] = [], body: [UInt8] = []) -> Bool {
        var head = "HTTP/1.1 \(status) \(reason)\r\nContent-Length: \(body.count)\r\nConnection: close\r\n"
        for header in headers { head += header + "\r\n" }
        return write(Array((head + "\r\n").utf8) + body)
    }

    /// Waits up to `duration`; false as soon as the client closed the connection or the server stopped.
    func wait(_ duration: Duration) -> Bool {
        let deadline = ContinuousClock.now + duration
        while ContinuousClock.now < deadline {
            if server.stopped.load(ordering: .acquiring) { return false }
            var descriptor = pollfd(fd: fd, events: Int16(POLLIN) | pollReadHangUp, revents: 0)
            let remaining = deadline - ContinuousClock.now
            let milliseconds = Int32(
                min(
                    50,
                    max(
                        1,
                        remaining.components.seconds * 1000 + remaining.components.attoseconds / 1_000_000_000_000_000))
            )
            if poll(&descriptor, 1, milliseconds) > 0 {
                var probe: UInt8 = 0
                let peeked = recv(fd, &probe, 1, Int32(MSG_PEEK | MSG_DONTWAIT))
                if peeked == 0 || (peeked < 0 && errno != EAGAIN && errno != EINTR)
                    || descriptor.revents & pollReadHangUp != 0
                {
                    notePeerGone()
                    return false
                }
            }
        }
        return true
    }

    private func notePeerGone() {
        guard !peerGone else { return }
        peerGone = true
        server.notePeerClosed()
    }

    /// Closes the connection now (a script that drops the client mid-way).
    func close() {
        guard !closed else { return }
        closed = true
        Glibc.close(fd)
    }
}
