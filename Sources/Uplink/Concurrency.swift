import Foundation
import Store
import SwiftWingCore
import Synchronization

/// Runs blocking Store work (SQLite commits with fsync, spool reads and unlinks) in order on a
/// thread of its own, so it never blocks the cooperative pool the uplink's tasks run on. Work once
/// asked for runs to its end, even when the asking task is cancelled (a commit is not half-made).
final class StoreLane: Sendable {
    private let thread: BlockingThread

    /// `name`: the thread's, at most 15 bytes (`top -H` shows it).
    init(name: String) {
        thread = BlockingThread(name: name)
    }

    @discardableResult
    func run<T: Sendable>(_ body: @escaping @Sendable () throws(StoreError) -> T) async throws(StoreError) -> T {
        let result: Result<T, StoreError>
        do {
            result = try await thread.run { Result { () throws(StoreError) -> T in try body() } }
        } catch {
            // The thread shuts down only when the lane goes, so no caller can see this.
            preconditionFailure("\(error)")
        }
        return try result.get()
    }
}

/// Wakes the scheduler: a new scan, a free slot, the network back, a person's retry. Rings are
/// not counted: one ring or many before the next `wait` wake it once.
final class Doorbell: Sendable {
    private struct State {
        var rung = false
        var waiter: CheckedContinuation<Void, Never>?
    }

    private let state = Mutex(State())

    func ring() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            if let waiter = state.waiter {
                state.waiter = nil
                return waiter
            }
            state.rung = true
            return nil
        }
        waiter?.resume()
    }

    /// Returns when rung (or already rung since the last wait), at `deadline` on `clock`, or on
    /// cancellation. One waiter at a time (the scheduler).
    func wait(until deadline: Date, on clock: UplinkTime) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { try? await clock.sleep(until: deadline) }
            group.addTask { await self.waitForRing() }
            await group.next()
            group.cancelAll()
            // Whichever finished first, the other must end too: a pending ring-waiter is released.
            self.releaseWaiter()
        }
    }

    private func waitForRing() async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withLock { state -> Bool in
                    if state.rung || Task.isCancelled {
                        state.rung = false
                        return true
                    }
                    state.waiter = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            self.releaseWaiter()
        }
    }

    private func releaseWaiter() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
    }
}
