import SwiftWingCore

/// What a shutter input reports once its edges have been debounced.
public enum ShutterEvent: Sendable, Equatable {
    /// A press, once per press, stamped with the first edge of the press (the kernel's timestamp).
    case press(ShutterPress)
    /// The same press is still held at the long-press threshold: the second action. Emitted once,
    /// after (never instead of) the `.press` of the same press.
    case longPress(ShutterPress)
    /// The same press is still held at the extended-hold threshold (the third action, after the long press's).
    /// Emitted once, after the `.longPress` of the same press when long presses are on.
    case extendedHold(ShutterPress)
}

/// Timing of the press detector. All values are on the kernel's event timestamps, not on when the
/// program happened to read the events.
public struct PressTiming: Sendable, Equatable {
    /// How long the contact must stay closed before a press counts. Shorter pulses (contact
    /// glitches, interference on a long wire) are ignored. 0 counts a press at its first edge
    /// (lowest latency, no glitch filter; right for key devices, which debounce themselves).
    public var glitchNanoseconds: Int64
    /// How long the contact must stay open before the button counts as released, so release bounce
    /// or a trembling finger cannot become a second press.
    public var debounceNanoseconds: Int64
    /// How long a press must be held for the second action; `nil` turns long presses off.
    public var longPressNanoseconds: Int64?
    /// How long a press must be held for the third action; `nil` (the default) turns it off.
    public var extendedHoldNanoseconds: Int64?

    public init(
        glitchMilliseconds: Int = 8, debounceMilliseconds: Int = 30, longPressMilliseconds: Int? = 2000,
        extendedHoldMilliseconds: Int? = nil
    ) {
        self.glitchNanoseconds = Int64(glitchMilliseconds) * 1_000_000
        self.debounceNanoseconds = Int64(debounceMilliseconds) * 1_000_000
        self.longPressNanoseconds = longPressMilliseconds.map { Int64($0) * 1_000_000 }
        self.extendedHoldNanoseconds = extendedHoldMilliseconds.map { Int64($0) * 1_000_000 }
    }

    /// For key devices (gpio-keys, USB and Bluetooth HID): the device debounces, so a key-down is a press.
    public static func keys(longPressMilliseconds: Int? = 2000, extendedHoldMilliseconds: Int? = nil) -> PressTiming {
        PressTiming(
            glitchMilliseconds: 0, debounceMilliseconds: 0, longPressMilliseconds: longPressMilliseconds,
            extendedHoldMilliseconds: extendedHoldMilliseconds)
    }
}

/// Debounce and long press as a pure state machine on timestamps: fed levels with their kernel
/// timestamps (and the passing of time), it emits one `.press` per press, at most one `.longPress`
/// and at most one `.extendedHold`.
///
/// - A press starts at the first active edge (its `t0`) and counts once the line has stayed active
///   for `glitch` since its last edge; a pulse that ends sooner is ignored.
/// - A counted press is over once the line has stayed inactive for `debounce` since its last edge;
///   any edges before that (release bounce) belong to the same press. A held button never repeats.
/// - `.longPress(t0)` fires when the line is still active `longPress` after `t0`, and `.extendedHold(t0)`
///   when it is still active `extendedHold` after `t0` (a hold that long has given its long press first).
///
/// Levels rather than edge types are fed in, because the GPIO v1 uAPI (libgpiod 1.6) reads the level
/// after the interrupt and can report two rising edges in a row when a contact bounces fast; a
/// repeated level is just more activity at that time.
public struct PressDetector: Sendable {
    enum State: Sendable, Equatable {
        /// Released and settled.
        case idle
        /// Active edge seen at `start`; not yet stable. `level` is the latest level, `lastEdge` its time.
        case pending(start: MonotonicInstant, level: Bool, lastEdge: MonotonicInstant)
        /// Counted. `level` and `lastEdge` track release bounce; `longPressDone` and `holdDone` once each fired.
        case pressed(
            start: MonotonicInstant, level: Bool, lastEdge: MonotonicInstant, longPressDone: Bool, holdDone: Bool)
    }

