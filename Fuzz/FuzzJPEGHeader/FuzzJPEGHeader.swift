import FuzzSupport
import TalariaReferenceServer

/// An uploaded photo's first bytes through the JPEG marker reader that refuses photos too large to decode before
/// any recognizer sees them. A size it accepts is positive and within the limit (the first byte chooses the limit's
/// megapixels); a refusal says why.
func fuzzJPEGHeader(_ bytes: UnsafeRawBufferPointer) {
    let (selector, rest) = FuzzInput.selector(bytes)
    let limit = (Int(selector % 64) + 1) * 1_000_000
    do {
        let header = try JPEGHeader.check(Array(rest), maxPixels: limit)
        precondition(header.width > 0 && header.height > 0, "a size of \(header.width)x\(header.height)")
        precondition(header.pixels <= limit, "\(header.pixels) pixels passed a limit of \(limit)")
    } catch {
        precondition(!error.description.isEmpty, "a refusal without a reason")
    }
}

@main enum FuzzMain { static func main() { FuzzInput.main(fuzzJPEGHeader) } }
