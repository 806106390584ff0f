import Foundation
import Store
import SwiftWingCore
import Synchronization

/// A `Clock` that moves only when a test advances it. Sleepers wake, in deadline order, when an
/// advance reaches their deadline, so a test steps through timeouts, backoffs and intervals
/// without waiting for them, whatever the machine's load; and a test shows that nothing happens
/// before a deadline by not advancing to it, instead of sleeping and hoping.
///
/// Threads that read it (a panel thread between frames) see the new time at their next turn.
public final class ManualClock: Clock, Sendable {
    /// Time since the clock was made: the instants an ``ErasedClock`` of it reads, whenever it was wrapped.
    public typealias Instant = ErasedClock.Instant

    private struct Sleeper {
        let id: UInt64
        let deadline: Instant
        let continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var now = Instant(offset: .zero)
        var sleepers: [Sleeper] = []
        var nextID: UInt64 = 0
    }

    private let state = Mutex(State())

    public init() {}

    public var now: Instant { state.withLock { $0.now } }
    public var minimumResolution: Duration { .zero }

    /// How many tasks sleep on this clock now.
    public var sleeperCount: Int { state.withLock { $0.sleepers.count } }

    /// The earliest deadline a task sleeps until, if any.
    public var nextDeadline: Instant? { state.withLock { $0.sleepers.map(\.deadline).min() } }

    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
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

    /// Moves time forward by `duration` and wakes every sleeper whose deadline it reaches.
    public func advance(by duration: Duration) {
        precondition(duration >= .zero, "a clock never goes back")
        let due = state.withLock { state -> [Sleeper] in
            state.now = state.now.advanced(by: duration)
            let now = state.now
            let due = state.sleepers.filter { $0.deadline <= now }.sorted { $0.deadline < $1.deadline }
            state.sleepers.removeAll { $0.deadline <= now }
            return due
        }
        for sleeper in due { sleeper.continuation.resume() }
    }

    /// Moves time forward by `seconds` (for tests written in the wall clock's terms).
    public func advance(bySeconds seconds: TimeInterval) {
        advance(by: .nanoseconds(Int64((seconds * 1e9).rounded())))
    }

    /// Returns once `count` tasks sleep on this clock (the code under test has reached its wait).
    public func waitForSleepers(_ count: Int = 1) async {
        // Polls a counter the code under test changes on other threads: nothing else to await.
        while sleeperCount < count { try? await Task.sleep(for: .milliseconds(1)) }
    }

    /// Wall time that starts at `start` and moves only with this clock, for code that stores dates.
    public func wallClock(from start: Date = Date(timeIntervalSince1970: 1_800_000_000)) -> WallClock {
        WallClock { [self] in start.addingTimeInterval(now.offset.secondsAsInterval) }
    }
}

extension Duration {
    /// In seconds as a `TimeInterval`.
    var secondsAsInterval: TimeInterval {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
