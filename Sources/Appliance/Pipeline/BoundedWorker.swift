import SwiftWingCore
import Synchronization

/// A fixed number of slots and one thread of its own for blocking, CPU-heavy work (scaling,
/// encoding, fsync), so that work never runs on the cooperative pool or the capture thread.
///
/// A press takes a slot first (`reserve()`); when every slot is taken the press is refused at once,
/// never queued behind the others. The slot is held while the frame is captured and processed and
/// is given back when the job ends.
public final class BoundedWorker: Sendable {
    public let capacity: Int
    /// Beaten on every job and every idle wake (`idleWake`), so the watchdog sees a stuck job.
    public let heartbeat: Heartbeat

    private struct State {
        var reserved = 0
        var stopped = false
    }

    private let state = Mutex(State())
    /// Runs the jobs; shut down once stopped and no reservation can still bring a job.
    private let thread: BlockingThread

    public init(name: String, capacity: Int, idleWake: Duration = .seconds(1)) {
        precondition(capacity > 0)
        self.capacity = capacity
        let heartbeat = Heartbeat(part: "the processing worker")
        self.heartbeat = heartbeat
        thread = BlockingThread(name: name, idleWake: idleWake) { heartbeat.beat() }
    }

    /// A slot, or `nil` when all `capacity` slots are taken. Never blocks.
    public func reserve() -> Reservation? {
        let granted = state.withLock { state -> Bool in
            guard !state.stopped, state.reserved < capacity else { return false }
            state.reserved += 1
            return true
        }
        return granted ? Reservation(worker: self) : nil
    }

    /// Slots taken right now.
    public var busy: Int { state.withLock { $0.reserved } }

    /// Lets the thread finish the jobs it has and exit; later reservations are refused.
    public func stop() {
        let idle = state.withLock { state in
            state.stopped = true
            return state.reserved == 0
        }
        if idle { thread.shutdown() }
    }

    /// Returns once the thread has run the last job and ended (after ``stop()``, when every
    /// reservation is released), or when the calling task is cancelled.
    public func waitUntilFinished() async {
        await thread.waitUntilFinished()
    }

    fileprivate func release() {
        let last = state.withLock { state in
            state.reserved -= 1
            return state.stopped && state.reserved == 0
        }
        if last { thread.shutdown() }
    }

    /// Runs `job` on the thread; a held reservation keeps the thread from ending, so it always runs.
    fileprivate func run<Value: Sendable>(_ job: @escaping @Sendable () throws -> Value) async throws -> Value {
        try await thread.run { Result { try job() } }.get()
    }

    /// One taken slot. Run at most one job through it; the slot is freed when that job ends, or
    /// when the reservation is dropped unused (a capture that failed).
    public final class Reservation: Sendable {
        private let worker: BoundedWorker
        private let released = Atomic<Bool>(false)

        fileprivate init(worker: BoundedWorker) {
            self.worker = worker
        }

        /// Runs `job` on the worker's thread and returns its result; frees the slot afterwards.
        public func run<Value: Sendable>(_ job: @escaping @Sendable () throws -> Value) async throws -> Value {
            defer { release() }
            return try await worker.run(job)
        }

        public func release() {
            if !released.exchange(true, ordering: .acquiringAndReleasing) { worker.release() }
        }

        deinit { release() }
    }
}
