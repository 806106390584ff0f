import Camera
import SwiftWingCore
import Testing

@Suite struct BackoffTests {
    @Test func doublesFromHalfASecondToTenSecondsThenStays() {
        var backoff = Backoff()
        let delays = (0..<8).map { _ in backoff.next() }
        #expect(
            delays == [
                .milliseconds(500), .seconds(1), .seconds(2), .seconds(4), .seconds(8), .seconds(10), .seconds(10),
                .seconds(10),
            ])
        #expect(backoff.attempts == 8)
    }

    @Test func resetStartsOver() {
        var backoff = Backoff()
        _ = backoff.next()
        _ = backoff.next()
        backoff.reset()
        #expect(backoff.attempts == 0)
        #expect(backoff.next() == .milliseconds(500))
    }

    @Test func customLimits() {
        var backoff = Backoff(initial: .milliseconds(100), maximum: .milliseconds(250))
        #expect(
            [backoff.next(), backoff.next(), backoff.next()] == [
                .milliseconds(100), .milliseconds(200), .milliseconds(250),
            ])
    }
}
