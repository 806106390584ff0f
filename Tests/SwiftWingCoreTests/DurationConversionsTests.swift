import SwiftWingCore
import Testing

@Suite struct DurationConversionsTests {
    /// An amount below one nanosecond, which only the attoseconds of a `Duration` can hold.
    static let oneAttosecond = Duration(secondsComponent: 0, attosecondsComponent: 1)

    @Test func aWholeNumberOfSecondsIsExactInEveryUnit() {
        let duration = Duration.seconds(2)
        #expect(duration.inSeconds == 2)
        #expect(duration.wholeNanoseconds == 2_000_000_000)
        #expect(duration.wholeMicroseconds == 2_000_000)
        #expect(duration.wholeMilliseconds == 2000)
        #expect(duration.wholeMillisecondsRoundedUp == 2000)
    }

    @Test func zeroIsZeroInEveryUnit() {
        #expect(Duration.zero.inSeconds == 0)
        #expect(Duration.zero.wholeNanoseconds == 0)
        #expect(Duration.zero.wholeMicroseconds == 0)
        #expect(Duration.zero.wholeMilliseconds == 0)
        #expect(Duration.zero.wholeMillisecondsRoundedUp == 0)
    }

    @Test func aFractionIsKeptInSecondsAndTruncatedInWholeUnits() {
        let duration = Duration.nanoseconds(1_234_567_891)
        #expect(abs(duration.inSeconds - 1.234_567_891) < 1e-15)
        #expect(Duration.milliseconds(1500).inSeconds == 1.5)
        #expect(Self.oneAttosecond.inSeconds == 1e-18)
        #expect(duration.wholeNanoseconds == 1_234_567_891)
        #expect(duration.wholeMicroseconds == 1_234_567)
        #expect(duration.wholeMilliseconds == 1234)
        #expect((Duration.nanoseconds(1) - Self.oneAttosecond).wholeNanoseconds == 0)
    }

    @Test func anyRemainderBelowAMillisecondRoundsUp() {
        #expect(Duration.nanoseconds(1_234_567_891).wholeMillisecondsRoundedUp == 1235)
        #expect(Duration.nanoseconds(1).wholeMilliseconds == 0)
        #expect(Duration.nanoseconds(1).wholeMillisecondsRoundedUp == 1)
        // Half a millisecond of curl timeout must not become 0, "no timeout".
        #expect(Duration.microseconds(500).wholeMillisecondsRoundedUp == 1)
        #expect((Duration.seconds(1) + Self.oneAttosecond).wholeMilliseconds == 1000)
        #expect((Duration.seconds(1) + Self.oneAttosecond).wholeMillisecondsRoundedUp == 1001)
    }

    @Test func aNegativeDurationStaysNegativeAndTruncatesTowardZero() {
        let duration = Duration.nanoseconds(-1_234_567_891)
        #expect(abs(duration.inSeconds + 1.234_567_891) < 1e-15)
        #expect(Duration.milliseconds(-1500).inSeconds == -1.5)
        #expect(duration.wholeNanoseconds == -1_234_567_891)
        #expect(duration.wholeMicroseconds == -1_234_567)
        #expect(duration.wholeMilliseconds == -1234)
        #expect(Duration.nanoseconds(-1).wholeMilliseconds == 0)
        #expect((Self.oneAttosecond - Duration.nanoseconds(1)).wholeNanoseconds == 0)
    }

    @Test func aNegativeDurationRoundsUpTowardPositiveInfinity() {
        #expect(Duration.nanoseconds(-1_234_567_891).wholeMillisecondsRoundedUp == -1234)
        #expect(Duration.milliseconds(-1500).wholeMillisecondsRoundedUp == -1500)
        #expect(Duration.nanoseconds(-1).wholeMillisecondsRoundedUp == 0)
    }

    @Test func theLargestCountsThatFitAreExact() {
        #expect(Duration.nanoseconds(Int64.max).wholeNanoseconds == Int64.max)
        #expect(Duration.nanoseconds(Int64.min).wholeNanoseconds == Int64.min)
        #expect(Duration.milliseconds(Int64.max).wholeMilliseconds == Int64.max)
        #expect(Duration.milliseconds(Int64.max).wholeMillisecondsRoundedUp == Int64.max)
        #expect((Duration.milliseconds(Int64.max) - .nanoseconds(1)).wholeMillisecondsRoundedUp == Int64.max)
    }

    @Test func countsBeyondInt64SaturateInsteadOfTrapping() {
        let justBeyond = Duration.nanoseconds(Int64.max) + .nanoseconds(1)
        #expect(justBeyond.wholeNanoseconds == Int64.max)
        #expect((Duration.zero - justBeyond - .nanoseconds(1)).wholeNanoseconds == Int64.min)
        #expect((Duration.milliseconds(Int64.max) + .nanoseconds(1)).wholeMillisecondsRoundedUp == Int64.max)

        let longest = Duration.seconds(Int64.max)
        #expect(longest.inSeconds == Double(Int64.max))
        #expect(longest.wholeNanoseconds == Int64.max)
        #expect(longest.wholeMicroseconds == Int64.max)
        #expect(longest.wholeMilliseconds == Int64.max)
        #expect(longest.wholeMillisecondsRoundedUp == Int64.max)

        let mostNegative = Duration.seconds(Int64.min)
        #expect(mostNegative.wholeNanoseconds == Int64.min)
        #expect(mostNegative.wholeMicroseconds == Int64.min)
        #expect(mostNegative.wholeMilliseconds == Int64.min)
        #expect(mostNegative.wholeMillisecondsRoundedUp == Int64.min)
    }
}
