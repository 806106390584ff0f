import Dispatch
import Synchronization

/// The one way SwiftWing runs blocking work (SQLite commits with fsync, JPEG encoding, drawing a
/// frame) off the cooperative pool: a named ``DeviceThread`` that runs submitted jobs one at a time,
/// in order. Modelled on swift-nio's `NIOThreadPool` (`submit`, `runIfActive`) with one thread,
/// started through ``DeviceThread`` so its name is checked and shown by `top -H`.
///
/// After ``shutdown()`` the jobs already submitted still run (a press that was accepted is
/// processed), then the thread ends; jobs submitted later are refused (`NIOThreadPool` cancels
/// its queued jobs instead). A task cancelled while its ``runIfActive(_:)`` job waits in the
/// queue gets `CancellationError` at once and the job never runs; ``run(_:)`` is for work that
/// must finish once asked for (a commit), and ignores cancellation.
///
/// Dropping the last reference shuts the thread down too; it ends after its queue.
public final class BlockingThread: Sendable {
    /// What a submitted job is told: run, or only report (the thread is shut down, or its task was cancelled).
    public enum JobState: Sendable {
        case active
        case cancelled
    }

    /// A job was submitted after ``shutdown()``.
    public struct Inactive: Error, CustomStringConvertible {
        public let thread: String
        public var description: String {
            "the thread \(thread) was shut down and takes no more work (a bug: work was submitted during shutdown)"
        }
    }

    /// The thread's name (at most ``DeviceThread/maximumNameLength`` bytes).
    public let name: String
    private let core: Core
    private let thread: DeviceThread

    /// Starts the thread `name`. When `idleWake` is given the thread also wakes that often while it
    /// has no work; `beat` runs before every job and on every wake (a watchdog heartbeat).
    public init(name: String, idleWake: Duration? = nil, beat: (@Sendable () -> Void)? = nil) {
        self.name = name
        let core = Core(name: name, idleWake: idleWake, beat: beat)
        self.core = core
        thread = DeviceThread(name: name) {
            core.runLoop()
            core.finished.complete()
        }
    }

    deinit { core.shutdown() }

    /// Submits `job`: it runs on the thread with `.active`, or at once on the caller's thread with
    /// `.cancelled` when the thread is shut down.
    public func submit(_ job: @escaping @Sendable (JobState) -> Void) {
        if case .refused = core.enqueue(job, cancelled: false) { job(.cancelled) }
    }

