import FuzzSupport
import TalariaReferenceServer

/// An upload's body through the reference server's multipart reader (the recognizer's upload path), under one of
/// four boundaries (the first byte chooses). Whatever the body: no more parts than the limit come back, the photo is
/// never larger than the body, and a refusal is a short sentence that does not repeat the body.
func fuzzMultipart(_ bytes: UnsafeRawBufferPointer) {
    let (selector, rest) = FuzzInput.selector(bytes)
    let boundaries = ["b", "XYZ", "----swiftwing", "a b;c"]
    let boundary = boundaries[Int(selector) % boundaries.count]
    let contentType =
        selector & 0x80 == 0 ? "multipart/form-data; boundary=\"\(boundary)\"" : "multipart/form-data; boundary=b"
    let body = Array(rest)
    let outcome = MultipartReading.read(contentType: contentType, body: body)
    if let photo = outcome.photo { precondition(photo.bytes <= body.count, "a photo larger than the body") }
    switch outcome.parts {
    case .success(let count):
        precondition(count > 0 && count <= outcome.partLimit, "\(count) parts came back")
    case .failure(let failure):
        precondition(
            !failure.text.isEmpty && failure.text.utf8.count <= 400, "a refusal of \(failure.text.utf8.count) bytes")
    }
    if let failure = outcome.photoFailure {
        precondition(failure.text.utf8.count <= 400, "a refusal of \(failure.text.utf8.count) bytes")
    }
}

@main enum FuzzMain { static func main() { FuzzInput.main(fuzzMultipart) } }
