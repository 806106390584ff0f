/// A failure the recognition service reports on a job: `isRetryable` says whether the same photo could succeed
/// later (the device then keeps the scan queued and tries again) or never will (the photo itself is the problem).
public protocol RecognitionFailure: Error, CustomStringConvertible {
    var isRetryable: Bool { get }
}

/// Why the OCR worker could not read a photo.
public enum OCRWorkerError: RecognitionFailure, Equatable {
    /// The worker could not be started or did not come up (no virtual environment, a broken install, models that
    /// fail to load). Retryable: the service may be fixed or the machine less loaded next time.
    case couldNotStart(String)
    /// The worker died while reading (crash, killed by the kernel for memory); the next read starts a new one.
    case crashed(String)
    /// The worker took longer than the limit and was killed; the next read starts a new one.
    case timedOut(seconds: Double)
    /// The photo is not an image the worker can read, or too large: the same bytes will fail again.
    case unreadableImage(String)
    /// The worker answered something that is not its protocol: a mismatched worker script.
    case protocolViolation(String)

    public var isRetryable: Bool {
        switch self {
        case .couldNotStart, .crashed, .timedOut: true
        case .unreadableImage, .protocolViolation: false
        }
    }

    public var description: String {
        switch self {
        case .couldNotStart(let detail): "the OCR worker could not start: \(detail)"
        case .crashed(let detail): "the OCR worker crashed while reading the photo (it will be restarted): \(detail)"
        case .timedOut(let seconds):
            "the OCR worker took longer than \(seconds) s on the photo and was stopped (it will be restarted); "
                + "a slow machine may need a longer limit"
        case .unreadableImage(let detail): "the photo cannot be read: \(detail)"
        case .protocolViolation(let detail):
            "the OCR worker answered outside its protocol (is its script the one shipped with this build?): \(detail)"
        }
    }
}
