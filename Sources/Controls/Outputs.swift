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

/// A `SCHED_FIFO` priority for the shutter and buzzer threads, e.g. 10: above every normal thread
/// (JPEG encoding, SQLite, curl), far below the kernel's own interrupt threads (50). Needs root,
/// `CAP_SYS_NICE` or systemd's `LimitRTPRIO=`; without it the threads run at normal priority.
/// Off (nil) by default: see README "Threads".
public typealias RealtimePriority = Int32
