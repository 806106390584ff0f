import Foundation
import Logging
import SwiftWingCore
import Synchronization
import Testing

@testable import Appliance

#if canImport(Glibc)
    import Glibc
#endif

/// What a client can cost the daemon through the control socket: who may talk, how many at once,
/// how long each may dawdle, and what happens when the process runs out of descriptors or threads.
@Suite struct ControlSocketLimitsTests {
    private func socketPath() -> String { NSTemporaryDirectory() + "sw-\(UUID().uuidString.prefix(8)).sock" }

    /// A raw client connection that sends nothing until told.
    private func rawConnection(_ path: String) throws -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: Array(path.utf8))
            raw[path.utf8.count] = 0
        }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard result == 0 else { throw SystemCallError("connect", subject: path, errno: errno) }
        return fd
    }

    /// Waits (polling, bounded only so a broken server fails instead of hanging) until `condition`.
    private func eventually(_ condition: () -> Bool) -> Bool {
        for _ in 0..<3000 {
            if condition() { return true }
            usleep(5_000)  // polls a server on threads of its own
        }
        return condition()
    }

    private func start(_ server: ControlSocketServer) -> Thread {
        let thread = Thread { server.serve() }
        thread.start()
        return thread
    }

    @Test func theSeventeenthConnectionIsRefusedAsBusyAndServedOnceOthersLeave() async throws {
        let path = socketPath()
        let handled = Atomic<Int>(0)
        let server = try ControlSocketServer(path: path, logger: Logger(label: "test")) { _ in
            handled.add(1, ordering: .relaxed)
            return ControlReply(ok: true)
        }
        _ = start(server)
        defer { server.stop() }
        let idle = try (0..<16).map { _ in try rawConnection(path) }
        #expect(eventually { server.activeConnections == 16 })

        let refused = try await offThePool { try ControlClient.send(ControlRequest(command: .status), to: path) }
        #expect(!refused.ok)
        #expect(refused.error?.contains("16") == true)
        #expect(handled.load(ordering: .relaxed) == 0)

        for fd in idle { close(fd) }
        #expect(eventually { server.activeConnections == 0 })
        #expect(try await offThePool { try ControlClient.send(ControlRequest(command: .status), to: path) }.ok)
    }

    @Test func aClientThatSendsNothingIsDroppedAfterTheReadTimeout() throws {
        let path = socketPath()
        var limits = ControlSocketServer.Limits()
        limits.ioTimeout = .milliseconds(200)
        let server = try ControlSocketServer(path: path, logger: Logger(label: "test"), limits: limits) { _ in
            ControlReply(ok: true)
        }
        _ = start(server)
        defer { server.stop() }
        let fd = try rawConnection(path)
        defer { close(fd) }
        #expect(eventually { server.activeConnections == 1 })
        // The server gives up on the silent client and closes: the client reads end of file.
        var byte: UInt8 = 0
        #expect(read(fd, &byte, 1) == 0)
        #expect(eventually { server.activeConnections == 0 })
    }

    @Test func failingAcceptBacksOffDoublingUpToASecondInsteadOfSpinning() throws {
        let path = socketPath()
        let attempts = Atomic<Int>(0)
        let pauses = Mutex<[Duration]>([])
        var seams = ControlSocketServer.Seams()
        seams.accept = { _ in
            attempts.add(1, ordering: .relaxed)
            return (-1, EMFILE)
        }
        seams.pause = { delay, _ in
            pauses.withLock { $0.append(delay) }
            return pauses.withLock { $0.count } < 9  // then stop, as stop() would
        }
        let server = try ControlSocketServer(
            path: path, logger: Logger(label: "test"), policy: ControlPeerPolicy(), limits: .init(), seams: seams
        ) { _ in ControlReply(ok: true) }
        // A client waiting keeps the listening socket readable, as under EMFILE.
        let client = try rawConnection(path)
        defer { close(client) }
        server.serve()  // returns when the ninth pause says stop
        #expect(
            pauses.withLock { $0 } == [10, 20, 40, 80, 160, 320, 640, 1000, 1000].map { Duration.milliseconds($0) })
        #expect(attempts.load(ordering: .relaxed) == 9)
    }

    @Test func aConnectionWhoseThreadCannotStartIsRefusedNotTrapped() async throws {
        let path = socketPath()
        var seams = ControlSocketServer.Seams()
        seams.startThread = { _ in false }
        let handled = Atomic<Int>(0)
        let server = try ControlSocketServer(
            path: path, logger: Logger(label: "test"), policy: ControlPeerPolicy(), limits: .init(), seams: seams
        ) { _ in
            handled.add(1, ordering: .relaxed)
            return ControlReply(ok: true)
        }
        _ = start(server)
        defer { server.stop() }
        let reply = try await offThePool { try ControlClient.send(ControlRequest(command: .shutter), to: path) }
        #expect(!reply.ok)
        #expect(reply.error?.contains("thread") == true)
        #expect(handled.load(ordering: .relaxed) == 0)
        #expect(server.activeConnections == 0)
    }

    @Test func onlyRootTheDaemonsUserAndItsGroupAreLetIn() {
        let policy = ControlPeerPolicy(daemonUID: 998, daemonGID: 997)
        #expect(policy.allows(ControlPeer(pid: 1, uid: 0, gid: 0)))
        #expect(policy.allows(ControlPeer(pid: 1, uid: 998, gid: 998)))
        #expect(policy.allows(ControlPeer(pid: 1, uid: 1000, gid: 997)))
        #expect(policy.allows(ControlPeer(pid: 1, uid: 1000, gid: 1000, groups: [24, 997])))
        #expect(!policy.allows(ControlPeer(pid: 1, uid: 65534, gid: 65534)))
        #expect(!policy.allows(ControlPeer(pid: 1, uid: 1000, gid: 1000, groups: [24, 27])))
        let refusal = policy.refusal(ControlPeer(pid: 42, uid: 65534, gid: 65534))
        #expect(refusal.contains("65534") && refusal.contains("998") && refusal.contains("997"))
    }

    @Test func theKernelTellsThePeerOfARealConnection() throws {
        let path = socketPath()
        let server = try ControlSocketServer(path: path, logger: Logger(label: "test")) { _ in ControlReply(ok: true) }
        _ = start(server)
        defer { server.stop() }
        let fd = try rawConnection(path)
        defer { close(fd) }
        let peer = try #require(ControlPeer.of(fd))
        #expect(peer.uid == geteuid() && peer.gid == getegid() && peer.pid == getpid())
    }
}

