import Synchronization
import Uplink

/// Keeps every event an ``UplinkService`` sends (its `events` closure), for tests to read back.
public final class UplinkEventRecorder: Sendable {
    private let events = Mutex<[UplinkEvent]>([])

    public init() {}

    public func record(_ event: UplinkEvent) { events.withLock { $0.append(event) } }

    /// Every event so far, in order.
    public var all: [UplinkEvent] { events.withLock { $0 } }

    /// The connectivity changes announced so far, in order.
    public var connectivityChanges: [UplinkConnectivity] {
        all.compactMap { if case .connectivityChanged(let connectivity) = $0 { connectivity } else { nil } }
    }
}
