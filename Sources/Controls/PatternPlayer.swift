import Logging
import SwiftWingCore
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A buzzer pattern: alternating on and off times, starting with on.
public struct BuzzerPattern: Sendable, Equatable, CustomStringConvertible {
    public var name: String
    /// Milliseconds on, off, on, …; an odd count (it ends on).
    public var milliseconds: [Int]

    public init(name: String, milliseconds: [Int]) {
        precondition(milliseconds.count % 2 == 1 && milliseconds.allSatisfy { $0 > 0 }, "a pattern is on, off, …, on")
        self.name = name
        self.milliseconds = milliseconds
    }

    /// A press was taken: one 15 ms tick, over well within 30 ms.
    public static let click = BuzzerPattern(name: "click", milliseconds: [15])
    /// Books landed in the library: two short.
    public static let success = BuzzerPattern(name: "success", milliseconds: [60, 80, 60])
    /// A press refused or a scan failed: one long.
    public static let error = BuzzerPattern(name: "error", milliseconds: [600])
    /// The backend asks us to slow down: three quick.
    public static let rateLimited = BuzzerPattern(name: "rate-limited", milliseconds: [40, 60, 40, 60, 40])
    /// An export finished (safe to remove the stick): short, short, long.
    public static let exportDone = BuzzerPattern(name: "export-done", milliseconds: [60, 60, 60, 60, 300])
    /// A long press was recognised: two long.
    public static let longPress = BuzzerPattern(name: "long-press", milliseconds: [200, 100, 200])

    public var description: String { name }

    /// Total length in nanoseconds.
    public var durationNanoseconds: Int64 { Int64(milliseconds.reduce(0, +)) * 1_000_000 }
}

/// Plays buzzer patterns and drives the light without ever blocking the caller.
///
/// `play` sets the buzzer line on the caller's thread at once (one ioctl: the click is on the line
/// before `play` returns, with no hand-off to another thread) and leaves the rest of the pattern to
/// a timer: either the player's own thread (`start()`; a timerfd on `CLOCK_MONOTONIC` and an eventfd
/// to stop it), or in tests a fake clock and explicit `advance()` calls. A new pattern replaces the
/// one playing: the latest event is what the operator needs to hear.
public final class PatternPlayer: Sendable {
    struct State {
        var pattern: BuzzerPattern?
        var step = 0
        var stepEnds = ErasedClock.Instant(offset: .zero)
        var buzzerOn = false
        var lightOn = false
        var lightOffAt: ErasedClock.Instant?
        var failureLogged = false
        var timer: DeadlineTimer?
    }

    private let buzzer: any DigitalOutput
    private let light: (any DigitalOutput)?
    /// Schedules the steps: the daemon's `ContinuousClock`, in tests a clock they advance.
    private let clock: ErasedClock
    private let logger: Logger
    private let state = Mutex(State())
    private let stopper = Mutex<PollLoopThread?>(nil)

    private let realtimePriority: RealtimePriority?

    public init(
        buzzer: any DigitalOutput, light: (any DigitalOutput)? = nil,
        clock: any Clock<Duration> = ContinuousClock(),
        realtimePriority: RealtimePriority? = nil, logger: Logger = Logger(label: "feedback")
    ) {
        self.realtimePriority = realtimePriority
        self.buzzer = buzzer
        self.light = light
        self.clock = ErasedClock(clock)
        self.logger = logger
    }

    /// Starts `pattern` now and returns when its first step is on the line, with the clock's time
    /// right after the line was set.
    @discardableResult
    public func play(_ pattern: BuzzerPattern) -> ErasedClock.Instant {
        state.withLock { state in
            state.pattern = pattern
            state.step = 0
            drive(&state, buzzer: true)
            let now = clock.now
            state.stepEnds = now + .milliseconds(pattern.milliseconds[0])
            rearm(&state)
            return now
        }
    }

    /// Lights the light now, for at most `maximumNanoseconds` (a missing `lightOff` cannot leave it on).
    public func lightOn(forAtMost maximumNanoseconds: Int64) {
        guard let light else { return }
        state.withLock { state in
            if !state.lightOn { set(light, true, &state) }
            state.lightOn = true
            state.lightOffAt = clock.now + .nanoseconds(maximumNanoseconds)
            rearm(&state)
        }
    }

