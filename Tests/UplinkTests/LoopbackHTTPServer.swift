import Foundation
import SwiftWingTesting
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A real HTTP/1.1 server on 127.0.0.1 (port chosen by the kernel) for tests of what the uplink puts on the
/// wire: one plain thread per connection reads a request (a `Content-Length` or chunked body), records its
/// head, and writes `answer`'s response with `Connection: close`.
final class LoopbackHTTPServer: Sendable {
    struct Request: Sendable {
        var method: String
        var target: String
        var headers: [(name: String, value: String)]

        func header(_ name: String) -> String? {
            headers.first { $0.name.lowercased() == name.lowercased() }?.value
        }
    }

    struct Answer: Sendable {
        var status: Int
        var contentType = "application/json"
        var body: String
    }

    let port: Int
    private let listener: Int32
    private let answer: @Sendable (Request) -> Answer
    private let recorded = Mutex<[Request]>([])
    private let stopped = Atomic<Bool>(false)

    var requests: [Request] { recorded.withLock { $0 } }
    var url: String { "http://127.0.0.1:\(port)" }

    init(_ answer: @escaping @Sendable (Request) -> Answer) throws {
        let (fd, port) = try LoopbackSocket.listen()
        self.port = port
        listener = fd
        self.answer = answer
        Thread { [self] in acceptLoop() }.start()
    }

    deinit { stop() }

    func stop() {
        guard !stopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }

    private func acceptLoop() {
        while !stopped.load(ordering: .acquiring) {
            let client = accept(listener, nil, nil)
            if client < 0 {
                if errno == EINTR { continue }
                return
            }
            Thread { [self] in
                defer { close(client) }
                guard let request = Self.readRequest(client) else { return }
                recorded.withLock { $0.append(request) }
                let reply = answer(request)
                let body = Array(reply.body.utf8)
                let head =
                    "HTTP/1.1 \(reply.status) X\r\nContent-Type: \(reply.contentType)\r\n"
                    + "Content-Length: \(body.count)\r\nConnection: close\r\n\r\n"
                Self.write(client, Array(head.utf8) + body)
            }.start()
        }
    }

    private static func readRequest(_ fd: Int32) -> Request? {
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        func more() -> Bool {
            var count = recv(fd, &buffer, buffer.count, 0)
            while count < 0 && errno == EINTR { count = recv(fd, &buffer, buffer.count, 0) }
            guard count > 0 else { return false }
            bytes += buffer[0..<count]
            return true
        }
        let separator = Array("\r\n\r\n".utf8)
        var headEnd: Int?
        while headEnd == nil {
            guard more() else { return nil }
            guard bytes.count >= 4 else { continue }
            headEnd = (0...(bytes.count - 4)).first { bytes[$0..<($0 + 4)].elementsEqual(separator) }
        }
        var lines = String(decoding: bytes[0..<headEnd!], as: UTF8.self).components(separatedBy: "\r\n")
        let requestLine = lines.removeFirst().split(separator: " ")
        let headers = lines.compactMap { line -> (name: String, value: String)? in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            return (String(line[..<colon]), value)
        }
        let request = Request(
            method: requestLine.first.map(String.init) ?? "",
            target: requestLine.count > 1 ? String(requestLine[1]) : "", headers: headers)
        // The body is read whole before answering: closing on unread bytes would reset the connection.
        let bodyStart = headEnd! + 4
        if let length = request.header("Content-Length").flatMap(Int.init) {
            while bytes.count - bodyStart < length { guard more() else { break } }
        } else if request.header("Transfer-Encoding")?.lowercased().contains("chunked") == true {
            let end = Array("0\r\n\r\n".utf8)
            while !(bytes.count >= bodyStart + 5 && bytes.suffix(5).elementsEqual(end)) { guard more() else { break } }
        }
        return request
    }

    private static func write(_ fd: Int32, _ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if sent < 0 && errno == EINTR { continue }
            guard sent > 0 else { return }
            offset += sent
        }
    }
}
