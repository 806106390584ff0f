import Foundation
import Synchronization
import SwiftWingCore

/// A fixed number of slots and one thread of its own for blocking, CPU-heavy work (scaling,
/// encoding, fsync), so that work never runs on the cooperative pool or the capture thread.
///
/// A press takes a slot first (`reserve()`); when every slot is taken the press is refused at once,
/// never queued behind the others. The slot is held while the frame is captured and processed and
/// is given back when the job ends.
public final class BoundedWorker: Sendable {
    public let capacity: Int
    private let name: String
    /// Beaten on every job and every idle wake (`idleWake`), so the watchdog sees a stuck job.
    public let heartbeat: Heartbeat
    private let idleWake: TimeInterval

    private struct State {
        var reserved = 0
        var jobs: [@Sendable () -> Void] = []
        var stopped = false
    }

    private let state = Mutex(State())
    private let condition = NSCondition()
    /// The thread has run its last job and ended.
    private let finished = CompletionSignal()

    public init(name: String, capacity: Int, idleWake: Duration = .seconds(1)) {
        precondition(capacity > 0)
        self.name = name
        self.capacity = capacity
        self.heartbeat = Heartbeat(part: "the processing worker")
        self.idleWake = Double(idleWake.components.seconds) + Double(idleWake.components.attoseconds) / 1e18
        // Not joined: `waitUntilFinished()` awaits its end without blocking a caller's thread.
        _ = DeviceThread(name: name) { [weak self] in
            self?.runLoop()
            self?.finished.complete()
        }
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
        state.withLock { $0.stopped = true }
        condition.lock()
        condition.broadcast()
        condition.unlock()
    }

    /// Returns once the thread has run the last job and ended (after ``stop()``, when every
    /// reservation is released), or when the calling task is cancelled.
    public func waitUntilFinished() async {
        await finished.wait()
    }

    fileprivate func release() {
        condition.lock()
        state.withLock { $0.reserved -= 1 }
        condition.signal()
        condition.unlock()
    }

    fileprivate func enqueue(_ job: @escaping @Sendable () -> Void) {
        condition.lock()
        state.withLock { $0.jobs.append(job) }
        condition.signal()
        condition.unlock()
    }

    private func runLoop() {
        while true {
            condition.lock()
            var next: (@Sendable () -> Void)?
            while true {
                heartbeat.beat()
                // Exit only when stopped and no reservation can still bring a job.
                let (job, finished) = state.withLock { state -> ((@Sendable () -> Void)?, Bool) in
                    (state.jobs.isEmpty ? nil : state.jobs.removeFirst(), state.stopped && state.reserved == 0)
                }
                if let job { next = job; break }
                if finished { break }
                _ = condition.wait(until: Date(timeIntervalSinceNow: idleWake))
            }
            condition.unlock()
            guard let job = next else { return }
            job()
        }
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
            return try await withCheckedThrowingContinuation { continuation in
                worker.enqueue {
                    continuation.resume(with: Result { try job() })
                }
            }
        }

        public func release() {
            if !released.exchange(true, ordering: .acquiringAndReleasing) { worker.release() }
        }

        deinit { release() }
    }
}
