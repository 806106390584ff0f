import SwiftWingCore
import Testing

@Suite struct ErasedClockTests {
    /// A clock standing at 42 s whose instants are already ``ErasedClock/Instant``s, as the test clock's are.
    struct StandingClock: Clock {
        typealias Instant = ErasedClock.Instant
        var now: Instant { Instant(offset: .seconds(42)) }
        var minimumResolution: Duration { .zero }
        func sleep(until deadline: Instant, tolerance: Duration?) async throws {}
    }

    @Test func aClockWithErasedInstantsIsReadAsItIsHoweverOftenItIsWrapped() {
        #expect(ErasedClock(StandingClock()).now == ErasedClock.Instant(offset: .seconds(42)))
        #expect(ErasedClock(ErasedClock(StandingClock())).now.offset == .seconds(42))
    }

    @Test func anyOtherClockIsReadAsTheTimeSinceItWasWrappedAndWaitedOn() async throws {
        let clock = ErasedClock(ContinuousClock())
        let start = clock.now
        #expect(start.offset >= .zero && start.offset < .seconds(60))
        try await clock.sleep(until: start + .milliseconds(2))
        #expect(clock.now >= start + .milliseconds(2), "a sleep does not end before its deadline")
        let rewrapped = ErasedClock(clock)
        let (before, after) = (clock.now, rewrapped.now)
        #expect(after >= before, "wrapping a wrapped clock keeps its origin")
    }
}
