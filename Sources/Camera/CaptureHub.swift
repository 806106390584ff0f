import SwiftWingCore
import Synchronization

/// The meeting point of a camera thread and the async callers: pending captures, the status, its
/// observers, and the event that wakes the thread (for stop, and for a new capture's deadline).
///
/// Callers never wait on the thread and the thread never waits on a caller: the thread resumes
/// continuations, callers only take the lock for bookkeeping.
final class CaptureHub: Sendable {
    /// A waiting capture: its continuation and the timeout it asked for (for the error text).
    struct Waiter: Sendable {
        let continuation: CheckedContinuation<Result<YUV420Frame, CameraError>, Never>
        let timeout: Duration

        func resume(returning result: Result<YUV420Frame, CameraError>) {
            continuation.resume(returning: result)
        }
    }

    enum Lifecycle: Sendable {
        case idle, starting, running, stopping, stopped
    }

    struct State {
        var requests = CaptureRequests<Waiter>()
        var nextID: UInt64 = 0
        var status: CameraStatus
        var lifecycle = Lifecycle.idle
        var observers: [UInt64: AsyncStream<CameraStatus>.Continuation] = [:]
        var exitWaiters: [CheckedContinuation<Void, Never>] = []
        var exited = false
    }

    let device: String
    let state: Mutex<State>
    /// Signalled by callers to wake the thread's poll; drained by the thread.
    let wakeEvent: WakeEvent

    init(device: String) {
        self.device = device
        self.state = Mutex(State(status: CameraStatus(device: device)))
        do {
            self.wakeEvent = try WakeEvent()
        } catch {
            preconditionFailure("\(error): the process is out of file descriptors")
        }
    }

    // MARK: caller side

