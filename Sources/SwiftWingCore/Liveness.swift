import Synchronization

/// A part's sign of life, bumped by the part's own loop on every turn, idle turns included (a frame
/// or a poll timeout, a job or an idle wake, a scheduler tick), so silence means the loop is stuck.
public final class Heartbeat: Sendable {
    public let part: String
    private let clock: ErasedClock
    /// Nanoseconds on `clock` of the last beat; `Int64.min` before the first.
    private let lastBeatNanoseconds = Atomic<Int64>(.min)

    /// A heartbeat read on `clock` (the daemon's `ContinuousClock`; in tests a clock they advance).
    public init(part: String, clock: any Clock<Duration> = ContinuousClock()) {
        self.part = part
        self.clock = ErasedClock(clock)
    }

    public func beat() {
        lastBeatNanoseconds.store(clock.now.offset.wholeNanoseconds, ordering: .releasing)
    }

    /// `nil` until the first beat.
    public var lastBeat: ErasedClock.Instant? {
        let nanoseconds = lastBeatNanoseconds.load(ordering: .acquiring)
        return nanoseconds == .min ? nil : ErasedClock.Instant(offset: .nanoseconds(nanoseconds))
    }

    /// What the watchdog reads: how long since the last beat, or "starting" before the first one.
    public var liveness: PartLiveness {
        guard let lastBeat else { return .excused(reason: "\(part) has not started yet") }
        return .beating(silentFor: lastBeat.duration(to: clock.now))
    }
}

/// What one part says about itself when the watchdog asks.
public enum PartLiveness: Equatable, Sendable {
    /// Its loop last turned this long ago (each part reads its own clock: the camera's loop turns are
    /// stamped on the kernel's clock like its frames, heartbeats on the injected one).
    case beating(silentFor: Duration)
    /// It is not expected to beat now, and that is reported elsewhere rather than fixed by a restart:
    /// a camera that is absent or reopening, a part that is still starting.
    case excused(reason: String)
}

/// Decides whether every part of the daemon is alive: each part either beat within `staleAfter`
/// or is excused. The systemd watchdog is pinged only while this says alive.
public struct LivenessMonitor: Sendable {
    public struct Part: Sendable {
        public var name: String
        public var read: @Sendable () -> PartLiveness

        public init(name: String, read: @escaping @Sendable () -> PartLiveness) {
            self.name = name
            self.read = read
        }
    }

    /// A part that did not beat in time.
    public struct StalePart: Equatable, Sendable, CustomStringConvertible {
        public var name: String
        public var silentFor: Duration

        public init(name: String, silentFor: Duration) {
            self.name = name
            self.silentFor = silentFor
        }

        public var description: String {
            "\(name) (no sign of life for \(silentFor.components.seconds) s)"
        }
    }

    public enum Verdict: Equatable, Sendable {
        /// Every part beat in time or is excused (with the reasons, for the log).
        case alive(excused: [String])
        case stale([StalePart])
    }

    public let parts: [Part]
    public let staleAfter: Duration

    public init(parts: [Part], staleAfter: Duration) {
        self.parts = parts
        self.staleAfter = staleAfter
    }

    public func check() -> Verdict {
        var stale: [StalePart] = []
        var excused: [String] = []
        for part in parts {
            switch part.read() {
            case .beating(let silentFor):
                let silence = max(.zero, silentFor)
                if silence > staleAfter { stale.append(StalePart(name: part.name, silentFor: silence)) }
            case .excused(let reason):
                excused.append("\(part.name): \(reason)")
            }
        }
        return stale.isEmpty ? .alive(excused: excused) : .stale(stale)
    }
}
