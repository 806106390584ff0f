import ApplianceCore
import Foundation
import Glibc
import Logging
import SwiftWingCore
import Synchronization

/// Who is at the other end of a control connection, as the kernel tells (`SO_PEERCRED`, `SO_PEERGROUPS`).
public struct ControlPeer: Hashable, Sendable {
    public var pid: Int32
    public var uid: uid_t
    public var gid: gid_t
    /// The peer's supplementary groups (empty when the kernel does not say).
    public var groups: [gid_t]

    public init(pid: Int32, uid: uid_t, gid: gid_t, groups: [gid_t] = []) {
        self.pid = pid
        self.uid = uid
        self.gid = gid
        self.groups = groups
    }

    /// The credentials of the process connected on `fd`, or nil when the kernel does not give them.
    /// The corresponding C function is `getsockopt(SO_PEERCRED, SO_PEERGROUPS)`.
    static func of(_ fd: Int32) -> ControlPeer? {
        var credentials = PeerCredentials()
        var length = socklen_t(MemoryLayout<PeerCredentials>.size)
        guard getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &length) == 0 else { return nil }
        var groups = [gid_t](repeating: 0, count: 64)
        var groupsLength = socklen_t(groups.count * MemoryLayout<gid_t>.size)
        if getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, &groups, &groupsLength) == 0 {
            groups.removeLast(groups.count - Int(groupsLength) / MemoryLayout<gid_t>.size)
        } else {
            groups = []
        }
        return ControlPeer(pid: credentials.pid, uid: credentials.uid, gid: credentials.gid, groups: groups)
    }
}

/// `struct ucred` of <sys/socket.h>, which Swift's Glibc module leaves out (it needs `_GNU_SOURCE`):
/// the same three fields in the same order.
private struct PeerCredentials {
    var pid: pid_t = 0
    var uid: uid_t = 0
    var gid: gid_t = 0
}

/// Who may use the control socket: root, the daemon's user and the members of the daemon's group.
/// The socket's mode (0660) says the same to the file system; this holds even when the socket file's
/// mode or its directory's is wider than it should be.
public struct ControlPeerPolicy: Hashable, Sendable {
    public var daemonUID: uid_t
    public var daemonGID: gid_t

    public init(daemonUID: uid_t = geteuid(), daemonGID: gid_t = getegid()) {
        self.daemonUID = daemonUID
        self.daemonGID = daemonGID
    }

    public func allows(_ peer: ControlPeer) -> Bool {
        peer.uid == 0 || peer.uid == daemonUID || peer.gid == daemonGID || peer.groups.contains(daemonGID)
    }

    func refusal(_ peer: ControlPeer?) -> String {
        let who = peer.map { "uid \($0.uid) (pid \($0.pid))" } ?? "a peer whose credentials the kernel did not give"
        return "the control socket answers only root, the daemon's user (uid \(daemonUID)) and its group "
            + "(gid \(daemonGID)); \(who) is none of these: run the command as that user, or add the user to "
            + "that group (usermod -aG)"
    }
}

/// The daemon side: a Unix stream socket (mode 0660) served by a thread of its own.
///
/// The accept loop polls the listening socket together with a wake event, so `stop()` wakes it at
/// once. Each connection gets a short-lived thread: clients are few (the CLI), and a slow client
/// must never hold up the next press. What a client can cost the daemon is bounded: only
/// ``ControlPeerPolicy`` peers are answered, at most ``Limits/connections`` at once, a request not
/// read whole within ``Limits/ioTimeout`` is dropped, each write gives up after it; failing `accept` calls (`EMFILE`…) back off, and a
/// connection whose thread cannot start is refused rather than trapping.
public final class ControlSocketServer: Sendable {
    public typealias Handler = @Sendable (ControlRequest) async -> ControlReply

    /// What the server allows each client.
    public struct Limits: Sendable {
        /// Connections served at once; more are answered "busy" and closed.
        public var connections: Int = 16
        /// How long a client has to send its whole request (one deadline, however the bytes trickle), and
        /// `SO_SNDTIMEO` of each write of the reply.
        public var ioTimeout: Duration = .seconds(5)
        /// The first pause after a failed `accept`, doubled on each failure in a row up to ``longestBackoff``.
        public var shortestBackoff: Duration = .milliseconds(10)
        public var longestBackoff: Duration = .seconds(1)

        public init() {}
    }

    /// The seams the tests use to make `accept` fail and threads refuse to start.
    struct Seams: Sendable {
        /// `accept` on the listening socket: a descriptor, or -1 with the errno.
        var accept: @Sendable (Int32) -> (descriptor: Int32, errno: Int32) = { listening in
            let fd = Glibc.accept(listening, nil, nil)
            if fd < 0 { return (fd, errno) }
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            return (fd, 0)
        }
        /// Starts a connection's thread; false when none could start.
        var startThread: @Sendable (@escaping @Sendable () -> Void) -> Bool = { body in
            DeviceThread(startingIfPossible: "sw-control-peer", body) != nil
        }
        /// Waits `duration` after a failed `accept` unless woken; false when woken (the server stops).
        var pause: (@Sendable (Duration, WakeEvent) -> Bool)? = nil
    }

    public let path: String
    private let listeningSocket: Int32
    /// Polled by the accept loop beside the socket; `stop()` signals it.
    private let wakeup: WakeEvent
    private let handler: Handler
    private let logger: Logger
    private let policy: ControlPeerPolicy
    private let limits: Limits
    private let seams: Seams
    private let active = Atomic<Int>(0)

