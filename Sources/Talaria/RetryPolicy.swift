import Foundation

/// What one request to the backend came to, as the transfer engine reports it.
public enum TransferOutcome: Hashable, Sendable {
    /// No connection: DNS, refused, unreachable, TLS handshake. `detail` is curl's text.
    case connectFailed(detail: String)
    /// Connected, but the connect or transfer timeout expired.
    case timedOut(detail: String)
    /// The connection dropped mid-request or mid-response.
    case connectionLost(detail: String)
    /// A complete HTTP response.
    case response(status: Int, headers: HTTPFields, body: [UInt8])
}

/// How the uploader must treat an outcome (docs/protocol.md §1).
public enum OutcomeClass: Hashable, Sendable {
    case success
    /// Try again with backoff: connect errors, timeouts, 5xx (a 503 without `Retry-After`), 408, `retryable: true`, a 409 while
    /// the same Idempotency-Key is in flight, a 404 from a server that may be mid-deploy.
    case transient(reason: String)
    /// 429, or 503 with `Retry-After`: pause *all* uploads until `until`; presses keep queueing. `busy`: a 503 (the
    /// service is unavailable that long), which the device reports as busy rather than rate limited.
    case rateLimited(until: Date, reason: String, busy: Bool)
    /// The scan fails with the server's reason; its image is kept for `swiftwing queue retry`.
    case permanent(reason: String)
    /// 401/403: permanent for the scan, and the device reports "unauthorized".
    case unauthorized(reason: String)

    public var reason: String? {
        switch self {
        case .success: nil
        case .transient(let reason), .rateLimited(_, let reason, _), .permanent(let reason), .unauthorized(let reason):
            reason
        }
    }
}

/// The next step for one scan after an attempt.
public enum RetryDecision: Hashable, Sendable {
    case done
    /// Retry in this round at `at` (backoff with jitter).
    case retry(at: Date, attemptInRound: Int)
    /// The round's attempts are used up: wait for the next round (the network coming back, or
    /// ``RetryPolicy/roundInterval``), but not before `notBefore`. The scan is never dropped.
    case nextRound(notBefore: Date, reason: String)
    /// Pause every upload until `until` (rate limited, or `busy`); this scan is retried then, no attempt counted.
    case pauseAll(until: Date, reason: String, busy: Bool)
    /// Mark the scan failed (not retryable) with `reason`; keep its image.
    case fail(reason: String, unauthorized: Bool)
}

/// Retry and backoff as pure logic: no clock is read and no randomness drawn except through the
/// injected `random` (a value in 0..<1), so tests are exact.
public struct RetryPolicy: Sendable {
    /// Waits after the 1st, 2nd, 3rd failure of a round (before jitter). The last one is also the
    /// least time before the next round, even when the network "comes back" at once.
    public var backoff: [TimeInterval]
    public var attemptsPerRound: Int
    /// ± this fraction of each wait, drawn from `random`.
    public var jitter: Double
    /// A new round starts this long after the last one ended, or earlier when the network returns.
    public var roundInterval: TimeInterval
    public var random: @Sendable () -> Double

