import SwiftWingCore

/// A digital output: a buzzer or a light on a GPIO line, or a test double that records levels.
///
/// `set` must be quick (one ioctl for a GPIO line) because the click is set on the press path.
/// Callers serialise calls to one output.
public protocol DigitalOutput: AnyObject, Sendable {
    func set(active: Bool) throws(SystemCallError)
}

/// An output wired to nothing: the pattern player runs the same, so timing and latency are still
/// recorded on a device without a buzzer.
public final class NoOutput: DigitalOutput {
    public init() {}
    public func set(active: Bool) throws(SystemCallError) {}
}

/// The clock the pattern player schedules on: `CLOCK_MONOTONIC`, or a fake one in tests.
public protocol FeedbackClock: Sendable {
    func now() -> MonotonicInstant
}

/// `CLOCK_MONOTONIC`.
public struct SystemFeedbackClock: FeedbackClock {
    public init() {}
    public func now() -> MonotonicInstant { .now() }
}

/// The `SCHED_FIFO` priority the shutter and buzzer threads ask for: above every normal thread (JPEG
/// encoding, SQLite, curl), far below the kernel's own interrupt threads (50). Needs root,
/// `CAP_SYS_NICE` or systemd's `LimitRTPRIO=10`; without it the threads run at normal priority.
let feedbackThreadPriority: Int32 = 10
