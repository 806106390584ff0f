#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A point on the kernel's `CLOCK_MONOTONIC`, in nanoseconds.
///
/// Shutter presses (GPIO and evdev event timestamps), V4L2 frames (with
/// `V4L2_BUF_FLAG_TIMESTAMP_MONOTONIC`) and the daemon's own clock readings all use this clock,
/// so "the first frame at or after the press" is a plain comparison.
public struct MonotonicInstant: Hashable, Comparable, Sendable, CustomStringConvertible {
    public var nanoseconds: UInt64

    public init(nanoseconds: UInt64) {
        self.nanoseconds = nanoseconds
    }

    /// From a `struct timeval` as V4L2 stamps buffers.
    public init(seconds: Int, microseconds: Int) {
        self.nanoseconds = UInt64(max(0, seconds)) * 1_000_000_000 + UInt64(max(0, microseconds)) * 1_000
    }

    /// From a `struct timespec` as GPIO and evdev stamp events.
    public init(seconds: Int, nanoseconds: Int) {
        self.nanoseconds = UInt64(max(0, seconds)) * 1_000_000_000 + UInt64(max(0, nanoseconds))
    }

    /// Now, read from `CLOCK_MONOTONIC`. The corresponding C function is `clock_gettime`.
    public static func now() -> MonotonicInstant {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return MonotonicInstant(seconds: Int(ts.tv_sec), nanoseconds: Int(ts.tv_nsec))
    }

    public static func < (lhs: MonotonicInstant, rhs: MonotonicInstant) -> Bool {
        lhs.nanoseconds < rhs.nanoseconds
    }

    /// Signed distance `self - other` in nanoseconds.
    public func nanoseconds(since other: MonotonicInstant) -> Int64 {
        Int64(bitPattern: nanoseconds &- other.nanoseconds)
    }

    public func advanced(byNanoseconds delta: Int64) -> MonotonicInstant {
        MonotonicInstant(nanoseconds: UInt64(bitPattern: Int64(bitPattern: nanoseconds) &+ delta))
    }

    public var description: String {
        let seconds = nanoseconds / 1_000_000_000
        let micros = (nanoseconds % 1_000_000_000) / 1_000
        return "\(seconds).\(String(micros).leftPadded(to: 6))"
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
