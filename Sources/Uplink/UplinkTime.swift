import Foundation
import Store

/// Where the uplink gets its time: wall-clock dates for what it schedules and persists (a scan's next
/// attempt) and compares with the backend's (`Retry-After` as an HTTP date), and the injected
/// monotonic `Clock` for the waiting (a wall clock set while waiting, as at a Pi's first NTP sync,
/// does not stretch or cut the wait). Tests pass a clock they advance and a wall clock that follows it.
struct UplinkTime: Sendable {
    let clock: any Clock<Duration>
    let wall: WallClock

    var now: Date { wall.now }

    /// Returns at `deadline` (at once when it has passed); throws `CancellationError` when the task is cancelled.
    func sleep(until deadline: Date) async throws {
        try await sleep(for: deadline.timeIntervalSince(now))
    }

    func sleep(for seconds: TimeInterval) async throws {
        if seconds > 0 {
            try await clock.sleep(for: .nanoseconds(Int64((seconds * 1e9).rounded())))
        } else {
            try Task.checkCancellation()
        }
    }

    /// Whole milliseconds since `start`, for logs.
    func milliseconds(since start: Date) -> Int {
        Int((now.timeIntervalSince(start) * 1000).rounded())
    }
}