    public init(
        backoff: [TimeInterval] = [1, 2, 4], attemptsPerRound: Int = 3, jitter: Double = 0.2,
        roundInterval: TimeInterval = 180, random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) }
    ) {
        precondition(!backoff.isEmpty && attemptsPerRound > 0 && (0..<1).contains(jitter), "invalid retry policy")
        self.backoff = backoff
        self.attemptsPerRound = attemptsPerRound
        self.jitter = jitter
        self.roundInterval = roundInterval
        self.random = random
    }

    /// The wait after the `failure`-th failure of a round (1-based), jittered.
    public func delay(afterFailure failure: Int) -> TimeInterval {
        let base = backoff[min(max(failure, 1), backoff.count) - 1]
        let factor = 1 - jitter + 2 * jitter * min(max(random(), 0), 0.999_999)
        return base * factor
    }

    /// The decision after attempt number `attemptInRound` (1-based) of a round came to `outcome`.
    public func decide(after outcome: OutcomeClass, attemptInRound: Int, now: Date) -> RetryDecision {
        switch outcome {
        case .success:
            return .done
        case .permanent(let reason):
            return .fail(reason: reason, unauthorized: false)
        case .unauthorized(let reason):
            return .fail(reason: reason, unauthorized: true)
        case .rateLimited(let until, let reason, let busy):
            return .pauseAll(until: until, reason: reason, busy: busy)
        case .transient(let reason):
            let wait = delay(afterFailure: attemptInRound)
            if attemptInRound >= attemptsPerRound {
                return .nextRound(notBefore: now.addingTimeInterval(wait), reason: reason)
            }
            return .retry(at: now.addingTimeInterval(wait), attemptInRound: attemptInRound + 1)
        }
    }

    /// When the next round starts for a scan that ended its round at `roundEnded`, if the network
    /// does not come back first (jittered, so many devices do not return at once).
    public func nextRoundStart(after roundEnded: Date) -> Date {
        let factor = 1 - jitter + 2 * jitter * min(max(random(), 0), 0.999_999)
        return roundEnded.addingTimeInterval(roundInterval * factor)
    }

    // MARK: Classification

    /// Classifies an outcome. `operation` names the request in reasons ("the upload", "the status poll").
    public static func classify(_ outcome: TransferOutcome, operation: String = "the upload", now: Date) -> OutcomeClass
    {
        switch outcome {
        case .connectFailed(let detail):
            return .transient(
                reason: "\(operation) could not connect (\(detail)); the device is offline or the "
                    + "backend is down, and the scan waits in the queue")
        case .timedOut(let detail):
            return .transient(reason: "\(operation) timed out (\(detail)); retried with backoff")
        case .connectionLost(let detail):
            return .transient(reason: "\(operation) lost its connection (\(detail)); retried with backoff")
        case .response(let status, let headers, let body):
            if (200..<300).contains(status) { return .success }
            let problem = ProblemDetails.decode(body)
            let said = "HTTP \(status), \(problem.reason)"
            switch status {
            case 429:
                return pause(
                    "the backend is rate limiting (\(said))", operation: operation, problem: problem, headers: headers,
                    busy: false, now: now)
            case 401, 403:
                return .unauthorized(
                    reason: "the backend refused the API key (\(said)); put the right key in the api-key credential "
                        + "($CREDENTIALS_DIRECTORY/api-key), then run `swiftwing queue retry --all`")
            case 408:
                return .transient(reason: "\(operation) timed out at the server (\(said)); retried with backoff")
            case 503 where headers["Retry-After"] != nil:
                // RFC 9110 §10.2.3: how long the service expects to be unavailable to every request of the device
                // (a recognizer with all the photos it will hold), so every upload waits, as for a 429.
                return pause(
                    "the backend is busy (\(said))", operation: operation, problem: problem, headers: headers,
                    busy: true, now: now)
            case 500...599:
                return .transient(reason: "the backend failed (\(said)); retried with backoff")
            default:
                break
            }
            if problem.retryable == true {
                return .transient(reason: "the backend asked for a retry (\(said))")
            }
            switch status {
            case 413:
                return .permanent(
                    reason: "the backend refused the photo as too large (\(said)); the image is kept: lower "
                        + "camera.width/height or the JPEG quality, then `swiftwing queue retry ID`")
            case 400, 415, 422:
                return .permanent(
                    reason: "the backend refused the photo (\(said)); the image is kept for `swiftwing queue retry ID` "
                        + "or `swiftwing queue discard ID`")
            case 404, 405:
                return .transient(
                    reason: "the backend has no such endpoint (\(said)); check the backend URL in the configuration; "
                        + "the scan waits in the queue")
            case 409, 425:
                return .transient(reason: "the backend is still busy with this scan's earlier request (\(said))")
            default:
                return .permanent(
                    reason:
                        "the backend refused the request (\(said)); the image is kept for `swiftwing queue retry ID`")
            }
        }
    }

    /// A pause of every request of `operation`'s kind until the server's `Retry-After` (or its body's), with a reason
    /// that names what waits: "uploads pause for 30 s, presses keep queueing", "catalogue lookups pause for 30 s".
    private static func pause(
        _ cause: String, operation: String, problem: ProblemDetails, headers: HTTPFields, busy: Bool, now: Date
    ) -> OutcomeClass {
        let until = RetryAfter.resumeInstant(problem: problem, headers: headers, now: now)
        let seconds = Int(until.timeIntervalSince(now).rounded(.up))
        let requests = (operation.hasPrefix("the ") ? String(operation.dropFirst(4)) : operation) + "s"
        let queueing = operation == "the upload" ? ", presses keep queueing" : ""
        return .rateLimited(
            until: until, reason: "\(cause); \(requests) pause for \(seconds) s\(queueing)", busy: busy)
    }
}

/// The device-wide rate-limit pause: every upload waits until ``pausedUntil``; presses keep queueing
/// and the panel shows ``remaining(at:)``.
public struct RateLimitGate: Hashable, Sendable {
    public private(set) var pausedUntil: Date?

    public init() {}

    /// Extends the pause to `until` (a shorter pause never shortens a longer one).
    public mutating func pause(until: Date) {
        pausedUntil = max(pausedUntil ?? until, until)
    }

    public func isPaused(at now: Date) -> Bool {
        guard let pausedUntil else { return false }
        return now < pausedUntil
    }

    /// The countdown in whole seconds (0 when not paused).
    public func remaining(at now: Date) -> Int {
        guard let pausedUntil, now < pausedUntil else { return 0 }
        return Int(pausedUntil.timeIntervalSince(now).rounded(.up))
    }
}
