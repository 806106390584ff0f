/// # Talaria: the backend link's pure core
///
/// Everything here is network-free and clock-free, so the transfer engine, the reference backend's
/// tests and the uploader build on values that are tested on their own. The protocol is
/// docs/protocol.md.
///
/// | piece | type | the engine's use |
/// |---|---|---|
/// | upload request | ``TalariaEndpoints``, ``ScanUploadRequest`` | URL, headers (`Idempotency-Key` = scan id), the multipart envelope around the photo file; log ``ScanUploadRequest/redactedHeaders`` only |
/// | upload response | ``UploadAccepted/decode(_:base:)`` | persist `jobID`, `streamURL`, `streamToken`, `statusURL` before opening the stream; ``UploadAccepted/needsPolling`` → poll |
/// | error bodies | ``ProblemDetails``, ``RetryAfter`` | never fails; the reason for the queue listing |
/// | outcome → action | ``RetryPolicy/classify(_:operation:now:)``, ``RetryPolicy/decide(after:attemptInRound:now:)``, ``RateLimitGate`` | backoff, next round, pause all, fail with the server's reason |
/// | stream bytes → events | ``SSEParser`` (one per stream; ``SSEParser/finish()`` on disconnect, keep it for `Last-Event-ID` = ``SSEParser/lastEventID``) | feed curl's write-callback chunks straight in |
/// | events → meaning | ``TalariaStreamDecoder`` (one per job) | progress, books, terminal (a second one ignored), warnings to log |
/// | following a job | ``JobStream`` (parser + decoder + resume + 5-minute abandonment) | feed chunks, act on `complete`/`fetchResults`/`failed`/`pollStatus`; `disconnected()` → resume with `lastEventID` after `reconnectDelay` |
/// | status / results | ``JobStatusResponse``, ``JobResultsResponse`` | polling and stripped completions |
/// | books → library | none here: the Uplink deduplicates ``TalariaBook``s and maps them to the library's records | one transaction: books + scan `done` |
///
/// Whatever the server sends, nothing here traps or throws past one event: a body that is not JSON
/// is a ``TalariaDecodingError`` quoting its start; a bad event or book is a ``TalariaWarning``.
public enum Talaria {
    /// The protocol version this client speaks.
    public static let protocolVersion = "v3"
}
