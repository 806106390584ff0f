import CShim
import SwiftWingCore

#if canImport(Glibc)
    import Glibc
#endif

/// A timerfd on `CLOCK_MONOTONIC` armed at absolute instants: a poll loop's deadline with
/// nanosecond resolution (poll's own timeout is in whole milliseconds).
final class DeadlineTimer: Sendable {
    let fd: Int32

    init() throws(SystemCallError) {
        fd = try retryingOnInterrupt("timerfd_create") {
            timerfd_create(CLOCK_MONOTONIC, Int32(TFD_CLOEXEC | TFD_NONBLOCK))
        }
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
