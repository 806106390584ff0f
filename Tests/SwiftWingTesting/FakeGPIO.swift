import Controls
import Synchronization
import SwiftWingCore

/// A clock that moves only when a test says so.
public final class FakeClock: FeedbackClock {
    private let current: Mutex<MonotonicInstant>

    public init(start: MonotonicInstant = MonotonicInstant(nanoseconds: 1_000_000_000)) {
        current = Mutex(start)
    }

    public func now() -> MonotonicInstant { current.withLock { $0 } }

    public func advance(milliseconds: Double) {
        current.withLock { $0 = $0.advanced(byNanoseconds: Int64(milliseconds * 1_000_000)) }
    }

    public func set(_ instant: MonotonicInstant) {
        current.withLock { $0 = instant }
    }
}

/// An output line that records every level it is driven to, stamped with a clock (a fake one in
/// pattern tests, the real one in latency tests). Can be told to fail like a vanished GPIO line.
public final class FakeOutput: DigitalOutput {
    public struct Change: Sendable, Equatable {
        public var active: Bool
        public var time: MonotonicInstant
    }

    private let clock: any FeedbackClock
    private let state = Mutex<(changes: [Change], failing: Bool)>(([], false))

    public init(clock: any FeedbackClock = SystemFeedbackClock()) {
        self.clock = clock
    }

    public func set(active: Bool) throws(SystemCallError) {
        let time = clock.now()
        let failing = state.withLock { state -> Bool in
            if !state.failing { state.changes.append(Change(active: active, time: time)) }
            return state.failing
        }
        if failing { throw SystemCallError("gpiod_line_set_value", subject: "fake", errno: 19) }
    }

    public var changes: [Change] { state.withLock { $0.changes } }
    public var isActive: Bool { state.withLock { $0.changes.last?.active ?? false } }

    public func fail(_ failing: Bool) { state.withLock { $0.failing = failing } }

    /// The changes as (milliseconds since `origin`, level), for readable expectations.
    public func timeline(since origin: MonotonicInstant) -> [(Double, Bool)] {
        changes.map { (Double($0.time.nanoseconds(since: origin)) / 1e6, $0.active) }
    }
}

/// A shutter input a test presses by hand; implements the same protocol as the GPIO and key shutters.
public final class FakeShutter: ShutterInput {
    private let handler = Mutex<(@Sendable (ShutterEvent) -> Void)?>(nil)
    public let name = "fake shutter"

    public init() {}

    public func start(_ handler: @escaping @Sendable (ShutterEvent) -> Void) throws {
        self.handler.withLock { $0 = handler }
    }

    public func stop() { handler.withLock { $0 = nil } }

    /// Delivers an event as an input thread would; returns false when not started.
    @discardableResult
    public func emit(_ event: ShutterEvent) -> Bool {
        guard let handler = handler.withLock({ $0 }) else { return false }
        handler(event)
        return true
    }
}
