import Controls
import SwiftWingCore
import Synchronization

/// An output line that records every level it is driven to, stamped with a clock (a ``ManualClock``
/// in pattern tests, the player's real one in the timer thread's test). Can be told to fail like a
/// vanished GPIO line.
public final class FakeOutput: DigitalOutput {
    public struct Change: Sendable, Equatable {
        public var active: Bool
        public var time: ErasedClock.Instant
    }

    private let clock: ErasedClock
    private let state = Mutex<(changes: [Change], failing: Bool)>(([], false))

    public init(clock: any Clock<Duration> = ContinuousClock()) {
        self.clock = ErasedClock(clock)
    }

    public func set(active: Bool) throws(SystemCallError) {
        let time = clock.now
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
    public func timeline(since origin: ErasedClock.Instant) -> [(Double, Bool)] {
        changes.map { (origin.duration(to: $0.time) / .milliseconds(1), $0.active) }
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
