import Controls
import SwiftWingCore
import Testing

func extendedHolds(_ events: [(atMs: Double, event: ShutterEvent)]) -> [Double] {
    events.compactMap { if case .extendedHold = $0.event { $0.atMs } else { nil } }
}

/// The third action of the shutter (pairing a browser): the press held 5 s, after its long press at 2 s.
@Suite struct ExtendedHoldTests {
    static let pairing = PressTiming(longPressMilliseconds: 2000, extendedHoldMilliseconds: 5000)

    @Test func aFiveSecondHoldGivesThePressTheLongPressThenTheExtendedHold() {
        let (events, detector) = replay([(100, true), (6000, false)], until: 7000, timing: Self.pairing)
        #expect(presses(events) == [100])
        #expect(longPresses(events) == [2100])
        #expect(extendedHolds(events) == [5100])
        #expect(events.map(\.atMs) == [108, 2100, 5100], "in this order, each once")
        #expect(!detector.isHeld)
    }

    @Test func aHoldBetweenTheLongPressAndFiveSecondsIsALongPressOnly() {
        let (events, _) = replay([(100, true), (5099, false)], until: 9000, timing: Self.pairing)
        #expect(longPresses(events) == [2100])
        #expect(extendedHolds(events).isEmpty, "released 1 ms before the 5 s mark")
    }

    @Test func withoutTheExtendedHoldTimingAHoldNeverGivesOne() {
        let (events, _) = replay([(100, true), (20_000, false)], until: 21_000)
        #expect(longPresses(events) == [2100])
        #expect(extendedHolds(events).isEmpty)
    }

    @Test func releaseBounceDoesNotRestartTheHold() {
        // A contact that opens for 5 ms at 3 s (within the 30 ms debounce) is still the same hold.
        let edges: [(ms: Double, active: Bool)] = [(100, true), (3000, false), (3005, true), (5500, false)]
        let (events, _) = replay(edges, until: 7000, timing: Self.pairing)
        #expect(presses(events) == [100])
        #expect(extendedHolds(events) == [5100])
    }

    @Test func keysHoldTheSameWayWithoutLongPresses() {
        let timing = PressTiming.keys(longPressMilliseconds: nil, extendedHoldMilliseconds: 5000)
        let (events, _) = replay([(100, true), (5200, false)], until: 6000, timing: timing)
        #expect(presses(events) == [100])
        #expect(longPresses(events).isEmpty)
        #expect(extendedHolds(events) == [5100])
    }

    @Test func theRateLimitLetsTheHoldOfAnAdmittedPressThrough() {
        var limit = PressRateLimit(minimumIntervalNanoseconds: 100_000_000)
        let first = ShutterPress(time: MonotonicInstant(nanoseconds: 1_000_000_000), source: .key)
        let dropped = ShutterPress(time: MonotonicInstant(nanoseconds: 1_050_000_000), source: .key)
        let admitted = [
            limit.admit(.press(first)), limit.admit(.press(dropped)), limit.admit(.extendedHold(dropped)),
            limit.admit(.extendedHold(first)),
        ]
        #expect(admitted == [true, false, false, true])
    }
}
