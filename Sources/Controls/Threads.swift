import CShim
import SwiftWingCore

#if canImport(Glibc)
import Glibc
#endif

/// Runs `body` on a new detached thread named `name` (shown by `top -H`, `ps -L`).
///
/// The shutter and buzzer loops block in `poll`; they live on threads of their own, never on an
/// actor or the cooperative pool. The corresponding C function is `pthread_create`.
func spawnThread(name: String, _ body: @escaping @Sendable () -> Void) {
    final class Box {
        let name: String
        let body: @Sendable () -> Void
        init(name: String, body: @escaping @Sendable () -> Void) {
            self.name = name
            self.body = body
        }
    }
    let context = Unmanaged.passRetained(Box(name: name, body: body)).toOpaque()
    var thread = pthread_t()
    let result = pthread_create(&thread, nil, { raw in
        let box = Unmanaged<Box>.fromOpaque(raw!).takeRetainedValue()
        _ = sw_set_current_thread_name(String(box.name.prefix(15)))
        box.body()
        return nil
    }, context)
    precondition(result == 0, "pthread_create failed: \(result)")
    pthread_detach(thread)
}

/// Waits until one of `descriptors` is readable (or has an error or hang-up), retrying on `EINTR`;
/// returns the ready ones with their `revents`. A negative timeout waits for ever.
/// The corresponding C function is `poll`.
func waitReadable(_ descriptors: [Int32], timeoutMilliseconds: Int32 = -1) throws(SystemCallError) -> [Int32: Int16] {
    var fds = descriptors.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
    _ = try retryingOnInterrupt("poll") { poll(&fds, nfds_t(fds.count), timeoutMilliseconds) }
    var ready: [Int32: Int16] = [:]
    for fd in fds where fd.revents != 0 { ready[fd.fd] = fd.revents }
    return ready
}

/// An eventfd that wakes a poll loop (`stop()`), like gpiomon's signalfd.
final class WakeUp: Sendable {
    let fd: Int32

    init() throws(SystemCallError) {
        fd = try retryingOnInterrupt("eventfd") { eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK)) }
    }

    func signal() {
        var one: UInt64 = 1
        _ = write(fd, &one, 8)
    }

    func drain() {
        var value: UInt64 = 0
        _ = read(fd, &value, 8)
    }

    deinit { close(fd) }
}

/// A timerfd on `CLOCK_MONOTONIC` armed at absolute instants: a poll loop's deadline with
/// nanosecond resolution (poll's own timeout is in whole milliseconds).
final class DeadlineTimer: Sendable {
    let fd: Int32

    init() throws(SystemCallError) {
        fd = try retryingOnInterrupt("timerfd_create") { timerfd_create(CLOCK_MONOTONIC, Int32(TFD_CLOEXEC | TFD_NONBLOCK)) }
    }

    /// Fires at `deadline` (at once when it has passed); `nil` disarms.
    /// The corresponding C function is `timerfd_settime`.
    func arm(_ deadline: MonotonicInstant?) {
        _ = sw_timerfd_arm_absolute(fd, deadline.map { max($0.nanoseconds, 1) } ?? 0)
    }

    func drain() {
        var expirations: UInt64 = 0
        _ = read(fd, &expirations, 8)
    }

    deinit { close(fd) }
}
