import CLinux

#if canImport(Glibc)
    import Glibc
#endif

/// Tells whether one process has ended, by a pidfd: a process id reused by a later process is never
/// mistaken for the one watched. Opened while the process is known to be alive (e.g. while it waits
/// for an answer from us).
public final class ProcessWatch: Sendable {
    public let pid: Int32
    private let fd: Int32

    /// The corresponding C function is the system call `pidfd_open`.
    public init(pid: Int32) throws(SystemCallError) {
        self.pid = pid
        self.fd = try retryingOnInterrupt("pidfd_open", subject: "process \(pid)") { sw_pidfd_open(pid) }
    }

    deinit { _ = Glibc.close(fd) }

    /// Whether the process has ended (never blocks). The corresponding C function is `poll`.
    public var hasEnded: Bool {
        var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let ready = (try? retryingOnInterrupt("poll", subject: "process \(pid)") { poll(&entry, 1, 0) }) ?? 0
        return ready > 0
    }
}
