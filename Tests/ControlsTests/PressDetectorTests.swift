import Controls
import SwiftWingCore
import Testing

/// Replays an edge sequence the way the poll loop does: edges in timestamp order, and the
/// detector's deadlines fired between them (as its timerfd would). Returns each event with the
/// time it was emitted, in milliseconds from the start.
func replay(
    _ edges: [(ms: Double, active: Bool)], until endMs: Double, timing: PressTiming = PressTiming()
) -> (events: [(atMs: Double, event: ShutterEvent)], detector: PressDetector) {
    let origin = MonotonicInstant(nanoseconds: 5_000_000_000)
    func instant(_ ms: Double) -> MonotonicInstant { origin.advanced(byNanoseconds: Int64((ms * 1_000_000).rounded())) }
    func ms(_ instant: MonotonicInstant) -> Double { Double(instant.nanoseconds(since: origin)) / 1e6 }
    var detector = PressDetector(timing: timing, source: .gpio)
    var out: [(Double, ShutterEvent)] = []
    func fireDeadlines(before limit: MonotonicInstant) {
        while let deadline = detector.nextDeadline, deadline <= limit {
            let events = detector.advance(to: deadline)
            out += events.map { (ms(deadline), $0) }
            if events.isEmpty, detector.nextDeadline == deadline { break }
        }
    }
    for edge in edges {
        let time = instant(edge.ms)
        fireDeadlines(before: time.advanced(byNanoseconds: -1))
        out += detector.edge(active: edge.active, at: time).map { (edge.ms, $0) }
    }
    fireDeadlines(before: instant(endMs))
    return (out, detector)
}

func presses(_ events: [(atMs: Double, event: ShutterEvent)]) -> [Double] {
    events.compactMap {
        if case .press(let p) = $0.event { Double(p.time.nanoseconds - 5_000_000_000) / 1e6 } else { nil }
    }
}

func longPresses(_ events: [(atMs: Double, event: ShutterEvent)]) -> [Double] {
    events.compactMap { if case .longPress = $0.event { $0.atMs } else { nil } }
}

@Suite struct PressDetectorTests {
    @Test func aCleanPressCountsOnceStampedWithItsFirstEdge() {
        // Given a clean contact: closed at 100 ms, opened at 250 ms.
        let (events, detector) = replay([(100, true), (250, false)], until: 1000)
        // Then one press, stamped 100 ms (the frame must be at or after the real press), decided 8 ms later.
        #expect(presses(events) == [100])
        #expect(events.first?.atMs == 108)
        #expect(longPresses(events).isEmpty)
        #expect(!detector.isHeld)
    }

    @Test func bouncyContactsOnPressAndReleaseAreOnePress() {
        // Recorded shape of a cheap tactile switch: ~3 ms of bounce closing, ~4 ms opening.
        let bouncy: [(ms: Double, active: Bool)] = [
            (100.0, true), (100.3, false), (100.9, true), (101.2, false), (101.8, true), (102.1, false), (103.0, true),
            (180.0, false), (180.6, true), (181.1, false), (182.0, true), (182.4, false), (183.9, true), (184.2, false),
        ]
        let (events, _) = replay(bouncy, until: 1000)
        #expect(presses(events) == [100])
        // Decided 8 ms after the last closing bounce: 111 ms.
        #expect(events.first?.atMs == 111)
    }

    @Test func glitchesOfFiveMillisecondsAreIgnored() {
        // Interference on the wire: pulses of 0.05, 1 and 5 ms, well apart; then a real press.
        let glitches: [(ms: Double, active: Bool)] = [
            (100, true), (100.05, false), (300, true), (301, false), (500, true), (505, false), (800, true),
            (900, false),
        ]
        let (events, detector) = replay(glitches, until: 1500)
        #expect(presses(events) == [800])
        #expect(detector.ignoredGlitches == 3)
    }

    @Test func aPulseJustLongerThanTheFilterCounts() {
        // 8 ms is the default filter: 7.9 ms is a glitch, 8.1 ms a press.
        #expect(presses(replay([(100, true), (107.9, false)], until: 500).events).isEmpty)
        #expect(presses(replay([(100, true), (108.1, false)], until: 500).events) == [100])
    }