    public func lightOff() {
        guard let light else { return }
        state.withLock { state in
            if state.lightOn { set(light, false, &state) }
            state.lightOn = false
            state.lightOffAt = nil
            rearm(&state)
        }
    }

    /// What is on now, for tests and the status: the pattern playing (if any), buzzer and light levels.
    public var snapshot: (pattern: String?, buzzer: Bool, light: Bool) {
        state.withLock { ($0.pattern?.name, $0.buzzerOn, $0.lightOn) }
    }

    /// Applies every step due at the clock's now; returns when the next one is due (`nil`: idle).
    @discardableResult
    public func advance() -> ErasedClock.Instant? {
        state.withLock { state in
            let now = clock.now
            while let pattern = state.pattern, now >= state.stepEnds {
                state.step += 1
                if state.step >= pattern.milliseconds.count {
                    state.pattern = nil
                    drive(&state, buzzer: false)
                    break
                }
                drive(&state, buzzer: state.step % 2 == 0)
                // Steps follow the schedule, not the moment this ran: a late wake-up does not stretch the pattern.
                state.stepEnds = state.stepEnds + .milliseconds(pattern.milliseconds[state.step])
            }
            if let off = state.lightOffAt, now >= off, let light {
                set(light, false, &state)
                state.lightOn = false
                state.lightOffAt = nil
            }
            rearm(&state)
            return Self.deadline(state)
        }
    }

    private static func deadline(_ state: State) -> ErasedClock.Instant? {
        switch (state.pattern == nil ? nil : state.stepEnds, state.lightOffAt) {
        case (let a?, let b?): min(a, b)
        case (let a?, nil): a
        case (nil, let b?): b
        case (nil, nil): nil
        }
    }

    private func drive(_ state: inout State, buzzer on: Bool) {
        guard state.buzzerOn != on || state.step == 0 else { return }
        set(buzzer, on, &state)
        state.buzzerOn = on
        logger.trace(
            "buzzer \(on ? "on" : "off")",
            metadata: ["pattern": "\(state.pattern?.name ?? "-")", "at": "\(clock.now.offset)"])
    }

    private func set(_ output: any DigitalOutput, _ on: Bool, _ state: inout State) {
        do {
            try output.set(active: on)
            state.failureLogged = false
        } catch {
            // A broken output is logged once, not on every beep.
            if !state.failureLogged {
                logger.error(
                    "cannot drive the buzzer or light: \(error). Fix: check the wiring and the [buzzer] lines; presses still work"
                )
                state.failureLogged = true
            }
        }
    }

    private func rearm(_ state: inout State) {
        guard let timer = state.timer else { return }
        // The timerfd runs on the kernel's clock: it is armed with the time left on the player's.
        timer.arm(
            Self.deadline(state).map { deadline in
                MonotonicInstant.now().advanced(byNanoseconds: clock.now.duration(to: deadline).wholeNanoseconds)
            })
    }

    // MARK: The timer thread

    /// Runs the pattern timer on a thread of its own ("swiftwing-buzz") until `stop()`.
    public func start() throws(SystemCallError) {
        let timer = try DeadlineTimer()
        state.withLock { state in
            state.timer = timer
            rearm(&state)
        }
        let thread = try PollLoopThread(name: "swiftwing-buzz", realtimePriority: realtimePriority) { [self] wake in
            while true {
                let ready: [Int32: Int16]
                do {
                    ready = try waitReadable([timer.fd, wake.descriptor])
                } catch {
                    logger.error("buzzer timer stopped: \(error)")
                    break
                }
                if ready[wake.descriptor] != nil { break }
                if ready[timer.fd] != nil {
                    timer.drain()
                    advance()
                }
            }
            state.withLock { $0.timer = nil }
        }
        stopper.withLock { $0 = thread }
    }

    /// Whether the timer thread got `SCHED_FIFO` (nil before it started).
    public var isRealtime: Bool? { stopper.withLock { $0?.isRealtime } }

    /// Stops the timer thread, silences the buzzer and puts out the light.
    public func stop() {
        stopper.withLock { $0.take() }?.stop()
        state.withLock { state in
            state.pattern = nil
            drive(&state, buzzer: false)
            if let light, state.lightOn { set(light, false, &state) }
            state.lightOn = false
            state.lightOffAt = nil
        }
    }
}
