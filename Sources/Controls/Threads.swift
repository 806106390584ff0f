import CShim
import Synchronization
import SwiftWingCore

#if canImport(Glibc)
import Glibc
#endif

/// A thread started by ``spawnThread(name:realtimePriority:_:)``; `join()` waits for its end.
final class ThreadHandle: @unchecked Sendable {
    fileprivate var thread = pthread_t()
    private let joined = Mutex(false)
    private let schedulingResult = Atomic<Int32>(-1)

    /// Whether the thread runs with `SCHED_FIFO` (nil: still starting, or none asked for).
    var isRealtime: Bool? {
        let result = schedulingResult.load(ordering: .acquiring)
        return result < 0 ? nil : result == 0
    }

    fileprivate func recordScheduling(_ result: Int32) { schedulingResult.store(result, ordering: .releasing) }

    /// Waits until the thread's body returned. A no-op on the thread itself or when joined before.
    /// The corresponding C function is `pthread_join`.
    func join() {
        guard pthread_equal(pthread_self(), thread) == 0 else { return }
        let first = joined.withLock { done in
            defer { done = true }
            return !done
        }
        if first { pthread_join(thread, nil) }
    }
}

/// Runs `body` on a new thread named `name` (shown by `top -H`, `ps -L`).
///
/// The shutter and buzzer loops block in `poll`; they live on threads of their own, never on an
/// actor or the cooperative pool. With `realtimePriority` the thread asks for `SCHED_FIFO` at that
/// priority: the click must not wait behind JPEG encoding on a 4-core board. Without the right
/// (root, `CAP_SYS_NICE` or systemd's `LimitRTPRIO=`) it runs at normal priority.
/// The corresponding C functions are `pthread_create` and `sched_setscheduler`.
@discardableResult
func spawnThread(name: String, realtimePriority: Int32? = nil, _ body: @escaping @Sendable () -> Void) -> ThreadHandle {
    final class Box {
        let name: String
        let priority: Int32?
        let handle: ThreadHandle
        let body: @Sendable () -> Void
        init(name: String, priority: Int32?, handle: ThreadHandle, body: @escaping @Sendable () -> Void) {
            self.name = name
            self.priority = priority
            self.handle = handle
            self.body = body
        }
    }
    let handle = ThreadHandle()
    let context = Unmanaged.passRetained(Box(name: name, priority: realtimePriority, handle: handle, body: body)).toOpaque()
    let result = pthread_create(&handle.thread, nil, { raw in
        let box = Unmanaged<Box>.fromOpaque(raw!).takeRetainedValue()
        _ = sw_set_current_thread_name(String(box.name.prefix(15)))
        if let priority = box.priority {
            // With SCHED_RESET_ON_FORK: threads this one happens to create (the concurrency runtime
            // grows its pool from the thread that enqueues a Task) must not inherit real-time priority.
            box.handle.recordScheduling(sw_set_realtime(priority))
        }
        box.body()
        return nil
    }, context)
    precondition(result == 0, "pthread_create failed: \(result)")
    return handle
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
