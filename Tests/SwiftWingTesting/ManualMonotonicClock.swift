import Synchronization
import SwiftWingCore

/// A ``MonotonicClock`` that moves only when a test advances it, so liveness checks are tested
/// with exact silences rather than sleeps.
public final class ManualMonotonicClock: MonotonicClock {
    private let current: Mutex<MonotonicInstant>

    public init(start: MonotonicInstant = MonotonicInstant(nanoseconds: 1_000_000_000_000)) {
        current = Mutex(start)
    }

    public var now: MonotonicInstant { current.withLock { $0 } }

    public func advance(by duration: Duration) {
        let (seconds, attoseconds) = duration.components
        current.withLock { $0 = $0.advanced(byNanoseconds: seconds * 1_000_000_000 + attoseconds / 1_000_000_000) }
    }
}
