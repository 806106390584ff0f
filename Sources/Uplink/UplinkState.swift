import Foundation
import Store

/// What the device knows of its backend, for the panel's top bar, `swiftwing status` and the buzzer.
public enum UplinkConnectivity: Hashable, Sendable, CustomStringConvertible {
    /// No request has answered yet since the start.
    case unknown
    case online
    /// The last request could not reach the backend; scans queue and go out when it returns.
    case offline(reason: String)
    /// 429: every upload waits until `until`; presses keep queueing.
    case rateLimited(until: Date)
    /// 503 with `Retry-After`: the backend has all the work it will take (a recognizer with every photo place
    /// taken); every upload waits until `until`, as for a 429, and presses keep queueing.
    case busy(until: Date)
    /// The backend refused the API key: uploads wait until the key file changes or a person retries.
    case unauthorized(reason: String)

    /// Every upload waits for a time the backend gave: rate limited or busy.
    public var isPause: Bool {
        switch self {
        case .rateLimited, .busy: true
        default: false
        }
    }

    public var description: String {
        switch self {
        case .unknown: "unknown"
        case .online: "online"
        case .offline: "offline"
        case .rateLimited: "rate-limited"
        case .busy: "busy"
        case .unauthorized: "unauthorized"
        }
    }
}

/// A moment's view of the uplink.
public struct UplinkSnapshot: Hashable, Sendable {
    public var connectivity: UplinkConnectivity
    /// Jobs holding a slot (uploading, or followed until their terminal state).
    public var jobsInFlight: Int
    public var concurrency: Int
    /// Whole seconds until uploads resume after a 429 or a busy 503 (0 when not paused).
    public var rateLimitRemainingSeconds: Int
    /// Why the device is offline or unauthorized, or the last transient failure.
    public var lastProblem: String?
    public var backend: String

    public init(
        connectivity: UplinkConnectivity, jobsInFlight: Int, concurrency: Int, rateLimitRemainingSeconds: Int,
        lastProblem: String?, backend: String
    ) {
        self.connectivity = connectivity
        self.jobsInFlight = jobsInFlight
        self.concurrency = concurrency
        self.rateLimitRemainingSeconds = rateLimitRemainingSeconds
        self.lastProblem = lastProblem
        self.backend = backend
    }
}

/// What the uplink tells the rest of the daemon (buzzer, panel, logs).
public enum UplinkEvent: Sendable {
    case connectivityChanged(UplinkConnectivity)
    case progress(scanID: UUID, fraction: Double?, message: String?)
    /// The scan's books and its `done` state were committed together.
    case booksLanded(scanID: UUID, books: [BookRecord])
    /// The scan failed for good (kept for `swiftwing queue retry`).
    case scanFailed(scanID: UUID, reason: String)
    /// A scan changed state (uploading, analyzing, queued again…): the panel's strip may redraw.
    case scanChanged(scanID: UUID)
    /// No API key is installed: uploads are held (connectivity `unauthorized`) until one is.
    case apiKeyMissing(reason: String)
}
