#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// An error from a system call: the call's name, the path or device it acted on, and `errno`.
///
/// `EBADF` and `EFAULT` are programmer errors and trap in debug builds (as swift-nio does); every
/// other errno is a state of the device or the file system that the caller handles.
public struct SystemCallError: Error, Equatable, Sendable, CustomStringConvertible {
    public var call: String
    public var subject: String
    public var errno: Int32

    public init(_ call: String, subject: String = "", errno: Int32) {
        assert(errno != EBADF && errno != EFAULT, "\(call) on \(subject): \(errno) is a programming error")
        self.call = call
        self.subject = subject
        self.errno = errno
    }

    /// The C library's text for `errno`, e.g. "No such device".
    public var reason: String { String(cString: strerror(errno)) }

    public var description: String {
        subject.isEmpty ? "\(call): \(reason) (errno \(errno))" : "\(call) \(subject): \(reason) (errno \(errno))"
    }

    /// The device went away (unplugged, driver unbound): reopen later rather than give up.
    public var isDeviceGone: Bool { errno == ENODEV || errno == EIO || errno == ENXIO }

    /// The file system is full (or over quota).
    public var isNoSpace: Bool { errno == ENOSPC || errno == EDQUOT }
}

/// Runs a C call that returns -1 and sets `errno` on failure, retrying on `EINTR`.
///
/// Never use this for `close`: on Linux a `close` interrupted by a signal has already released the
/// descriptor, and retrying it could close one another thread just opened.
@inlinable
public func retryingOnInterrupt<Result: BinaryInteger>(
    _ call: String, subject: String = "", _ body: () -> Result
) throws(SystemCallError) -> Result {
    while true {
        let result = body()
        if result != -1 { return result }
        let code = errno
        if code == EINTR { continue }
        throw SystemCallError(call, subject: subject, errno: code)
    }
}
