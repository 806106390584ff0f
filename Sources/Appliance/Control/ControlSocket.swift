import Foundation
import Glibc
import Logging
import SwiftWingCore

/// Errors of the control socket, naming the socket path and what to do.
public enum ControlSocketError: Error, CustomStringConvertible, Sendable {
    case pathTooLong(String)
    case alreadyServed(String)
    case cannotListen(String, SystemCallError)
    case daemonNotRunning(String, SystemCallError)
    case badReply(String, String)

    public var description: String {
        switch self {
        case .pathTooLong(let path):
            "control socket path \(path) is longer than a Unix socket allows (107 bytes): choose a shorter --control-socket"
        case .alreadyServed(let path):
            "another swiftwing daemon already answers on \(path): stop it (systemctl stop swiftwing) or give this one another --control-socket"
        case .cannotListen(let path, let error):
            "cannot listen on control socket \(path): \(error). Check that its directory exists and is writable (systemd's RuntimeDirectory=swiftwing creates /run/swiftwing)"
        case .daemonNotRunning(let path, let error):
            "no swiftwing daemon answers on \(path) (\(error.reason)): start it with `systemctl start swiftwing` or `swiftwing run`, or pass the socket it uses with --control-socket"
        case .badReply(let path, let detail):
            "the daemon on \(path) sent a reply that is not valid JSON (\(detail)): check that client and daemon are the same version"
        }
    }
}

/// Fills a `sockaddr_un` for `path`; the only place that touches its fixed-size path array.
private func withSocketAddress<Result>(
    _ path: String, _ body: (UnsafePointer<sockaddr>, socklen_t) -> Result
) throws(ControlSocketError) -> Result {
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    let bytes = Array(path.utf8)
    let capacity = MemoryLayout.size(ofValue: address.sun_path)
    guard bytes.count < capacity else { throw .pathTooLong(path) }
    withUnsafeMutableBytes(of: &address.sun_path) { raw in
        raw.copyBytes(from: bytes)
        raw[bytes.count] = 0
    }
    return withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
    }
}

private func connectedSocket(to path: String) throws(ControlSocketError) -> Int32 {
    let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard fd >= 0 else { throw .daemonNotRunning(path, SystemCallError("socket", errno: errno)) }
    let result = try withSocketAddress(path) { connect(fd, $0, $1) }
    if result != 0 {
        let error = SystemCallError("connect", subject: path, errno: errno)
        close(fd)
        throw .daemonNotRunning(path, error)
    }
    return fd
}

/// Reads bytes until a newline (not included), end of file, or `limit` bytes.
private func readLine(from fd: Int32, limit: Int = 1 << 20) -> [UInt8]? {
    var line: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 4096)
    while line.count < limit {
        let count = try? retryingOnInterrupt("read") {
            chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        }
        guard let count, count > 0 else { return line.isEmpty ? nil : line }
        if let newline = chunk[0..<count].firstIndex(of: UInt8(ascii: "\n")) {
            line.append(contentsOf: chunk[0..<newline])
            return line
        }
        line.append(contentsOf: chunk[0..<count])
    }
    return nil
}

private func writeAll(_ bytes: [UInt8], to fd: Int32) -> Bool {
    (try? bytes.withUnsafeBytes { try FileOperations.writeAll(fd, $0, path: "control socket") }) != nil
}

/// The client side: one request, one reply, one connection.
public enum ControlClient {
    public static func send(_ request: ControlRequest, to path: String) throws(ControlSocketError) -> ControlReply {
        let fd = try connectedSocket(to: path)
        defer { close(fd) }
        var payload = (try? JSONEncoder().encode(request)).map(Array.init) ?? []
        payload.append(UInt8(ascii: "\n"))
        guard writeAll(payload, to: fd), let line = readLine(from: fd) else {
            throw .daemonNotRunning(path, SystemCallError("read", subject: path, errno: errno == 0 ? ECONNRESET : errno))
        }
        do {
            return try JSONDecoder().decode(ControlReply.self, from: Data(line))
        } catch {
            throw .badReply(path, "\(error)")
        }
    }
}

