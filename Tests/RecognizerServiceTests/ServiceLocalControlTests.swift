import Foundation
import Logging
import SwiftWingTesting
import Testing
import swiftwing_recognizer

#if canImport(Glibc)
    import Glibc
#endif

/// Issue 36, point 5: with no API key, `/_stats` and a job's cancel and cleanup answer only this machine (or, for
/// cancel and cleanup, the job's token); before, any peer got 200.
@Suite struct ServiceLocalControlTests {
    /// An IPv4 address of this machine that is not loopback, if it has one.
    static func networkAddress() -> String? {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0, let first = list else { return nil }
        defer { freeifaddrs(list) }
        var entry: UnsafeMutablePointer<ifaddrs>? = first
        while let current = entry {
            defer { entry = current.pointee.ifa_next }
            guard let address = current.pointee.ifa_addr, address.pointee.sa_family == sa_family_t(AF_INET) else {
                continue
            }
            var v4 = address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee }
            guard UInt32(bigEndian: v4.sin_addr.s_addr) >> 24 != 127 else { continue }
            var text = [CChar](repeating: 0, count: Int(INET_ADDRSTRLEN))
            inet_ntop(AF_INET, &v4.sin_addr, &text, socklen_t(text.count))
            return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
        return nil
    }

    /// One request over a plain socket to `address` (the project's HTTP engine sends plain http to loopback only):
    /// the status and the body. Blocking, on a thread of its own.
    static func exchange(
        _ address: String, _ port: Int, _ method: String, _ path: String, headers: [String: String] = [:],
        body: [UInt8] = []
    ) async throws -> (status: Int, body: String) {
        try await withCheckedThrowingContinuation { continuation in
            Thread {
                continuation.resume(
                    with: Result { try blockingExchange(address, port, method, path, headers: headers, body: body) })
            }.start()
        }
    }

    struct Failure: Error { var text: String }

    static func blockingExchange(
        _ address: String, _ port: Int, _ method: String, _ path: String, headers: [String: String], body: [UInt8]
    ) throws -> (status: Int, body: String) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure(text: "socket") }
        defer { close(fd) }
        var timeout = timeval(tv_sec: 30, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var peer = sockaddr_in()
        peer.sin_family = sa_family_t(AF_INET)
        peer.sin_port = in_port_t(UInt16(port).bigEndian)
        peer.sin_addr.s_addr = inet_addr(address)
        let connected = withUnsafePointer(to: &peer) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else { throw Failure(text: "connect \(address):\(port): errno \(errno)") }
        var head = "\(method) \(path) HTTP/1.1\r\nHost: \(address):\(port)\r\nConnection: close\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        head += "Content-Length: \(body.count)\r\n\r\n"
        let request = Array(head.utf8) + body
        var sent = 0
        while sent < request.count {
            let count = request[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard count > 0 else { break }
            sent += count
        }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count <= 0 { break }
            received += buffer[0..<count]
        }
        let text = String(decoding: received, as: UTF8.self)
        let statusLine = text.prefix { $0 != "\r" }.split(separator: " ")
        guard statusLine.count >= 2, let status = Int(statusLine[1]) else {
            throw Failure(text: "no status: \(text.prefix(80))")
        }
        return (status, text.components(separatedBy: "\r\n\r\n").dropFirst().joined(separator: "\r\n\r\n"))
    }

    @Test func withoutAKeyStatsCancelAndCleanupAnswerOnlyThisMachine() async throws {
        let address = try #require(Self.networkAddress(), "this machine has no network address besides loopback")
        var settings = ServiceTrustTests.settings
        settings.host = "0.0.0.0"
        let recognizer = HeldRecognizer()
        try await ServiceTrustTests().withService(settings, recognizer: recognizer) { loopback in
            let port = try #require(loopback.port)
            #expect(try await fetch(loopback.appendingPathComponent("_stats")).status == 200)
            let refused = try await Self.exchange(address, port, "GET", "/_stats")
            #expect(refused.status == 403)
            #expect(!refused.body.contains("jobsCreated"))

            let job = try ServiceTrustTests().job(try await upload(loopback, photo: tinyJPEG("a"), key: "a"))
            let path = "/v3/jobs/scans/\(job.id)"
            #expect(try await Self.exchange(address, port, "DELETE", path).status == 401)
            #expect(try await Self.exchange(address, port, "DELETE", path + "/cleanup").status == 401)
            // The job's own token may, from anywhere; and this machine may without it.
            let cancel = try await Self.exchange(
                address, port, "DELETE", path, headers: ["Authorization": "Bearer \(job.token)"])
            #expect(cancel.status == 200, "\(cancel.body)")
            let local = loopback.appendingPathComponent("v3/jobs/scans/\(job.id)/cleanup")
            #expect(try await fetch(local, method: "DELETE").status == 204)
            recognizer.releaseAll()
        }
    }
}
