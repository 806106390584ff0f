/// The injected clock, whatever its type, behind one concrete `Clock`: the daemon passes
/// `ContinuousClock`, tests pass a clock they advance, and the code that reads it can still keep its
/// instants in state, compare them and wait for them without being generic over the clock.
///
/// Instants are the time elapsed since the clock was wrapped, so instants of two wrappings of one clock
/// are not comparable: a part wraps its clock once and keeps it. A clock whose own instants are
/// ``Instant``s (the test clock) is read as it is, so every wrapping of it agrees with it.
public struct ErasedClock: Clock {
    public struct Instant: InstantProtocol {
        /// Time since the clock was wrapped.
        public var offset: Duration

        public init(offset: Duration) {
            self.offset = offset
        }

        public func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        public func duration(to other: Instant) -> Duration { other.offset - offset }
        public static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
        public static func + (lhs: Instant, rhs: Duration) -> Instant { lhs.advanced(by: rhs) }
        public static func - (lhs: Instant, rhs: Duration) -> Instant { lhs.advanced(by: .zero - rhs) }
        public static func - (lhs: Instant, rhs: Instant) -> Duration { rhs.duration(to: lhs) }
    }

    private let elapsed: @Sendable () -> Duration
    private let sleepUntilOffset: @Sendable (Duration, Duration?) async throws -> Void
    public let minimumResolution: Duration

    public init(_ clock: any Clock<Duration>) {
        if let erased = clock as? ErasedClock {
            self = erased
        } else {
            (elapsed, sleepUntilOffset, minimumResolution) = Self.wrap(clock)
        }
    }

    private static func wrap<C: Clock<Duration>>(_ clock: C) -> (
        @Sendable () -> Duration, @Sendable (Duration, Duration?) async throws -> Void, Duration
    ) {
        let origin = (Instant(offset: .zero) as? C.Instant) ?? clock.now
        return (
            { origin.duration(to: clock.now) },
            { offset, tolerance in try await clock.sleep(until: origin.advanced(by: offset), tolerance: tolerance) },
            clock.minimumResolution
        )
    }

    public var now: Instant { Instant(offset: elapsed()) }

    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        try await sleepUntilOffset(deadline.offset, tolerance)
    }
}
