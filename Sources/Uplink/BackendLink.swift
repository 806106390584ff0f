import Foundation
import Logging
import Synchronization
import Talaria

/// The ``ConnectivityTracker`` shared by the scheduler and every scan's journey: inputs are
/// applied under one lock at the clock's `now`; each change is logged and announced.
final class BackendLink: Sendable {
    private let tracker = Mutex(ConnectivityTracker())
    private let clock: UplinkTime
    private let logger: Logger
    private let events: @Sendable (UplinkEvent) -> Void
    /// The backend answers again after an absence.
    private let onReturn: @Sendable () -> Void

    init(
        clock: UplinkTime, logger: Logger, events: @escaping @Sendable (UplinkEvent) -> Void,
        onReturn: @escaping @Sendable () -> Void
    ) {
        self.clock = clock
        self.logger = logger
        self.events = events
        self.onReturn = onReturn
    }

    /// A consistent view of the tracker at the clock's now.
    func read<T>(_ body: (ConnectivityTracker, Date) -> T) -> T {
        let now = clock.now
        return tracker.withLock { body($0, now) }
    }

    var connectivity: UplinkConnectivity { read { tracker, now in tracker.connectivity(at: now) } }

    func answered() { apply { $0.answered(at: $1) } }

    func note(_ outcome: TransferOutcome, verdict: OutcomeClass) {
        apply { $0.note(outcome, verdict: verdict, at: $1) }
    }

    func pause(until: Date, busy: Bool, reason: String) {
        logger.warning(
            "uploads paused: the backend asked the device to wait",
            metadata: [
                "until": "\(until)", "reason": "\(reason)",
            ])
        apply { $0.pause(until: until, busy: busy, reason: reason, at: $1) }
    }

    /// The backend refused the key (or it cannot be read): uploads wait, without failing scan
    /// after scan, until the key file changes or a person retries.
    func refuse(key: String?, reason: String) { apply { $0.refuse(key: key, reason: reason, at: $1) } }

    /// The key file cannot be used: uploads wait as for a refused key; a missing key is also
    /// announced, so the panel can say "no key" rather than "refused".
    func hold(keyError: UplinkError) {
        refuse(key: nil, reason: keyError.description)
        if case .apiKeyMissing = keyError { events(.apiKeyMissing(reason: keyError.description)) }
    }

    func liftKeyHold() { apply { $0.liftKeyHold(at: $1) } }

    /// Lifts the hold when the key file now holds another key than the refused one.
    func liftKeyHoldIfReplaced(currentKey: () -> String?) {
        guard read({ tracker, _ in tracker.holdsForKey }), let current = currentKey(),
            read({ tracker, _ in tracker.keyReplaced(by: current) })
        else { return }
        logger.notice("the API key file changed; uploads resume")
        liftKeyHold()
    }

    private func apply(_ input: (inout ConnectivityTracker, Date) -> ConnectivityTracker.Change?) {
        let now = clock.now
        guard let change = tracker.withLock({ input(&$0, now) }) else { return }
        logger.notice(
            "backend connectivity changed",
            metadata: [
                "connectivity": "\(change.connectivity)", "problem": "\(change.problem ?? "")",
            ])
        events(.connectivityChanged(change.connectivity))
        if change.cameBack { onReturn() }
    }
}
