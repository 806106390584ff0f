import Foundation
import Synchronization
import Uplink

/// An ``UplinkClock`` that moves only when a test advances it. Sleepers wake, in deadline order,
/// when an advance reaches their deadline, so a test steps through backoffs, rate-limit pauses and
/// poll intervals without waiting for them, whatever the machine's load.
public final class ManualUplinkClock: UplinkClock {
    private struct Sleeper {
        let id: UInt64
        let deadline: Date
        let continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var now: Date
        var sleepers: [Sleeper] = []
        var nextID: UInt64 = 0
    }

    private let state: Mutex<State>

    /// Starts at `start` (by default a fixed date, so runs are alike).
    public init(start: Date = Date(timeIntervalSince1970: 1_800_000_000)) {
        state = Mutex(State(now: start))
    }

    public var now: Date { state.withLock { $0.now } }

    /// How many tasks sleep on this clock now.
    public var sleeperCount: Int { state.withLock { $0.sleepers.count } }

    /// The earliest deadline a task sleeps until, if any.
    public var nextDeadline: Date? { state.withLock { $0.sleepers.map(\.deadline).min() } }

    public func sleep(until deadline: Date) async throws {
        let id = state.withLock { state in
            defer { state.nextID += 1 }
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let verdict = state.withLock { state -> Result<Void, any Error>? in
                    if Task.isCancelled { return .failure(CancellationError()) }
                    if deadline <= state.now { return .success(()) }
                    state.sleepers.append(Sleeper(id: id, deadline: deadline, continuation: continuation))
                    return nil
                }
                if let verdict { continuation.resume(with: verdict) }
            }
        } onCancel: {
            let sleeper = state.withLock { state -> Sleeper? in
                guard let index = state.sleepers.firstIndex(where: { $0.id == id }) else { return nil }
                return state.sleepers.remove(at: index)
            }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Moves time forward by `seconds` and wakes every sleeper whose deadline it reaches.
    public func advance(by seconds: TimeInterval) {
        precondition(seconds >= 0, "a clock never goes back")
        let due = state.withLock { state -> [Sleeper] in
            state.now = state.now.addingTimeInterval(seconds)
            let now = state.now
            let due = state.sleepers.filter { $0.deadline <= now }.sorted { $0.deadline < $1.deadline }
            state.sleepers.removeAll { $0.deadline <= now }
            return due
        }
        for sleeper in due { sleeper.continuation.resume() }
    }
}
