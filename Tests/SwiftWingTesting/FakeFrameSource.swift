import Camera
import SwiftWingCore
import Synchronization

/// A ``FrameSource`` for tests: frames appear only when the test calls ``emit(at:luma:)`` (or, in
/// `.immediate` mode, the moment a capture asks), with the same contract as the real cameras:
/// a capture gets the first frame stamped at or after its `t0`, never an older one.
public final class FakeFrameSource: FrameSource {
    public enum Mode: Sendable {
        /// Captures wait for ``emit(at:luma:)``.
        case manual
        /// Every capture gets a fresh frame at once, stamped `max(t0, now)`.
        case immediate
    }

    public let layout: YUV420Layout
    public let mode: Mode
    private let device: String

    private typealias Waiter = CheckedContinuation<Result<YUV420Frame, CameraError>, Never>

    private struct State {
        var running = false
        var startError: CameraError?
        var requests = CaptureRequests<Waiter>()
        var nextID: UInt64 = 0
        var sequence: UInt32 = 0
        var status: CameraStatus
        var observers: [UInt64: AsyncStream<CameraStatus>.Continuation] = [:]
        var startCount = 0
        var stopCount = 0
        var picture: YUV420Frame?
    }

    private let state: Mutex<State>

    public init(width: Int = 64, height: Int = 48, mode: Mode = .manual, device: String = "fake") {
        self.layout = YUV420Layout(width: width, height: height)
        self.mode = mode
        self.device = device
        self.state = Mutex(State(status: CameraStatus(device: device)))
    }

    /// What the camera sees from now on: frames copy `picture`'s planes (which must have the
    /// camera's layout) instead of a uniform level; `nil` goes back to uniform frames.
    public func show(_ picture: YUV420Frame?) {
        if let picture { precondition(picture.layout == layout, "the picture must be \(layout)") }
        state.withLock { $0.picture = picture }
    }

    /// Makes the next ``start()`` throw `error` (`nil` to start normally).
    public func failNextStart(with error: CameraError?) {
        state.withLock { $0.startError = error }
    }

    public func start() async throws(CameraError) {
        let error: CameraError? = state.withLock { state in
            state.startCount += 1
            if let error = state.startError {
                state.startError = nil
                return error
            }
            state.running = true
            return nil
        }
        if let error { throw error }
        let format = NegotiatedFormat(
            layout: layout, requested: FrameSize(width: layout.width, height: layout.height), cameraFormat: .yuv420,
            plan: .native, framesPerSecond: nil, bufferCount: 4, softwareRotationDegrees: 0)
        setState(.streaming, format: format)
    }

    public func stop() async {
        let waiters = state.withLock { state in
            state.stopCount += 1
            state.running = false
            return state.requests.takeAll()
        }
        for waiter in waiters { waiter.resume(returning: .failure(.notRunning(device: device))) }
        setState(.stopped, format: nil)
        let observers = state.withLock { state in
            defer { state.observers.removeAll() }
            return Array(state.observers.values)
        }
        for observer in observers { observer.finish() }
    }

    public func capture(after t0: MonotonicInstant, timeout: Duration) async throws(CameraError) -> YUV420Frame {
        if mode == .immediate {
            guard state.withLock({ $0.running }) else { throw .notRunning(device: device) }
            let now = MonotonicInstant.now()
            return makeFrame(at: max(t0, now), luma: 128)
        }
        let id = state.withLock { state in
            state.nextID += 1
            return state.nextID
        }
        let device = self.device
        let result: Result<YUV420Frame, CameraError> = await withCheckedContinuation { continuation in
            let refusal: CameraError? = state.withLock { state in
                guard state.running else { return .notRunning(device: device) }
                state.requests.add(id: id, after: t0, deadline: MonotonicInstant.now(), waiter: continuation)
                return nil
            }
            if let refusal {
                continuation.resume(returning: .failure(refusal))
                return
            }
            Task { [weak self] in
                try? await Task.sleep(for: timeout)  // a capture timeout runs in real time, as the real cameras'
                guard let self else { return }
                let waiter = self.state.withLock { $0.requests.remove(id: id) }
                waiter?.resume(returning: .failure(.timedOut(device: device, after: timeout, framesReceived: 0)))
            }
        }
        return try result.get()
    }

    /// Produces a frame stamped `timestamp` (its luma plane all `luma`, chroma 128) and hands it to
    /// the waiting captures it satisfies; returns how many.
    @discardableResult
    public func emit(at timestamp: MonotonicInstant = .now(), luma: UInt8 = 128) -> Int {
        let frame = makeFrame(at: timestamp, luma: luma)
        let waiters = state.withLock { state in
            state.status.framesReceived += 1
            state.status.lastLoopTurn = timestamp
            let waiters = state.requests.takeSatisfied(by: timestamp)
            if !waiters.isEmpty { state.status.framesCaptured += 1 }
            return waiters
        }
        for waiter in waiters { waiter.resume(returning: .success(frame)) }
        return waiters.count
    }

    /// Simulates an unplug: pending captures fail with `cameraUnavailable`, the state is reopening.
    public func disconnect(reason: String = "unplugged") {
        setState(.reopening(reason: reason, attempt: 1, retryIn: .milliseconds(500)), format: nil)
        let waiters = state.withLock { $0.requests.takeAll() }
        for waiter in waiters {
            waiter.resume(returning: .failure(.cameraUnavailable(device: device, reason: reason)))
        }
    }

    /// Captures currently waiting for a frame.
    public var pendingCaptures: Int { state.withLock { $0.requests.count } }
    public var startCount: Int { state.withLock { $0.startCount } }
    public var stopCount: Int { state.withLock { $0.stopCount } }

    public var status: CameraStatus { state.withLock { $0.status } }

    public func statusUpdates() -> AsyncStream<CameraStatus> {
        let (stream, continuation) = AsyncStream.makeStream(
            of: CameraStatus.self, bufferingPolicy: .bufferingNewest(16))
        state.withLock { state in
            continuation.yield(state.status)
            state.nextID += 1
            state.observers[state.nextID] = continuation
        }
        return stream
    }

    private func setState(_ newState: CameraStatus.State, format: NegotiatedFormat?) {
        state.withLock { state in
            state.status.state = newState
            if let format { state.status.format = format }
            for observer in state.observers.values { observer.yield(state.status) }
        }
    }

    private func makeFrame(at timestamp: MonotonicInstant, luma: UInt8) -> YUV420Frame {
        let (sequence, picture) = state.withLock { state -> (UInt32, YUV420Frame?) in
            state.sequence &+= 1
            return (state.sequence, state.picture)
        }
        let frame = YUV420Frame(layout: layout, timestamp: timestamp, sequence: sequence)
        if let picture {
            let planes = UnsafeRawBufferPointer(rebasing: picture.buffer.bytes[0..<layout.byteCount])
            frame.buffer.bytes.copyMemory(from: planes)
            return frame
        }
        frame.luma.initializeMemory(as: UInt8.self, repeating: luma)
        frame.cb.initializeMemory(as: UInt8.self, repeating: 128)
        frame.cr.initializeMemory(as: UInt8.self, repeating: 128)
        return frame
    }
}
