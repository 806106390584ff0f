/// How a reference server run behaves (the executable's flags map one to one onto these fields).
public struct ReferenceConfiguration: Sendable {
    /// The `Server` header and `/health`'s `service` (`swiftwing doctor` tells a recognizer from the reference).
    public var serverName: String = "talaria-reference"
    /// `POST /_faults` and `POST /_reset`: for tests of the protocol; a real service leaves them out.
    public var faultEndpoints: Bool = true
    /// More fields of `GET /health` (the recognizer's catalogue, say).
    public var healthDetails: [String: String] = [:]
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
    /// How far an upload's image is checked before a job is made for it.
    public var imageCheck: ImageCheck = .magicBytes
    /// A recognition that takes longer fails its job with `retryable: true` (a hung OCR step).
    public var recognitionTimeout: Duration = .seconds(120)
    /// At most this many jobs may hold their photo (waiting for the recognizer or being read); an upload of a new
    /// Idempotency-Key past that gets `503 BUSY` with `Retry-After`, before its body is read, so a flood of uploads
    /// cannot fill the memory. nil: no limit (the reference backend, whose tests upload freely).
    public var maxWaitingPhotos: Int?
    /// The `Retry-After` of a `503 BUSY`, in seconds: about one photo's reading on a small machine.
    public var busyRetryAfterSeconds = 10
    /// A connection that sends nothing for this long while a request is being read (or between requests) is
    /// closed, so a sender that went silent (Wi-Fi gone, no FIN, no RST) gives its place back; a response still
    /// being written (an event stream) is never cut by it. nil: no limit (the reference backend).
    public var idleTimeout: Duration?
    /// An upload's photo must be received within this long of its place being reserved, on the state's clock;
    /// past it the upload gets `408 UPLOAD_TIMEOUT` and its place is freed, so a sender that trickles a byte now
    /// and then cannot hold it either. nil: no limit (the reference backend).
    public var uploadDeadline: Duration?
    /// Data a client leaves unacknowledged this long ends its connection (`TCP_USER_TIMEOUT`): an event stream to a
    /// client whose network died (its pings never acknowledged) gives its place back then, not when TCP gives up
    /// retransmitting (about 15 minutes on Linux). nil: the system's default (the reference backend).
    public var unacknowledgedDataTimeout: Duration?
    /// At most this many event streams may be open for one job (each polls the job); another gets
    /// `429 STREAM_ALREADY_OPEN` with `Retry-After`. nil: no limit (the reference backend).
    public var maxStreamsPerJob: Int?
    /// When set, a job is forgotten once cleaned up, or this long (on the state's clock) after it finished if it is
    /// never cleaned up, and `/_stats` keeps only the latest few entries of its lists: a service that runs for
    /// months holds its recent jobs only. nil: every job and every list is kept (the reference backend's tests
    /// read them).
    public var forgetFinishedJobsAfter: Duration?
    /// `GET /_stats` (it names idempotency keys and job ids) needs the API key, when one is configured.
    public var statsNeedAPIKey = false
    /// With no API key configured, `GET /_stats` (spine text, ISBNs, idempotency keys) and a job's cancel and
    /// cleanup answer only requests from this machine (a loopback peer; cancel and cleanup also the job's
    /// token): a service bound to a network address without a key keeps them from its neighbours.
    /// false: anyone may (the reference backend's tests).
    public var jobControlFromLoopbackOnlyWithoutKey = false
    /// The built-in catalog's Open Library and Google Books endpoints (`/api/books`, `/search.json`,
    /// `/books/v1/volumes`): for tests of the device's lookups; a real service leaves them out.
    public var catalogEndpoints = true

    public init() {}

    func scaled(_ ms: Int) -> Duration { .milliseconds(max(0, Int((Double(ms) * timeScale).rounded()))) }
}

/// How the server checks an uploaded image before making a job for it.
public enum ImageCheck: Sendable, Equatable {
    /// The JPEG magic bytes only: the hash recognizer reads nothing, and tests send tiny fake JPEGs.
    case magicBytes
    /// The JPEG's structure up to its first scan (no pixel is decoded): a non-JPEG, a truncated file or one with
    /// more pixels than `maxPixels` is refused with a problem saying which, so no recognizer decodes it.
    case structure(maxPixels: Int)
}
