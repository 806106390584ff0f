import Controls
import SwiftWingCore
import SwiftWingTesting
import Testing

@Suite struct BuzzerFeedbackTests {
    @Test func aPressClicksLightsAndRecordsItsLatency() {
        let clock = ManualClock()
        let buzzer = FakeOutput(clock: clock)
        let light = FakeOutput(clock: clock)
        let feedback = BuzzerFeedback(player: PatternPlayer(buzzer: buzzer, light: light, clock: clock))
        // The kernel stamped the edge 1.2 ms before the feedback ran; the latency is read on its clock.
        let press = ShutterPress(time: MonotonicInstant.now().advanced(byNanoseconds: -1_200_000), source: .gpio)
        feedback.pressAccepted(press)
        #expect(buzzer.isActive && light.isActive)
        #expect(feedback.latency.count == 1)
        #expect(feedback.latency.maxMicroseconds >= 1200)
        #expect((feedback.latency.summary.p50Microseconds ?? 0) >= 1200)
        feedback.frameCaptured(press)
        #expect(!light.isActive)
    }

    @Test func refusalSoundsTheErrorAndPutsOutTheLight() {
        let clock = ManualClock()
        let buzzer = FakeOutput(clock: clock)
        let light = FakeOutput(clock: clock)
        let feedback = BuzzerFeedback(player: PatternPlayer(buzzer: buzzer, light: light, clock: clock))
        let press = ShutterPress(time: .now(), source: .key)
        feedback.pressAccepted(press)
        clock.advance(by: .milliseconds(3))
        feedback.pressRefused(press, reason: "processing queue is full")
        #expect(feedback.player.snapshot.pattern == "error")
        #expect(!light.isActive)
        feedback.scanSaved(press)
        #expect(feedback.player.snapshot.pattern == "error")  // scanSaved is silent
    }

    @Test func noticesPlayTheirPatterns() {
        let clock = ManualClock()
        let feedback = BuzzerFeedback(player: PatternPlayer(buzzer: FakeOutput(clock: clock), clock: clock))
        let any: any PressFeedback = feedback
        for (notice, name) in [
            (FeedbackNotice.booksLanded, "success"), (.rateLimited, "rate-limited"), (.exportDone, "export-done"),
            (.scanFailed, "error"),
        ] {
            any.notice(notice)
            #expect(feedback.player.snapshot.pattern == name)
        }
        any.longPress(ShutterPress(time: .now(), source: .gpio))
        #expect(feedback.player.snapshot.pattern == "long-press")
    }
}
