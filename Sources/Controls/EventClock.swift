import SwiftWingCore
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Which clock a kernel event timestamp is on, checked against both clocks at read time.
public enum EventClock {
    /// Stamps seen on `CLOCK_REALTIME` and converted (a pre-5.7 kernel, or an evdev device that
    /// refused `EVIOCSCLOCKID`); 0 on bookworm's 6.1 kernels, which the VM tests check.
    public static var realtimeStampsConverted: Int { converted.load(ordering: .relaxed) }
    private static let converted = Atomic<Int>(0)

    /// A stamp more than this far from `CLOCK_MONOTONIC` now, and close to `CLOCK_REALTIME`, is realtime.
    static let tolerance: Int64 = 60 * 1_000_000_000

    static func monotonic(seconds: Int, nanoseconds: Int) -> MonotonicInstant {
        let stamp = MonotonicInstant(seconds: seconds, nanoseconds: nanoseconds)
        let now = MonotonicInstant.now()
        if abs(now.nanoseconds(since: stamp)) <= tolerance { return stamp }
        var realtime = timespec()
        clock_gettime(CLOCK_REALTIME, &realtime)
        let realNow = MonotonicInstant(seconds: Int(realtime.tv_sec), nanoseconds: Int(realtime.tv_nsec))
        let age = realNow.nanoseconds(since: stamp)
        guard abs(age) <= tolerance else { return stamp }
        converted.add(1, ordering: .relaxed)
        // A pre-5.7 kernel: realtime stamp; carry its age over to the monotonic clock.
        return now.advanced(byNanoseconds: -age)
    }
}
