import Foundation
import Glibc
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
package func withSocketAddress<Result>(
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

package func connectedSocket(to path: String) throws(ControlSocketError) -> Int32 {
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

/// Reads bytes until a newline (not included), end of file, or `limit` bytes; with a `deadline`, nil once
/// it passes, however the bytes trickle in (a per-read timeout alone lets one byte every few seconds hold
/// the connection for ever).
package func readLine(from fd: Int32, limit: Int = 1 << 20, deadline: MonotonicInstant? = nil) -> [UInt8]? {
    var line: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 4096)
    while line.count < limit {
        if let deadline {
            guard MonotonicInstant.now() < deadline, let ready = try? waitReadable([fd], until: deadline),
                ready[fd] != nil
            else { return nil }
        }
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

/// Sends every byte; false when the peer left or the send timed out. `MSG_NOSIGNAL`: a client that
/// hung up must not end the daemon with `SIGPIPE`.
package func writeAll(_ bytes: [UInt8], to fd: Int32) -> Bool {
    bytes.withUnsafeBytes { raw in
        var offset = 0
        while offset < raw.count {
            let sent = send(fd, raw.baseAddress! + offset, raw.count - offset, Int32(MSG_NOSIGNAL))
            if sent < 0 && errno == EINTR { continue }
            guard sent > 0 else { return false }
            offset += sent
        }
        return true
    }
}

/// The client side: one request, one reply, one connection.
public enum ControlClient {
    public static func send(_ request: ControlRequest, to path: String) throws(ControlSocketError) -> ControlReply {
        let fd = try connectedSocket(to: path)
        defer { close(fd) }
        var payload = (try? JSONEncoder().encode(request)).map(Array.init) ?? []
        payload.append(UInt8(ascii: "\n"))
        // A daemon that refuses the connection answers before reading the request, and may have
        // closed by the time it is written: its answer is still read.
        let written = writeAll(payload, to: fd)
        let line = readLine(from: fd)
        guard let line, written || !line.isEmpty else {
            throw .daemonNotRunning(
                path, SystemCallError("read", subject: path, errno: errno == 0 ? ECONNRESET : errno))
        }
        do {
            return try JSONDecoder().decode(ControlReply.self, from: Data(line))
        } catch {
            throw .badReply(path, "\(error)")
        }
    }
}
