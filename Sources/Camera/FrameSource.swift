import SwiftWingCore

/// Where frames come from: the V4L2 camera, the synthetic camera (fixture photos), or a test double.
///
/// Every implementation has the same timing contract: ``capture(after:timeout:)`` resumes with the
/// first frame whose timestamp (on `CLOCK_MONOTONIC`) is at or after the press `t0`, never an
/// older one; several captures may wait at once, each for its own `t0`.
public protocol FrameSource: AnyObject, Sendable {
    /// Opens the source and starts producing frames; returns once frames flow (or throws why not).
    func start() async throws(CameraError)

    /// Stops producing frames and releases the device; pending captures fail with
    /// ``CameraError/notRunning(device:)``. Returns once the source's thread has exited.
    func stop() async

    /// The first frame taken at or after `t0`. Fails after `timeout`, when the camera goes away
    /// (``CameraError/cameraUnavailable(device:reason:)``), when no pooled buffer is free, or when
    /// the source stops. Frames handed to several captures share one buffer: treat it as read-only.
    func capture(after t0: MonotonicInstant, timeout: Duration) async throws(CameraError) -> YUV420Frame

    /// The current state and counters.
    var status: CameraStatus { get }

    /// State changes (not every frame): the current status first, then each change; finishes when
    /// the source stops.
    func statusUpdates() -> AsyncStream<CameraStatus>
}

/// What a frame source is doing, for the panel, `swiftwing status` and `doctor`.
public struct CameraStatus: Hashable, Sendable, CustomStringConvertible {
    public enum State: Hashable, Sendable, CustomStringConvertible {
        case stopped
        case starting
        case streaming
        /// The device failed (`reason`); the next open attempt is in `retryIn`.
        case reopening(reason: String, attempt: Int, retryIn: Duration)

        public var description: String {
            switch self {
            case .stopped: return "stopped"
            case .starting: return "starting"
            case .streaming: return "streaming"
            case .reopening(let reason, let attempt, let retryIn):
                return "reopening (attempt \(attempt) in \(retryIn)) after: \(reason)"
            }
        }
    }

    /// The device path, or "synthetic:<folder>".
    public var device: String
    public var state: State
    public var format: NegotiatedFormat?
    /// Good frames dequeued since start.
    public var framesReceived: Int
    /// Frames handed to captures (one copy may serve several captures; counted once).
    public var framesCaptured: Int
    /// Frames thrown away as broken: `V4L2_BUF_FLAG_ERROR` or truncated (`bytesused` too small).
    public var framesDropped: Int
    /// Times the device was reopened after an unplug, an error or a stall.
    public var reopens: Int
    /// When the camera's thread last went round its loop (a frame, a poll timeout, a wake-up): the
    /// daemon's watchdog reads it while the camera streams. `nil` for a source without a thread.
    public var lastLoopTurn: MonotonicInstant?

    public init(device: String, state: State = .stopped, format: NegotiatedFormat? = nil) {
        self.device = device
        self.state = state
        self.format = format
        self.framesReceived = 0
        self.framesCaptured = 0
        self.framesDropped = 0
        self.reopens = 0
        self.lastLoopTurn = nil
    }

    public var description: String {
        let format = self.format.map { ", \($0)" } ?? ""
        return "\(device): \(state)\(format); \(framesReceived) received, \(framesCaptured) captured, "
            + "\(framesDropped) dropped, \(reopens) reopens"
    }
}