    public convenience init(
        path: String, logger: Logger, policy: ControlPeerPolicy = ControlPeerPolicy(), limits: Limits = Limits(),
        handler: @escaping Handler
    ) throws(ControlSocketError) {
        try self.init(path: path, logger: logger, policy: policy, limits: limits, seams: Seams(), handler: handler)
    }

    init(
        path: String, logger: Logger, policy: ControlPeerPolicy, limits: Limits, seams: Seams,
        handler: @escaping Handler
    ) throws(ControlSocketError) {
        self.path = path
        self.handler = handler
        self.logger = logger
        self.policy = policy
        self.limits = limits
        self.seams = seams
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

    /// Connections being served now.
    public var activeConnections: Int { active.load(ordering: .acquiring) }

    /// Serves until `stop()`; runs on the calling thread (give it one of its own).
    public func serve() {
        var backoff: Duration?
        serving: while true {
            guard let ready = try? waitReadable([listeningSocket, wakeup.descriptor]),
                ready[wakeup.descriptor] == nil
            else { break }
            guard (ready[listeningSocket] ?? 0) & Int16(POLLIN) != 0 else { continue }
            let (connection, failure) = seams.accept(listeningSocket)
            guard connection >= 0 else {
                switch failure {
                case EINTR, ECONNABORTED, EAGAIN, EPROTO:
                    continue  // that client is gone; the next one is fine
                default:
                    // EMFILE, ENFILE, ENOBUFS, ENOMEM: the socket stays readable, so retrying at once
                    // would spin a core. Wait, longer each time, until a descriptor is free again.
                    let delay = backoff.map { min($0 * 2, limits.longestBackoff) } ?? limits.shortestBackoff
                    if backoff == nil {
                        logger.warning(
                            "control socket: accept failed, backing off",
                            metadata: ["error": "\(SystemCallError("accept", subject: path, errno: failure))"])
                    }
                    backoff = delay
                    if !pause(delay) { break serving }
                    continue
                }
            }
            backoff = nil
            admit(connection)
        }
        close(listeningSocket)
        unlink(path)
    }

    /// Waits `delay` unless `stop()` is called; false when it is.
    private func pause(_ delay: Duration) -> Bool {
        if let pause = seams.pause { return pause(delay, wakeup) }
        let ready = try? waitReadable(
            [wakeup.descriptor], until: .now().advanced(byNanoseconds: delay.wholeNanoseconds))
        return ready?[wakeup.descriptor] == nil
    }

    /// Checks the peer and the load, then hands the connection to a thread of its own.
    private func admit(_ connection: Int32) {
        let microseconds = limits.ioTimeout.wholeMicroseconds
        var timeout = timeval(tv_sec: Int(microseconds / 1_000_000), tv_usec: Int(microseconds % 1_000_000))
        setsockopt(connection, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(connection, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let peer = ControlPeer.of(connection)
        guard let peer, policy.allows(peer) else {
            logger.warning("control socket: refused a peer", metadata: ["reason": "\(policy.refusal(peer))"])
            Self.refuse(connection, policy.refusal(peer))
            return
        }
        let limit = limits.connections
        let admitted = active.wrappingAdd(1, ordering: .acquiringAndReleasing).newValue <= limit
        guard admitted else {
            active.wrappingSubtract(1, ordering: .acquiringAndReleasing)
            Self.refuse(connection, "the daemon is already serving \(limit) control connections: try again in a moment")
            return
        }
        // One deadline for the whole request, from the moment it is admitted.
        let deadline = MonotonicInstant.now().advanced(byNanoseconds: limits.ioTimeout.wholeNanoseconds)
        let started = seams.startThread { [self] in
            Self.answer(connection, deadline: deadline, handler: handler, logger: logger)
            active.wrappingSubtract(1, ordering: .acquiringAndReleasing)
        }
        if !started {
            active.wrappingSubtract(1, ordering: .acquiringAndReleasing)
            logger.warning("control socket: no thread could start for a connection (thread or memory limit); refused")
            Self.refuse(
                connection,
                "the daemon could not start a thread for this request (thread or memory limit): "
                    + "try again in a moment")
        }
    }

    /// Wakes the accept loop so `serve()` returns; safe from any thread.
    public func stop() {
        wakeup.signal()
    }

    /// Answers `reason` without waiting for the request, and closes.
    private static func refuse(_ connection: Int32, _ reason: String) {
        var payload = (try? JSONEncoder().encode(ControlReply.refused(reason))).map(Array.init) ?? []
        payload.append(UInt8(ascii: "\n"))
        _ = payload.withUnsafeBytes { send(connection, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT | MSG_NOSIGNAL)) }
        // Read nothing further, so close() sends a reset only if the client wrote; give its request
        // a chance to be read out of the buffer so the reply is delivered rather than reset.
        shutdown(connection, Int32(SHUT_WR))
        var drain = [UInt8](repeating: 0, count: 4096)
        _ = drain.withUnsafeMutableBytes { recv(connection, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
        close(connection)
    }

    private static func answer(
        _ connection: Int32, deadline: MonotonicInstant, handler: @escaping Handler, logger: Logger
    ) {
        defer { close(connection) }
        guard let line = readLine(from: connection, limit: ControlRequest.maximumLength, deadline: deadline) else {
            return
        }
        let reply: ControlReply
        switch ControlRequest.parse(line) {
        case .success(let request):
            reply = BlockingThread.waitForTask { await handler(request) }.get()
        case .failure(let problem):
            logger.warning("control socket: ignored a request that is not JSON")
            reply = .refused(problem.description)
        }
        var payload = (try? JSONEncoder().encode(reply)).map(Array.init) ?? []
        payload.append(UInt8(ascii: "\n"))
        _ = writeAll(payload, to: connection)
    }
}
