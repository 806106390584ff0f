/// What can go wrong identifying a frame or reading a picture file; each reads as advice.
public enum IdentifyError: Error, Equatable, CustomStringConvertible {
    /// A frame or plane whose geometry does not add up.
    case badFrame(String)
    /// A C library (ZBar, libpng) failed on its own.
    case library(String)
    /// A picture file that cannot be read or decoded.
    case unreadableFile(path: String, reason: String)
    /// A JPEG the decoder refused, in the decoder's own words (they name the file and the fix).
    case undecodableJPEG(String)

    public var description: String {
        switch self {
        case .badFrame(let reason):
            return "frame rejected: \(reason). Fix: pass the frame's real width, height and row stride."
        case .library(let reason):
            return "\(reason). Fix: check that libzbar0 and libpng16-16 are installed (scripts/install-deps.sh)."
        case .unreadableFile(let path, let reason):
            return "\(path): \(reason). Fix: pass a JPEG or PNG picture file that exists and is readable."
        case .undecodableJPEG(let message):
            return message
        }
    }
}
