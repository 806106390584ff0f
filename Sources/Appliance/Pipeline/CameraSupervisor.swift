import Camera
import Logging
import ServiceLifecycle
import SwiftWingCore
import Synchronization

/// Keeps a camera open for the daemon's lifetime.
///
/// A camera object is single-use: one that failed to start, or was stopped, is replaced by a fresh
/// one from `makeCamera`. While none streams, presses are refused with the reason it could not
/// start (reported once per distinct reason), and the next attempt follows with backoff; the daemon
/// runs on meanwhile. Once streaming, the camera reopens itself after an unplug or a stall.
public final class CameraSupervisor: Service, Sendable {
    public typealias Factory = @Sendable () throws -> any FrameSource

    private struct State {
        var camera: (any FrameSource)?
        var problem: String? = "the camera is starting"
    }

    private let makeCamera: Factory
    private let device: String
    private let logger: Logger
    /// The capture deadline and the retry backoff: the daemon's `ContinuousClock`, in tests a clock they advance.
    private let clock: ErasedClock
    private let state = Mutex(State())
    /// The first attempt to open the camera has ended (streaming, or failed with a problem).
    private let firstStartEnded = CompletionSignal()

    public init(
        device: String, clock: any Clock<Duration> = ContinuousClock(), logger: Logger,
        makeCamera: @escaping Factory
    ) {
        self.device = device
        self.clock = ErasedClock(clock)
        self.logger = logger
        self.makeCamera = makeCamera
    }

    /// The first frame at or after `t0`, or a ``CameraSupervisorError`` saying why there is none.
    ///
    /// A press in the moment the camera is first opening waits for it within `timeout` (the
    /// synthetic camera decodes its photos first, a USB camera needs a few hundred ms).
    public func capture(after t0: MonotonicInstant, timeout: Duration) async throws -> YUV420Frame {
        let deadline = clock.now + timeout
        if !firstStartEnded.isComplete {
            _ = await firstStartEnded.wait(until: deadline, on: clock)
            try Task.checkCancellation()
        }
        let (camera, problem) = state.withLock { ($0.camera, $0.problem) }
        if let camera { return try await camera.capture(after: t0, timeout: deadline - clock.now) }
        throw CameraSupervisorError(reason: problem ?? "no camera")
    }

    /// One line for `swiftwing status`.
    public var statusDescription: String {
        let (camera, problem) = state.withLock { ($0.camera, $0.problem) }
        if let camera { return camera.status.description }
        return "\(device): not available (\(problem ?? "stopped"))"
    }

    /// For the watchdog: the capture loop's last turn while the camera streams. A camera that is
    /// missing, starting or reopening is excused: that is shown on the panel and in `status`, and a
    /// restart would not bring it back.
    public var liveness: PartLiveness {
        let (camera, problem) = state.withLock { ($0.camera, $0.problem) }
        guard let camera else { return .excused(reason: "not available (\(problem ?? "stopped"))") }
        let status = camera.status
        guard case .streaming = status.state else { return .excused(reason: "\(status.state)") }
        guard let lastTurn = status.lastLoopTurn else { return .excused(reason: "its source reports no loop turns") }
        // The capture loop stamps its turns on the kernel's clock, as its frames: the silence is read there.
        return .beating(silentFor: .nanoseconds(MonotonicInstant.now().nanoseconds(since: lastTurn)))
    }

    /// The camera in one word for the STATUS= line: `streaming`, `starting`, `reopening` or `missing`.
    public var availability: String {
        guard let camera = state.withLock({ $0.camera }) else {
            return firstStartEnded.isComplete ? "missing" : "starting"
        }
        switch camera.status.state {
        case .streaming: return "streaming"
        case .starting: return "starting"
        case .reopening: return "reopening"
        case .stopped: return "missing"
        }
    }

    public func run() async throws {
        var backoff = Backoff(initial: .milliseconds(500), maximum: .seconds(10))
        var lastProblem: String?
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            do {
                let camera = try makeCamera()
                try await camera.start()
                state.withLock { $0 = State(camera: camera, problem: nil) }
                firstStartEnded.complete()
                logger.info("camera streaming", metadata: ["status": "\(camera.status)"])
                break
            } catch {
                let problem = "\(error)"
                state.withLock { $0.problem = problem }
                firstStartEnded.complete()
                if problem != lastProblem {
                    logger.error("camera cannot start; retrying with backoff", metadata: ["reason": "\(problem)"])
                }
                lastProblem = problem
                let wait = backoff.next()
                try? await cancelWhenGracefulShutdown { [clock] in try await clock.sleep(for: wait) }
            }
        }
        try? await gracefulShutdown()
        let camera = state.withLock { state -> (any FrameSource)? in
            defer { state = State(camera: nil, problem: "the daemon is stopping") }
            return state.camera
        }
        firstStartEnded.complete()  // a capture still waiting for the first start learns it never comes
        await camera?.stop()
    }
}

/// Why a press got no frame: the camera is not streaming (missing, busy, unsupported).
public struct CameraSupervisorError: Error, CustomStringConvertible, Sendable {
    public var reason: String
    public var description: String { "camera unavailable: \(reason)" }
}
