import Foundation
import Talaria

/// What the uplink knows of its backend, as pure state: every input carries its `now` and nothing
/// reads a clock, so its tests step through rate limits and holds without waiting.
///
/// - `unknown` until the first answer; `online` while requests are answered, `offline` when one
///   could not reach the backend;
/// - a 429 closes the ``RateLimitGate`` until its deadline: uploads wait and the state reads
///   `rate-limited` until then, `online` after; a 503 with `Retry-After` does the same and reads `busy`;
/// - a refused (or unreadable) API key holds uploads, `unauthorized`, until the key file holds
///   another key or a person retries.
struct ConnectivityTracker: Sendable {
    /// A change of the connectivity the rest of the daemon sees (the buzzer plays a pattern for
    /// each): from one state to another, never a pause extended while rate-limited.
    struct Change: Equatable, Sendable {
        var connectivity: UplinkConnectivity
        /// Why, when the change has a reason worth logging.
        var problem: String?
        /// The backend answers again after being offline (or unheard of): waiting scans start a round now.
        var cameBack: Bool
    }

    /// The last state reported by a request; ``connectivity(at:)`` adds the gate and the hold.
    private var reported: UplinkConnectivity = .unknown
    private(set) var gate = RateLimitGate()
    /// The pause that sets the gate's deadline came from a busy backend (503), not a rate limit (429).
    private var pauseIsBusy = false
    /// Why the device is offline or unauthorized, or the last transient failure.
    private(set) var lastProblem: String?
    /// The key the backend refused (`.some(nil)`: the key file could not be read); `nil`: no hold.
    private var refusedKey: String??

    func connectivity(at now: Date) -> UplinkConnectivity {
        if case .unauthorized = reported, refusedKey != nil { return reported }
        if let until = gate.pausedUntil, gate.isPaused(at: now) {
            return pauseIsBusy ? .busy(until: until) : .rateLimited(until: until)
        }
        if reported.isPause { return .online }
        return reported
    }

    /// New uploads wait: the backend is rate limiting or refused the key.
    func uploadsHeld(at now: Date) -> Bool { gate.isPaused(at: now) || refusedKey != nil }

    var holdsForKey: Bool { refusedKey != nil }

    /// The end of the rate-limit pause, when one is on at `now`.
    func pausedUntil(at now: Date) -> Date? { gate.isPaused(at: now) ? gate.pausedUntil : nil }

    // MARK: Inputs

    /// A request was answered (any HTTP status).
    mutating func answered(at now: Date) -> Change? {
        switch reported {
        case .online, .unauthorized: nil
        default: set(.online, problem: nil, at: now)
        }
    }

    /// A request ended with `outcome`, classified as `verdict`.
    mutating func note(_ outcome: TransferOutcome, verdict: OutcomeClass, at now: Date) -> Change? {
        switch outcome {
        case .connectFailed, .timedOut, .connectionLost:
            return set(.offline(reason: verdict.reason ?? "unreachable"), problem: verdict.reason, at: now)
        case .response:
            if case .transient(let reason) = verdict { lastProblem = reason }
            return answered(at: now)
        }
    }

    /// A 429, or a busy backend's 503 (`busy`): uploads wait until `until` (a shorter pause never shortens a longer
    /// one, and the longer one says which it is).
    mutating func pause(until: Date, busy: Bool, reason: String, at now: Date) -> Change? {
        let before = connectivity(at: now)
        if !gate.isPaused(at: now) || until >= (gate.pausedUntil ?? until) { pauseIsBusy = busy }
        gate.pause(until: until)
        let deadline = gate.pausedUntil ?? until
        reported = pauseIsBusy ? .busy(until: deadline) : .rateLimited(until: deadline)
        lastProblem = reason
        return change(from: before, problem: reason, at: now)
    }

    /// The backend refused `key` (`nil`: the key file could not be read): uploads wait.
    mutating func refuse(key: String?, reason: String, at now: Date) -> Change? {
        refusedKey = .some(key)
        return set(.unauthorized(reason: reason), problem: reason, at: now)
    }

    /// A person retried, or the key file changed: the key is tried again.
    mutating func liftKeyHold(at now: Date) -> Change? {
        guard refusedKey != nil else { return nil }
        refusedKey = nil
        return set(.unknown, problem: nil, at: now)
    }

    /// Whether the key file's content `current` is another key than the refused one.
    func keyReplaced(by current: String) -> Bool {
        guard let refused = refusedKey else { return false }
        return current != refused
    }

    private mutating func set(_ new: UplinkConnectivity, problem: String?, at now: Date) -> Change? {
        let before = connectivity(at: now)
        reported = new
        if let problem { lastProblem = problem }
        return change(from: before, problem: problem, at: now)
    }

    private func change(from before: UplinkConnectivity, problem: String?, at now: Date) -> Change? {
        let after = connectivity(at: now)
        guard before != after else { return nil }
        if before.isPause, after.isPause { return nil }
        let wasAway: Bool
        switch before {
        case .offline, .unknown: wasAway = true
        default: wasAway = false
        }
        return Change(connectivity: after, problem: problem, cameBack: wasAway && after == .online)
    }
}
