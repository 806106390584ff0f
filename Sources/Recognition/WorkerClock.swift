import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The time the OCR worker's supervisor measures its deadlines against, in seconds from an arbitrary start.
/// Injected so tests advance time instead of waiting for it.
public protocol WorkerClock: Sendable {
    var now: Double { get }
}

/// The monotonic clock (`CLOCK_MONOTONIC`): wall-clock changes do not move deadlines.
public struct MonotonicWorkerClock: WorkerClock {
    public init() {}
    public var now: Double {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
    }
}

/// A clock that stands still until `advance(by:)` moves it: what tests of timeouts use.
public final class ManualWorkerClock: WorkerClock {
    private let seconds = Mutex(0.0)
    public init() {}
    public var now: Double { seconds.withLock { $0 } }
    public func advance(by interval: Double) {
        seconds.withLock { $0 += interval }
    }
}
