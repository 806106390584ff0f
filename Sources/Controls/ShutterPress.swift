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
}

/// Feedback for a device with no buzzer, light or panel wired: the log is the only witness.
public struct NoFeedback: PressFeedback {
    public init() {}
    public func pressAccepted(_ press: ShutterPress) {}
    public func pressRefused(_ press: ShutterPress, reason: String) {}
    public func scanSaved(_ press: ShutterPress) {}
}
