import Foundation

/// Where wall time (UTC) is read for what is stored or compared with other hosts: a scan's next
/// attempt, `Retry-After` as an HTTP date, how long a done scan lingers. Separate from the injected
/// monotonic `Clock` that measures and waits; in tests it follows that clock, so advancing one moves both.
public struct WallClock: Sendable {
    private let read: @Sendable () -> Date

    public init(_ read: @escaping @Sendable () -> Date) {
        self.read = read
    }

    /// The system's wall clock.
    public static let system = WallClock { Date() }

    public var now: Date { read() }
}