    /// Runs `body` on the thread and returns its result. Throws ``Inactive`` after ``shutdown()``,
    /// and `CancellationError` when the calling task is cancelled before `body` starts (it then
    /// never runs); once started, `body` runs to its end.
    public func runIfActive<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        let id = Mutex<UInt64?>(nil)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
                let job: @Sendable (JobState) -> Void = { state in
                    switch state {
                    case .active: continuation.resume(with: Result { try body() })
                    case .cancelled: continuation.resume(throwing: CancellationError())
                    }
                }
                switch core.enqueue(job, cancelled: Task.isCancelled) {
                case .queued(let queued):
                    id.withLock { $0 = queued }
                    // A cancellation between the enqueue and here found no id to cancel.
                    if Task.isCancelled { core.cancel(queued) }
                case .refused: continuation.resume(throwing: Inactive(thread: name))
                case .cancelled: continuation.resume(throwing: CancellationError())
                }
            }
        } onCancel: {
            if let queued = id.withLock({ $0 }) { core.cancel(queued) }
        }
    }

    /// Runs `body` on the thread and returns its result, whether or not the calling task is
    /// cancelled meanwhile. Throws ``Inactive`` only after ``shutdown()``.
    public func run<T: Sendable>(_ body: @escaping @Sendable () -> T) async throws(Inactive) -> T {
        let result: Result<T, Inactive> = await withCheckedContinuation { continuation in
            let job: @Sendable (JobState) -> Void = { [name] state in
                switch state {
                case .active: continuation.resume(returning: .success(body()))
                case .cancelled: continuation.resume(returning: .failure(Inactive(thread: name)))
                }
            }
            if case .refused = core.enqueue(job, cancelled: false) { job(.cancelled) }
        }
        return try result.get()
    }

    /// Refuses new jobs; the thread runs the ones it has, then ends. A second call does nothing.
    public func shutdown() {
        core.shutdown()
    }

    /// Whether ``shutdown()`` was called.
    public var isShutDown: Bool { core.isShutDown }

    /// Whether jobs wait behind the one running (for tests).
    var hasQueuedJobs: Bool { core.hasQueuedJobs }

    /// Completes when the thread has ended (for tests that drop the last reference).
    var finishedSignal: CompletionSignal { core.finished }

    /// Returns once the thread has ended (after ``shutdown()`` and its last job), or when the
    /// calling task is cancelled. Never blocks a thread.
    public func waitUntilFinished() async {
        await core.finished.wait()
    }

    /// Blocks the calling thread until the thread has ended (after ``shutdown()``); for synchronous
    /// stops. Never call it on the cooperative pool or from a job.
    public func join() {
        thread.join()
    }

    /// Waits, blocking the calling thread, for `body` to finish as a task, and returns its result:
    /// the other direction, for synchronous code (a command's `main`, a device thread) that must
    /// call async code. Never call it on the cooperative pool: the task may need the thread it blocks.
    public static func waitForTask<Value: Sendable, Failure: Error>(
        _ body: @escaping @Sendable () async throws(Failure) -> Value
    ) -> Result<Value, Failure> {
        let outcome = Mutex<Result<Value, Failure>?>(nil)
        let done = DispatchSemaphore(value: 0)
        Task {
            let result: Result<Value, Failure>
            do throws(Failure) {
                result = .success(try await body())
            } catch {
                result = .failure(error)
            }
            outcome.withLock { $0 = result }
            done.signal()
        }
        done.wait()
        return outcome.withLock { $0 }!
    }

    /// The queue and its wake-up, shared by the handle and the thread (which holds only this, so
    /// dropping the handle can shut the thread down).
    private final class Core: Sendable {
        private struct Job {
            let id: UInt64
            let body: @Sendable (JobState) -> Void
        }

        private struct State {
            var jobs: [Job] = []
            var nextID: UInt64 = 0
            var shutDown = false
        }

        enum Enqueued {
            case queued(UInt64)
            /// The thread is shut down.
            case refused
            /// The caller was cancelled already.
            case cancelled
        }

        let name: String
        let finished = CompletionSignal()
        private let idleWake: Duration?
        private let beat: (@Sendable () -> Void)?
        private let state = Mutex(State())
        private let wake: WakeEvent

        init(name: String, idleWake: Duration?, beat: (@Sendable () -> Void)?) {
            self.name = name
            self.idleWake = idleWake
            self.beat = beat
            do {
                wake = try WakeEvent()
            } catch {
                preconditionFailure("thread \(name): no eventfd for its wake-ups (\(error)): raise the open-file limit")
            }
        }

        var isShutDown: Bool { state.withLock { $0.shutDown } }

        var hasQueuedJobs: Bool { state.withLock { !$0.jobs.isEmpty } }

        /// Queues `body` unless the thread is shut down or the caller is `cancelled`; the caller
        /// reports a refusal (`body` is not called).
        func enqueue(_ body: @escaping @Sendable (JobState) -> Void, cancelled: Bool) -> Enqueued {
            let outcome = state.withLock { state -> Enqueued in
                if state.shutDown { return .refused }
                if cancelled { return .cancelled }
                state.nextID += 1
                state.jobs.append(Job(id: state.nextID, body: body))
                return .queued(state.nextID)
            }
            if case .queued = outcome { wake.signal() }
            return outcome
        }

        /// Takes job `id` out of the queue, if it has not started, and tells it it was cancelled.
        func cancel(_ id: UInt64) {
            let job = state.withLock { state -> Job? in
                guard let index = state.jobs.firstIndex(where: { $0.id == id }) else { return nil }
                return state.jobs.remove(at: index)
            }
            job?.body(.cancelled)
        }

        func shutdown() {
            let first = state.withLock { state -> Bool in
                defer { state.shutDown = true }
                return !state.shutDown
            }
            if first { wake.signal() }
        }

        func runLoop() {
            while true {
                beat?()
                // Taken out of the queue before it runs: what a job holds (a frame) goes when it ends.
                let (job, finished) = state.withLock { state -> (Job?, Bool) in
                    state.jobs.isEmpty ? (nil, state.shutDown) : (state.jobs.removeFirst(), false)
                }
                if let job {
                    job.body(.active)
                    continue
                }
                if finished { return }
                // A job or a shutdown signalled after the look above leaves the event readable.
                let deadline = idleWake.map { MonotonicInstant.now().advanced(byNanoseconds: $0.wholeNanoseconds) }
                _ = try? waitReadable([wake.descriptor], until: deadline)
                wake.drain()
            }
        }
    }
}
