/// How a reference server run behaves (the executable's flags map one to one onto these fields).
public struct ReferenceConfiguration: Sendable {
    public var host: String = "127.0.0.1"
    /// 0 = any free port.
    public var port: Int = 0
    /// When set, uploads need `Authorization: Bearer <apiKey>` (401 UNAUTHORIZED otherwise).
    public var apiKey: String?
    public var envelope: EnvelopeShape = .sseRelative
    /// Faults applied to every matching request.
    public var faults: [Fault] = []
    /// Total time from upload to the terminal event, spread over the progress events.
    public var recognitionDelayMs: Int = 3000
    /// The `retry:` value at the start of each stream.
    public var retryMs: Int = 5000
    /// Idle time after which a stream sends a `ping` event.
    public var pingIntervalMs: Int = 30000
    /// Multiplies every server-side delay (recognition, pings, `slow:MS`): 0.1 runs ten times faster.
    public var timeScale: Double = 1.0
    /// Progress on a 0–100 scale instead of 0–1.
    public var progressPercent: Bool = false
    /// Base of absolute URLs (`sse-absolute`); default: `http://` + the request's Host.
    public var publicBaseURL: String?
    public var maxImageBytes: Int = 10_000_000

    public init() {}

    func scaled(_ ms: Int) -> Duration { .milliseconds(max(0, Int((Double(ms) * timeScale).rounded()))) }
}
