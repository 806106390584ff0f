/// Why an imaging operation failed, worded as advice: what went wrong, with what, and what to do.
///
/// Programmer errors (a buffer smaller than its own layout, a negative size from code) trap; what
/// comes from outside — a file, a configuration value, a damaged camera frame, a full pool — is
/// one of these cases.
public enum ImagingError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A JPEG quality outside 1...100.
    case invalidQuality(Int)
    /// A rotation that is not a multiple of 90 degrees.
    case invalidRotation(degrees: Int)
    /// A requested picture size that cannot be produced (zero, negative or odd where even is needed).
    case invalidSize(width: Int, height: Int, reason: String)
    /// The bytes are not a JPEG at all (empty, or no start-of-image marker).
    case notJPEG(source: String, reason: String)
    /// A JPEG that is truncated or damaged: libjpeg stopped, or patched over missing data.
    case corruptJPEG(source: String, reason: String)
    /// A valid JPEG that cannot become YUV 4:2:0 (CMYK, RGB-coded, 12-bit...).
    case unsupportedJPEG(source: String, reason: String)
    /// A file that could not be opened or read.
    case unreadableFile(path: String, reason: String)
    /// libjpeg refused to encode a frame; with a valid frame this is a bug in the encoder setup.
    case encodingFailed(reason: String)
    /// Memory for a codec or a picture could not be allocated.
    case outOfMemory(what: String)
    /// The output ``BufferPool`` had no free buffer, or its buffers are too small for the picture.
    case noFreeBuffer(neededBytes: Int, poolBufferSize: Int)

    public var description: String {
        switch self {
        case .invalidQuality(let quality):
            return "JPEG quality \(quality) is out of range: use a value from 1 to 100 (85 is the default)."
        case .invalidRotation(let degrees):
            return "rotation \(degrees)° is not supported: use 0, 90, 180 or 270 (clockwise)."
        case .invalidSize(let width, let height, let reason):
            return "picture size \(width)x\(height) is not usable: \(reason)."
        case .notJPEG(let source, let reason):
            return "\(source) is not a JPEG (\(reason)): pass a JPEG file (its first bytes are FF D8)."
        case .corruptJPEG(let source, let reason):
            return "\(source) is truncated or damaged (\(reason)): copy the file again, or drop this frame."
        case .unsupportedJPEG(let source, let reason):
            return "\(source) cannot be decoded to YUV 4:2:0 (\(reason)): "
                + "convert it to an 8-bit YCbCr or grayscale JPEG, e.g. with cjpeg."
        case .unreadableFile(let path, let reason):
            return "cannot read \(path) (\(reason)): check that the path exists and is readable."
        case .encodingFailed(let reason):
            return "libjpeg could not encode the frame (\(reason)): this is a bug in SwiftWing's JPEG encoder "
                + "setup; report it with the frame size."
        case .outOfMemory(let what):
            return "out of memory allocating \(what): free memory (fewer queued frames) or use a smaller picture."
        case .noFreeBuffer(let needed, let poolSize):
            if poolSize < needed {
                return "the buffer pool's buffers are \(poolSize) bytes but the picture needs \(needed): "
                    + "create the pool with bufferSize ≥ \(needed)."
            }
            return "no free buffer in the pool for a \(needed)-byte picture: release frames sooner or allow "
                + "more buffers."
        }
    }
}