@Suite struct ControlRequestParserTests {
    @Test func aRequestIsReadWithItsFields() throws {
        let request = try ControlRequest.parse(Array(#"{"command":"discard","scanId":"abc"}"#.utf8)).get()
        #expect(request == ControlRequest(command: .discard, scanId: "abc"))
    }

    @Test(arguments: [
        (#"{"command":"format-disk"}"#, "unknown command"),
        (#"{"command":1}"#, "JSON object like"),
        ("not json", "JSON object like"),
        ("[]", "JSON object like"),
        (#"{"command":"shutter","books":"many"}"#, "JSON object like"),
    ])
    func badRequestsAreRefusedWithAdvice(text: String, advice: String) {
        guard case .failure(let problem) = ControlRequest.parse(Array(text.utf8)) else {
            Issue.record("accepted \(text)")
            return
        }
        #expect(problem.description.contains(advice))
    }

    @Test func bytesThatAreNotUTF8OrTooLongAreRefused() {
        guard case .failure(let notText) = ControlRequest.parse([0x7B, 0xFF, 0xFE, 0x7D]) else {
            Issue.record("accepted bytes that are not UTF-8")
            return
        }
        #expect(notText.description.contains("UTF-8"))
        let long =
            Array(#"{"command":"shutter","reason":""#.utf8) + [UInt8](repeating: 0x61, count: 70_000)
            + Array(#""}"#.utf8)
        guard case .failure(let tooLong) = ControlRequest.parse(long) else {
            Issue.record("accepted \(long.count) bytes")
            return
        }
        #expect(tooLong.description.contains("longer than"))
    }
}