    public let timing: PressTiming
    public let source: ShutterPress.Source
    private(set) var state: State = .idle
    /// Pulses that ended before the glitch filter let them count as a press; for diagnostics.
    public private(set) var ignoredGlitches = 0

    public init(timing: PressTiming, source: ShutterPress.Source) {
        self.timing = timing
        self.source = source
    }

    /// The line's level as last reported (`false` when idle).
    public var level: Bool {
        switch state {
        case .idle: false
        case .pending(_, let level, _), .pressed(_, let level, _, _, _): level
        }
    }

    /// Whether the detector currently considers the button held (counted and not yet released).
    public var isHeld: Bool {
        if case .pressed = state { return true }
        return false
    }

    /// The line's level changed (or was reported) at `time`: `true` is active (pressed).
    /// Times must not go backwards; an older time is treated as `time` of the latest edge.
    public mutating func edge(active: Bool, at time: MonotonicInstant) -> [ShutterEvent] {
        var events = advance(to: time)
        switch state {
        case .idle:
            guard active else { return events }
            state = .pending(start: time, level: true, lastEdge: time)
            if timing.glitchNanoseconds == 0 {
                // No glitch filter: the edge itself is the press.
                events += advance(to: time)
            }
        case .pending(let start, _, let lastEdge):
            state = .pending(start: start, level: active, lastEdge: max(time, lastEdge))
            if active, timing.glitchNanoseconds == 0 { events += advance(to: time) }
        case .pressed(let start, _, let lastEdge, let done, let holdDone):
            state = .pressed(
                start: start, level: active, lastEdge: max(time, lastEdge), longPressDone: done, holdDone: holdDone)
            if !active, timing.debounceNanoseconds == 0 { events += advance(to: time) }
        }
        return events
    }

    /// Time has passed without edges up to `now` (the poll loop's timer fired). Safe to call at any time.
    public mutating func advance(to now: MonotonicInstant) -> [ShutterEvent] {
        var events: [ShutterEvent] = []
        // At most three transitions can be due at once (count, long press, release); loop until settled.
        while true {
            switch state {
            case .idle:
                return events
            case .pending(let start, let level, let lastEdge):
                guard now.nanoseconds(since: lastEdge) >= timing.glitchNanoseconds else { return events }
                if level {
                    state = .pressed(
                        start: start, level: true, lastEdge: lastEdge, longPressDone: false, holdDone: false)
                    events.append(.press(ShutterPress(time: start, source: source)))
                } else {
                    ignoredGlitches += 1
                    state = .idle
                }
            case .pressed(let start, let level, let lastEdge, let done, let holdDone):
                if !done, level, let threshold = timing.longPressNanoseconds, now.nanoseconds(since: start) >= threshold
                {
                    state = .pressed(
                        start: start, level: level, lastEdge: lastEdge, longPressDone: true, holdDone: holdDone)
                    events.append(.longPress(ShutterPress(time: start, source: source)))
                    continue
                }
                if !holdDone, level, let threshold = timing.extendedHoldNanoseconds,
                    now.nanoseconds(since: start) >= threshold
                {
                    state = .pressed(
                        start: start, level: level, lastEdge: lastEdge, longPressDone: done, holdDone: true)
                    events.append(.extendedHold(ShutterPress(time: start, source: source)))
                    continue
                }
                if !level, now.nanoseconds(since: lastEdge) >= timing.debounceNanoseconds {
                    state = .idle
                    continue
                }
                return events
            }
        }
    }

    /// When `advance(to:)` next has something to do, or `nil` when only an edge can change anything.
    public var nextDeadline: MonotonicInstant? {
        switch state {
        case .idle:
            return nil
        case .pending(_, _, let lastEdge):
            return lastEdge.advanced(byNanoseconds: timing.glitchNanoseconds)
        case .pressed(let start, let level, let lastEdge, let done, let holdDone):
            if !level { return lastEdge.advanced(byNanoseconds: timing.debounceNanoseconds) }
            if !done, let threshold = timing.longPressNanoseconds { return start.advanced(byNanoseconds: threshold) }
            if !holdDone, let threshold = timing.extendedHoldNanoseconds {
                return start.advanced(byNanoseconds: threshold)
            }
            return nil
        }
    }
}
