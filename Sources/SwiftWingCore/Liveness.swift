import Synchronization

/// Where liveness checks read the time: `CLOCK_MONOTONIC` in the daemon, a hand-moved clock in tests.
public protocol MonotonicClock: Sendable {
    var now: MonotonicInstant { get }
}

/// The kernel's `CLOCK_MONOTONIC`.
public struct SystemMonotonicClock: MonotonicClock {
    public init() {}
    public var now: MonotonicInstant { .now() }
}

/// A part's sign of life, bumped by the part's own loop on every turn, idle turns included (a frame
/// or a poll timeout, a job or an idle wake, a scheduler tick), so silence means the loop is stuck.
public final class Heartbeat: Sendable {
    public let part: String
    private let clock: any MonotonicClock
    /// Nanoseconds on `clock` of the last beat; 0 before the first.
    private let lastBeatNanoseconds = Atomic<UInt64>(0)

    public init(part: String, clock: any MonotonicClock = SystemMonotonicClock()) {
        self.part = part
        self.clock = clock
    }

    public func beat() {
        lastBeatNanoseconds.store(max(1, clock.now.nanoseconds), ordering: .releasing)
    }

    /// `nil` until the first beat.
    public var lastBeat: MonotonicInstant? {
        let nanoseconds = lastBeatNanoseconds.load(ordering: .acquiring)
        return nanoseconds == 0 ? nil : MonotonicInstant(nanoseconds: nanoseconds)
    }

    /// What the watchdog reads: the last beat, or "starting" before the first one.
    public var liveness: PartLiveness {
        lastBeat.map { .beating(lastBeat: $0) } ?? .excused(reason: "\(part) has not started yet")
    }
}

/// What one part says about itself when the watchdog asks.
public enum PartLiveness: Equatable, Sendable {
    /// Its loop last turned at this instant.
    case beating(lastBeat: MonotonicInstant)
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
    private let clock: any MonotonicClock

    public init(parts: [Part], staleAfter: Duration, clock: any MonotonicClock = SystemMonotonicClock()) {
        self.parts = parts
        self.staleAfter = staleAfter
        self.clock = clock
    }

    public func check() -> Verdict {
        let now = clock.now
        var stale: [StalePart] = []
        var excused: [String] = []
        for part in parts {
            switch part.read() {
            case .beating(let lastBeat):
                let silence = Duration.nanoseconds(max(0, now.nanoseconds(since: lastBeat)))
                if silence > staleAfter { stale.append(StalePart(name: part.name, silentFor: silence)) }
            case .excused(let reason):
                excused.append("\(part.name): \(reason)")
            }
        }
        return stale.isEmpty ? .alive(excused: excused) : .stale(stale)
    }
}
