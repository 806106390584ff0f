import SwiftWingCore

/// The pending "give me the first frame at or after t0" requests, as pure bookkeeping.
///
/// The capture loop asks ``wantsFrame(at:)`` for each dequeued frame (cheap: no copy when nobody
/// waits or every waiter pressed after the frame was taken), copies the frame only if so, then
/// ``takeSatisfied(by:)`` hands it to exactly the requests it satisfies. A frame older than a
/// request's press never satisfies it, so a stale frame sitting in a queued driver buffer cannot
/// answer a press. `Waiter` is whatever resumes the caller (a continuation in the cameras, a plain
/// value in tests).
public struct CaptureRequests<Waiter> {
    public struct Request {
        public var id: UInt64
        /// The press: only frames with timestamp ≥ this satisfy the request.
        public var after: MonotonicInstant
        /// When the request times out.
        public var deadline: MonotonicInstant
        public var waiter: Waiter
    }

    private var pending: [Request] = []

    public init() {}

    public var count: Int { pending.count }
    public var isEmpty: Bool { pending.isEmpty }

    public mutating func add(id: UInt64, after: MonotonicInstant, deadline: MonotonicInstant, waiter: Waiter) {
        pending.append(Request(id: id, after: after, deadline: deadline, waiter: waiter))
    }

    /// Removes one request (cancelled by its caller).
    public mutating func remove(id: UInt64) -> Waiter? {
        guard let index = pending.firstIndex(where: { $0.id == id }) else { return nil }
        return pending.remove(at: index).waiter
    }

    /// Whether a frame taken at `timestamp` satisfies any pending request (press at or before it).
    public func wantsFrame(at timestamp: MonotonicInstant) -> Bool {
        pending.contains { $0.after <= timestamp }
    }

    /// Removes and returns the requests a frame taken at `timestamp` satisfies, oldest request first.
    public mutating func takeSatisfied(by timestamp: MonotonicInstant) -> [Waiter] {
        take { $0.after <= timestamp }
    }

    /// Removes and returns the requests whose deadline is at or before `now`.
    public mutating func takeExpired(at now: MonotonicInstant) -> [Waiter] {
        take { $0.deadline <= now }
    }

    /// Removes and returns every request (the camera went away or stops).
    public mutating func takeAll() -> [Waiter] {
        defer { pending.removeAll() }
        return pending.map(\.waiter)
    }

    /// The earliest deadline, for the capture loop's poll timeout.
    public var nextDeadline: MonotonicInstant? {
        pending.lazy.map(\.deadline).min()
    }

    private mutating func take(where predicate: (Request) -> Bool) -> [Waiter] {
        var taken: [Waiter] = []
        pending.removeAll { request in
            guard predicate(request) else { return false }
            taken.append(request.waiter)
            return true
        }
        return taken
    }
}

extension CaptureRequests: Sendable where Waiter: Sendable {}
extension CaptureRequests.Request: Sendable where Waiter: Sendable {}

/// Reopen delays: 0.5 s, doubling each failed attempt, at most 10 s; reset once frames flow again.
public struct Backoff: Hashable, Sendable {
    public var initial: Duration
    public var maximum: Duration
    /// Failed attempts since the last reset.
    public private(set) var attempts = 0

    public init(initial: Duration = .milliseconds(500), maximum: Duration = .seconds(10)) {
        precondition(initial > .zero && maximum >= initial)
        self.initial = initial
        self.maximum = maximum
    }

    /// The delay before the next attempt; counts the attempt.
    public mutating func next() -> Duration {
        var delay = initial
        var doublings = attempts
        while doublings > 0 && delay < maximum {
            delay = delay * 2
            doublings -= 1
        }
        attempts += 1
        return min(delay, maximum)
    }

    public mutating func reset() {
        attempts = 0
    }
}

extension MonotonicInstant {
    func adding(_ duration: Duration) -> MonotonicInstant {
        advanced(byNanoseconds: duration.wholeNanoseconds)
    }
}
