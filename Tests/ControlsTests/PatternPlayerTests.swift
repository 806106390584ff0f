import Controls
import SwiftWingCore
import SwiftWingTesting
import Testing

/// Runs the player's timer by hand on a fake clock, 1 ms at a time, like its thread would.
func run(_ player: PatternPlayer, _ clock: ManualClock, forMilliseconds ms: Int) {
    for _ in 0..<ms {
        clock.advance(by: .milliseconds(1))
        player.advance()
    }
}

@Suite struct PatternPlayerTests {
    @Test func theClickIsOnTheLineBeforePlayReturnsAndOffAfter15Milliseconds() {
        let clock = ManualClock()
        let buzzer = FakeOutput(clock: clock)
        let player = PatternPlayer(buzzer: buzzer, clock: clock)
        let origin = clock.now
        let setAt = player.play(.click)
        #expect(buzzer.isActive)
        #expect(setAt == origin)
        #expect(player.advance() == origin + .milliseconds(15))
        run(player, clock, forMilliseconds: 100)
        #expect(buzzer.timeline(since: origin).map(\.0) == [0, 15])
        #expect(buzzer.timeline(since: origin).map(\.1) == [true, false])
        #expect(player.advance() == nil)
    }

    @Test(arguments: [
        (BuzzerPattern.success, [0.0, 60, 140, 200]),
        (BuzzerPattern.error, [0.0, 600]),
        (BuzzerPattern.rateLimited, [0.0, 40, 100, 140, 200, 240]),
        (BuzzerPattern.exportDone, [0.0, 60, 120, 180, 240, 540]),
        (BuzzerPattern.longPress, [0.0, 200, 300, 500]),
    ])
    func patternsKeepTheirTiming(pattern: BuzzerPattern, expected: [Double]) {
        let clock = ManualClock()
        let buzzer = FakeOutput(clock: clock)
        let player = PatternPlayer(buzzer: buzzer, clock: clock)
        let origin = clock.now
        player.play(pattern)
        run(player, clock, forMilliseconds: 1000)
        let timeline = buzzer.timeline(since: origin)
        #expect(timeline.map(\.0) == expected)
        #expect(timeline.map(\.1) == expected.indices.map { $0 % 2 == 0 })
    }

    @Test func patternsAreDistinct() {
        let all: [BuzzerPattern] = [.click, .success, .error, .rateLimited, .exportDone, .longPress]
        #expect(Set(all.map(\.milliseconds)).count == all.count)
        #expect(BuzzerPattern.click.durationNanoseconds <= 30_000_000)
    }

    @Test func aLateTimerDoesNotStretchThePattern() {
        // The timer thread woke 25 ms late in the middle of "success": the steps stay on schedule.
        let clock = ManualClock()
        let buzzer = FakeOutput(clock: clock)
        let player = PatternPlayer(buzzer: buzzer, clock: clock)
        let origin = clock.now
        player.play(.success)
        clock.advance(by: .milliseconds(85))  // first off at 60 was missed; it is applied now
        player.advance()
        clock.advance(by: .milliseconds(55))  // 140: second on
        player.advance()
        clock.advance(by: .milliseconds(60))  // 200: off
        player.advance()
        #expect(buzzer.timeline(since: origin).map(\.0) == [0, 85, 140, 200])
        #expect(player.snapshot.pattern == nil)
    }

    @Test func aNewPatternReplacesThePlayingOne() {
        let clock = ManualClock()
        let buzzer = FakeOutput(clock: clock)
        let player = PatternPlayer(buzzer: buzzer, clock: clock)
        let origin = clock.now
        player.play(.error)
        run(player, clock, forMilliseconds: 100)
        player.play(.click)  // a new press while the error sounds
        run(player, clock, forMilliseconds: 1000)
        #expect(buzzer.timeline(since: origin).map(\.0) == [0, 100, 115])
        #expect(buzzer.timeline(since: origin).map(\.1) == [true, true, false])
    }

    @Test func theLightGoesOutOnRequestOrAtItsLimit() {
        let clock = ManualClock()
        let buzzer = FakeOutput(clock: clock)
        let light = FakeOutput(clock: clock)
        let player = PatternPlayer(buzzer: buzzer, light: light, clock: clock)
        let origin = clock.now
        player.lightOn(forAtMost: 500_000_000)
        run(player, clock, forMilliseconds: 40)
        player.lightOff()
        #expect(light.timeline(since: origin).map(\.0) == [0, 40])
        // Never told to go out: it does at its limit.
        player.lightOn(forAtMost: 500_000_000)
        run(player, clock, forMilliseconds: 1000)
        #expect(light.timeline(since: origin).map(\.0) == [0, 40, 40, 540])
        #expect(!light.isActive)
    }

    @Test func aBrokenOutputNeverStopsThePlayer() {
        let clock = ManualClock()
        let buzzer = FakeOutput(clock: clock)
        let player = PatternPlayer(buzzer: buzzer, clock: clock)
        buzzer.fail(true)
        player.play(.error)
        run(player, clock, forMilliseconds: 700)
        #expect(player.snapshot.pattern == nil)
        buzzer.fail(false)
        player.play(.click)
        #expect(buzzer.isActive)
    }

    @Test func theTimerThreadPlaysPatternsOnTheRealClock() async throws {
        // The player's own thread (timerfd + eventfd) on CLOCK_MONOTONIC; the output stamps on the player's clock.
        let clock = ErasedClock(ContinuousClock())
        let buzzer = FakeOutput(clock: clock)
        let player = PatternPlayer(buzzer: buzzer, clock: clock)
        try player.start()
        defer { player.stop() }
        let origin = player.play(.success)
        var timeline = buzzer.timeline(since: origin)
        for _ in 0..<500 where timeline.count < 4 {
            try await Task.sleep(for: .milliseconds(20))  // a real timerfd fires in real time
            timeline = buzzer.timeline(since: origin)
        }
        #expect(timeline.map(\.1) == [true, false, true, false])
        // The first step is set before `play` reads the clock; the others are never early (a timerfd
        // does not fire early) and late only by the thread's wake-up: a loaded 2-core CI machine
        // (load 11) has shown 46 ms, and the whole package's tests running in
        // parallel (panel rendering) over 150 ms: the bound is loose; exact timing is the fake-clock tests' job.
        let steps = timeline.map(\.0)
        #expect(steps.first.map { $0 <= 0 && $0 > -5 } == true, "first step at \(steps.first ?? .nan) ms")
        for (actual, expected) in zip(steps.dropFirst(), [60.0, 140, 200]) {
            #expect(actual >= expected && actual < expected + 2000, "step at \(actual) ms, expected \(expected) ms")
        }
    }

    @Test func stopSilencesTheBuzzerAndTheLight() {
        let buzzer = FakeOutput()
        let light = FakeOutput()
        let player = PatternPlayer(buzzer: buzzer, light: light)
        player.play(.error)
        player.lightOn(forAtMost: 1_000_000_000)
        player.stop()
        #expect(!buzzer.isActive)
        #expect(!light.isActive)
    }
}
