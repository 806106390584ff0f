import Foundation

/// Where the uplink gets its time. Wall-clock dates because what it schedules is persisted (a
/// scan's next attempt) and compared with the backend's (`Retry-After` as an HTTP date); waiting
/// goes through the same clock, so tests move time forward instead of sleeping through it.
public protocol UplinkClock: Sendable {
    var now: Date { get }
    /// Returns at `deadline` (at once when it has passed); throws `CancellationError` when the task is cancelled.
    func sleep(until deadline: Date) async throws
}

extension UplinkClock {
    func sleep(for seconds: TimeInterval) async throws {
        try await sleep(until: now.addingTimeInterval(seconds))
    }

    /// Whole milliseconds since `start`, for logs.
    func milliseconds(since start: Date) -> Int {
        Int((now.timeIntervalSince(start) * 1000).rounded())
    }
}

/// The system's clock: `Date()` for now, and a monotonic sleep for the wait until a deadline (a wall
/// clock set while waiting, as at a Pi's first NTP sync, does not stretch or cut the wait).
public struct SystemUplinkClock: UplinkClock {
    public init() {}

    public var now: Date { Date() }

    public func sleep(until deadline: Date) async throws {
        let seconds = deadline.timeIntervalSinceNow
        if seconds > 0 {
            try await Task.sleep(for: .seconds(seconds))
        } else {
            try Task.checkCancellation()
        }
    }
}
