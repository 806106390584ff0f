/// A `Duration` as the plain numbers C calls, log lines and JSON want, computed in one place instead of from
/// `components` at every call site.
///
/// The integer counts never trap: a `Duration` holds up to about 2.9 × 10¹¹ years (`Int64` seconds), far
/// more than `Int64` nanoseconds (292 years) can, so a count beyond `Int64` saturates at `Int64.max` (or
/// `Int64.min`): a timeout or deadline that long means "never", and the longest count says that too.
extension Duration {
    /// The duration in seconds, fractions included: for timings in JSON and reports, and waits given in seconds.
    public var inSeconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }

    /// Whole nanoseconds, truncated toward zero (so a negative duration stays negative, as a deadline in
    /// the past must), saturating beyond `Int64`: for `MonotonicInstant` deadlines and stored instants.
    public var wholeNanoseconds: Int64 {
        Int64(clamping: totalAttoseconds / 1_000_000_000)
    }

    /// Whole microseconds, truncated toward zero, saturating beyond `Int64`: for a `timeval`.
    public var wholeMicroseconds: Int64 {
        Int64(clamping: totalAttoseconds / 1_000_000_000_000)
    }

    /// Whole milliseconds, truncated toward zero, saturating beyond `Int64`: for reporting a time taken.
    public var wholeMilliseconds: Int64 {
        Int64(clamping: totalAttoseconds / 1_000_000_000_000_000)
    }

    /// Whole milliseconds rounded up (toward positive infinity), saturating beyond `Int64`: for a timeout
    /// handed to an API that counts in milliseconds, where truncating would shorten it and turn a
    /// sub-millisecond one into 0, which curl and `poll` read as "no timeout" or "don't wait".
    public var wholeMillisecondsRoundedUp: Int64 {
        let (quotient, remainder) = totalAttoseconds.quotientAndRemainder(dividingBy: 1_000_000_000_000_000)
        // The remainder has the sign of the duration: only a positive one is rounded up (-1.5 ms is -1 ms).
        return Int64(clamping: remainder > 0 ? quotient + 1 : quotient)
    }

    /// The exact duration in attoseconds; `Int128` holds any `Duration` (`Duration.attoseconds` needs macOS 26).
    private var totalAttoseconds: Int128 {
        let (seconds, attoseconds) = components
        return Int128(seconds) * 1_000_000_000_000_000_000 + Int128(attoseconds)
    }
}
