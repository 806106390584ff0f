import Synchronization

/// Something that happens once (a worker thread ended, a first start was tried) and that async
/// callers await instead of polling for it.
public final class CompletionSignal: Sendable {
    private struct State {
        var complete = false
        var waiters: [UInt64: CheckedContinuation<Void, Never>] = [:]
        var nextID: UInt64 = 0
    }

    private let state = Mutex(State())

    public init() {}

    public var isComplete: Bool { state.withLock { $0.complete } }

    /// Marks it complete and resumes every waiter; later calls do nothing.
    public func complete() {
        let waiters = state.withLock { state in
            state.complete = true
            defer { state.waiters.removeAll() }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Returns once complete, or as soon as the calling task is cancelled.
    public func wait() async {
        let id = state.withLock { state in
            state.nextID += 1
            return state.nextID
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let waiting = state.withLock { state -> Bool in
                    guard !state.complete, !Task.isCancelled else { return false }
                    state.waiters[id] = continuation
                    return true
                }
                if !waiting { continuation.resume() }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.resume()
        }
    }

    /// Waits until complete or until `deadline` on `clock`, whichever comes first; returns whether it is complete.
    public func wait<C: Clock>(until deadline: C.Instant, on clock: C) async -> Bool {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.wait() }
            group.addTask { try? await clock.sleep(until: deadline, tolerance: nil) }
            await group.next()
            group.cancelAll()
        }
        return isComplete
    }
}