    func capture(after t0: MonotonicInstant, timeout: Duration) async throws(CameraError) -> YUV420Frame {
        let id = state.withLock { state in
            state.nextID += 1
            return state.nextID
        }
        let deadline = MonotonicInstant.now().adding(timeout)
        let result: Result<YUV420Frame, CameraError> = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let waiter = Waiter(continuation: continuation, timeout: timeout)
                let refusal: CameraError? = state.withLock { state in
                    guard state.lifecycle == .running else { return .notRunning(device: device) }
                    if case .reopening(let reason, _, _) = state.status.state {
                        return .cameraUnavailable(device: device, reason: reason)
                    }
                    if Task.isCancelled { return .cancelled }
                    state.requests.add(id: id, after: t0, deadline: deadline, waiter: waiter)
                    return nil
                }
                if let refusal {
                    waiter.resume(returning: .failure(refusal))
                } else {
                    wake()  // the thread's poll timeout must now cover this deadline
                }
            }
        } onCancel: {
            let waiter = state.withLock { $0.requests.remove(id: id) }
            waiter?.resume(returning: .failure(.cancelled))
        }
        return try result.get()
    }

    var status: CameraStatus {
        state.withLock { $0.status }
    }

    func statusUpdates() -> AsyncStream<CameraStatus> {
        let (stream, continuation) = AsyncStream.makeStream(
            of: CameraStatus.self, bufferingPolicy: .bufferingNewest(16))
        let id: UInt64? = state.withLock { state in
            continuation.yield(state.status)
            if state.lifecycle == .stopped { return nil }
            state.nextID += 1
            state.observers[state.nextID] = continuation
            return state.nextID
        }
        guard let id else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.observers.removeValue(forKey: id) }
        }
        return stream
    }

    /// Marks the hub stopping and wakes the thread. Returns `false` when it never ran.
    func requestStop() -> Bool {
        let wasRunning = state.withLock { state -> Bool in
            switch state.lifecycle {
            case .idle:
                state.lifecycle = .stopped
                return false
            case .stopped:
                return false
            case .starting, .running, .stopping:
                state.lifecycle = .stopping
                return true
            }
        }
        wake()
        return wasRunning
    }

    /// Waits until the thread called ``threadExited()``.
    func waitForExit() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let done = state.withLock { state -> Bool in
                if state.exited { return true }
                state.exitWaiters.append(continuation)
                return false
            }
            if done { continuation.resume() }
        }
    }

    func wake() {
        wakeEvent.signal()
    }

    // MARK: thread side

    var isStopRequested: Bool {
        state.withLock { $0.lifecycle == .stopping || $0.lifecycle == .stopped }
    }

    /// Moves from idle to starting; `false` when already started or stopped.
    func beginStarting() -> Bool {
        state.withLock { state in
            guard state.lifecycle == .idle else { return false }
            state.lifecycle = .starting
            return true
        }
    }

    func markRunning(format: NegotiatedFormat?) {
        updateStatus { status in
            status.state = .streaming
            status.format = format
        }
        state.withLock { state in
            if state.lifecycle == .starting { state.lifecycle = .running }
        }
    }

    /// Resets the wake event after the poll reported it readable.
    func drainWakeups() {
        wakeEvent.drain()
    }

    func wantsFrame(at timestamp: MonotonicInstant) -> Bool {
        state.withLock { $0.requests.wantsFrame(at: timestamp) }
    }

    var nextDeadline: MonotonicInstant? {
        state.withLock { $0.requests.nextDeadline }
    }

    /// Hands `frame` to every request it satisfies; returns how many.
    @discardableResult
    func deliver(_ frame: YUV420Frame) -> Int {
        let waiters = state.withLock { state in
            let waiters = state.requests.takeSatisfied(by: frame.timestamp)
            if !waiters.isEmpty { state.status.framesCaptured += 1 }
            return waiters
        }
        for waiter in waiters { waiter.resume(returning: .success(frame)) }
        return waiters.count
    }

    /// Fails the requests a frame at `timestamp` would have satisfied (no buffer to copy it into).
    func fail(satisfiedBy timestamp: MonotonicInstant, with error: CameraError) {
        let waiters = state.withLock { $0.requests.takeSatisfied(by: timestamp) }
        for waiter in waiters { waiter.resume(returning: .failure(error)) }
    }

    func expireRequests(now: MonotonicInstant = .now()) {
        let (waiters, received) = state.withLock { ($0.requests.takeExpired(at: now), $0.status.framesReceived) }
        for waiter in waiters {
            waiter.resume(
                returning: .failure(.timedOut(device: device, after: waiter.timeout, framesReceived: received)))
        }
    }

    func failAll(with error: CameraError) {
        let waiters = state.withLock { $0.requests.takeAll() }
        for waiter in waiters { waiter.resume(returning: .failure(error)) }
    }

    /// Changes the status; observers hear about it when `announce` (state changes, not counters).
    func updateStatus(announce: Bool = true, _ body: (inout CameraStatus) -> Void) {
        state.withLock { state in
            body(&state.status)
            if announce {
                for observer in state.observers.values { observer.yield(state.status) }
            }
        }
    }

    func count(_ body: (inout CameraStatus) -> Void) {
        updateStatus(announce: false, body)
    }

    /// The thread's last act: everything pending fails, observers finish, `stop()` returns.
    func threadExited(finalError: CameraError) {
        failAll(with: finalError)
        let (observers, exitWaiters) = state.withLock { state in
            state.status.state = .stopped
            state.lifecycle = .stopped
            state.exited = true
            for observer in state.observers.values { observer.yield(state.status) }
            let result = (Array(state.observers.values), state.exitWaiters)
            state.observers.removeAll()
            state.exitWaiters.removeAll()
            return result
        }
        // Requests that slipped in between failAll and the lifecycle change.
        failAll(with: finalError)
        for observer in observers { observer.finish() }
        for waiter in exitWaiters { waiter.resume() }
    }

    /// The camera's thread went round its loop: a sign of life for the watchdog (no observers told).
    func loopTurned() {
        count { $0.lastLoopTurn = .now() }
    }

    /// Sleeps on the wake event until `until` (or a wake-up), failing captures whose deadline passes.
    func sleep(until: MonotonicInstant) {
        while !isStopRequested {
            let now = MonotonicInstant.now()
            expireRequests(now: now)
            if now >= until { return }
            var target = until
            if let deadline = nextDeadline, deadline < target { target = deadline }
            if let ready = try? waitReadable([wakeEvent.descriptor], until: target), !ready.isEmpty { drainWakeups() }
        }
    }
}