/// The daemon side: a Unix stream socket (mode 0660) served by a thread of its own.
///
/// The accept loop polls the listening socket together with a wake event, so `stop()` wakes it at
/// once. Each connection gets a short-lived thread: clients are few (the CLI), and a slow client
/// must never hold up the next press.
public final class ControlSocketServer: Sendable {
    public typealias Handler = @Sendable (ControlRequest) async -> ControlReply

    public let path: String
    private let listeningSocket: Int32
    /// Polled by the accept loop beside the socket; `stop()` signals it.
    private let wakeup: WakeEvent
    private let handler: Handler
    private let logger: Logger

    public init(path: String, logger: Logger, handler: @escaping Handler) throws(ControlSocketError) {
        self.path = path
        self.handler = handler
        self.logger = logger
        // A socket file that still accepts connections belongs to a live daemon: never steal it.
        if let fd = try? connectedSocket(to: path) {
            close(fd)
            throw .alreadyServed(path)
        }
        unlink(path)
        let directory = (path as NSString).deletingLastPathComponent
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw .cannotListen(path, SystemCallError("socket", errno: errno)) }
        let bound = try withSocketAddress(path) { bind(fd, $0, $1) }
        guard bound == 0, chmod(path, 0o660) == 0, listen(fd, 16) == 0 else {
            let error = SystemCallError("bind", subject: path, errno: errno)
            close(fd)
            throw .cannotListen(path, error)
        }
        self.listeningSocket = fd
        do {
            self.wakeup = try WakeEvent()
        } catch {
            close(fd)
            throw .cannotListen(path, error)
        }
    }

    /// Serves until `stop()`; runs on the calling thread (give it one of its own).
    public func serve() {
        while true {
            guard let ready = try? waitReadable([listeningSocket, wakeup.descriptor]),
                ready[wakeup.descriptor] == nil
            else { break }
            guard (ready[listeningSocket] ?? 0) & Int16(POLLIN) != 0 else { continue }
            let connection = accept(listeningSocket, nil, nil)
            guard connection >= 0 else { continue }
            _ = fcntl(connection, F_SETFD, FD_CLOEXEC)
            var timeout = timeval(tv_sec: 5, tv_usec: 0)
            setsockopt(connection, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            let handler = self.handler
            let logger = self.logger
            // Not joined: it ends with its connection and frees itself.
            _ = DeviceThread(name: "sw-control-peer") {
                Self.answer(connection, handler: handler, logger: logger)
            }
        }
        close(listeningSocket)
        unlink(path)
    }

    /// Wakes the accept loop so `serve()` returns; safe from any thread.
    public func stop() {
        wakeup.signal()
    }

    private static func answer(_ connection: Int32, handler: @escaping Handler, logger: Logger) {
        defer { close(connection) }
        guard let line = readLine(from: connection) else { return }
        let reply: ControlReply
        if let request = try? JSONDecoder().decode(ControlRequest.self, from: Data(line)) {
            let box = ReplyBox()
            let done = DispatchSemaphore(value: 0)
            Task {
                box.reply = await handler(request)
                done.signal()
            }
            done.wait()
            reply = box.reply ?? .refused("internal error: no reply")
        } else {
            logger.warning("control socket: ignored a request that is not JSON")
            reply = .refused("the request is not a JSON object like {\"command\":\"shutter\"}")
        }
        var payload = (try? JSONEncoder().encode(reply)).map(Array.init) ?? []
        payload.append(UInt8(ascii: "\n"))
        _ = writeAll(payload, to: connection)
    }
}

/// Carries a reply from the handler's task to the connection thread; the semaphore orders access.
private final class ReplyBox: @unchecked Sendable {
    var reply: ControlReply?
}