    @Test func aHeldButtonNeverRepeatsAndGivesOneLongPress() {
        // Held for 5 s, with a little contact chatter in the middle (a shaky thumb).
        let held: [(ms: Double, active: Bool)] = [(100, true), (2500, false), (2500.4, true), (5100, false)]
        let (events, detector) = replay(held, until: 10_000)
        #expect(presses(events) == [100])
        #expect(longPresses(events) == [2100])
        #expect(events.count == 2)
        #expect(!detector.isHeld)
    }

    @Test func aPressReleasedBeforeTheThresholdIsNoLongPress() {
        let (events, _) = replay([(0, true), (1999, false)], until: 5000)
        #expect(presses(events) == [0])
        #expect(longPresses(events).isEmpty)
    }

    @Test func longPressCanBeTurnedOff() {
        let timing = PressTiming(longPressMilliseconds: nil)
        let (events, _) = replay([(0, true), (9000, false)], until: 10_000, timing: timing)
        #expect(presses(events) == [0])
        #expect(longPresses(events).isEmpty)
    }

    @Test func twentyRapidPressesAreTwentyPresses() {
        // An operator tapping fast: 20 presses of 40 ms, 45 ms apart (more than the 30 ms debounce), with bounce.
        var edges: [(ms: Double, active: Bool)] = []
        for i in 0..<20 {
            let t = Double(i) * 85
            edges += [(t, true), (t + 0.4, false), (t + 1, true), (t + 40, false), (t + 40.5, true), (t + 41, false)]
        }
        let (events, _) = replay(edges, until: 3000)
        #expect(presses(events) == (0..<20).map { Double($0) * 85 })
        #expect(longPresses(events).isEmpty)
    }

    @Test func aReleaseShorterThanTheDebounceIsStillTheSamePress() {
        // Opened for 20 ms (less than 30 ms): not a release, so no second press.
        let (events, _) = replay([(0, true), (100, false), (120, true), (300, false)], until: 1000)
        #expect(presses(events) == [0])
    }

    @Test func withoutAGlitchFilterTheEdgeItselfIsThePress() {
        // Key devices debounce in hardware: the press is emitted on the key-down event itself.
        let timing = PressTiming.keys()
        var detector = PressDetector(timing: timing, source: .key)
        let t0 = MonotonicInstant(nanoseconds: 10_000_000)
        let down = detector.edge(active: true, at: t0)
        #expect(down == [.press(ShutterPress(time: t0, source: .key))])
        #expect(detector.edge(active: false, at: t0.advanced(byNanoseconds: 50_000_000)).isEmpty)
        #expect(!detector.isHeld)
        #expect(detector.edge(active: true, at: t0.advanced(byNanoseconds: 60_000_000)).count == 1)
    }

    @Test func repeatedLevelReportsFromTheV1UAPIAreHarmless() {
        // libgpiod 1.6 may report two rising edges in a row when the level was read late.
        let (events, _) = replay([(0, true), (0.2, true), (0.5, true), (100, false), (100.1, false)], until: 1000)
        #expect(presses(events) == [0])
    }

    @Test func deadlinesSayWhenTheLoopMustWake() {
        var detector = PressDetector(timing: PressTiming(), source: .gpio)
        #expect(detector.nextDeadline == nil)
        let t0 = MonotonicInstant(nanoseconds: 1_000_000_000)
        _ = detector.edge(active: true, at: t0)
        #expect(detector.nextDeadline == t0.advanced(byNanoseconds: 8_000_000))
        _ = detector.advance(to: t0.advanced(byNanoseconds: 8_000_000))
        #expect(detector.isHeld)
        #expect(detector.nextDeadline == t0.advanced(byNanoseconds: 2_000_000_000))
        _ = detector.edge(active: false, at: t0.advanced(byNanoseconds: 100_000_000))
        #expect(detector.nextDeadline == t0.advanced(byNanoseconds: 130_000_000))
    }

    @Test func lateWakeUpsStillDecideOnTheKernelTimestamps() {
        // The loop woke 50 ms late (a busy board): a 5 ms glitch is still a glitch, and the release
        // timestamps, not the wake-up time, decide.
        var detector = PressDetector(timing: PressTiming(), source: .gpio)
        let t0 = MonotonicInstant(nanoseconds: 1_000_000_000)
        _ = detector.edge(active: true, at: t0)
        #expect(detector.edge(active: false, at: t0.advanced(byNanoseconds: 5_000_000)).isEmpty)
        #expect(detector.advance(to: t0.advanced(byNanoseconds: 55_000_000)).isEmpty)
        #expect(detector.ignoredGlitches == 1)
    }
}
