import SwiftWingCore

/// One press of the shutter, from whichever input saw it.
public struct ShutterPress: Sendable, Equatable {
    public enum Source: String, Sendable, Codable {
        /// `swiftwing shutter`, through the control socket.
        case controlSocket = "control-socket"
        /// A GPIO line edge (libgpiod).
        case gpio
        /// A key on an input device (evdev): gpio-keys, foot pedals, camera remotes.
        case key
    }

    /// When the press happened on `CLOCK_MONOTONIC`: the kernel's event timestamp for GPIO and
    /// keys, the moment the request arrived for the control socket. The frame must be at or after it.
    public var time: MonotonicInstant
    public var source: Source

    public init(time: MonotonicInstant, source: Source) {
        self.time = time
        self.source = source
    }
}

/// What the operator hears and sees about a press (buzzer, LED, panel flash).
///
/// Calls must return at once: feedback is given before anything else happens on a press and never
/// waits for the camera, the disk or the network.
public protocol PressFeedback: Sendable {
    /// The press was taken: the click.
    func pressAccepted(_ press: ShutterPress)
    /// The press was refused (processing queue full, disk full, camera missing): the error pattern.
    func pressRefused(_ press: ShutterPress, reason: String)
    /// The scan is durable on disk and queued.
    func scanSaved(_ press: ShutterPress)
    /// The press is still held at the long-press threshold (the second action).
    func longPress(_ press: ShutterPress)
    /// The frame for the press was captured: the exposure light may go out.
    func frameCaptured(_ press: ShutterPress)
    /// A device state or a result worth a sound.
    func notice(_ notice: FeedbackNotice)
}

/// What else the operator hears about, beyond single presses (device states and results).
public enum FeedbackNotice: String, Sendable, Equatable {
    /// Books from a scan landed in the library.
    case booksLanded = "books-landed"
    /// A scan failed for good.
    case scanFailed = "scan-failed"
    /// The backend asked the device to slow down.
    case rateLimited = "rate-limited"
    /// A CSV export finished; the stick is safe to remove.
    case exportDone = "export-done"
}

/// Defaults for the requirements added after the first three, so every feedback keeps compiling.
extension PressFeedback {
    /// Default: nothing.
    public func longPress(_ press: ShutterPress) {}
    /// Default: nothing.
    public func frameCaptured(_ press: ShutterPress) {}
    /// Default: nothing.
    public func notice(_ notice: FeedbackNotice) {}
}

/// Feedback for a device with no buzzer, light or panel wired: the log is the only witness.
public struct NoFeedback: PressFeedback {
    public init() {}
    public func pressAccepted(_ press: ShutterPress) {}
    public func pressRefused(_ press: ShutterPress, reason: String) {}
    public func scanSaved(_ press: ShutterPress) {}
}
