import FuzzSupport
import WebInterface

/// Bytes a browser (or anyone on the network) sends the web process, read as the first byte chooses: a form body or
/// query string, a Cookie header, a pairing code, a Host header. Form values survive encoding and decoding again; a
/// session token is 64 lowercase hex digits; a pairing code is 6 ASCII digits; an accepted Host names no path.
func fuzzWebInput(_ bytes: UnsafeRawBufferPointer) {
    let (selector, rest) = FuzzInput.selector(bytes)
    let text = String(decoding: rest, as: UTF8.self)
    switch selector % 4 {
    case 0:
        for (name, value) in WebInputReaders.formPairs(text) {
            for field in [name, value] {
                let again = WebInputReaders.formDecode(WebInputReaders.formEncode(field))
                precondition(again == field, "a form field changed on its way through encode and decode")
            }
        }
    case 1:
        if let token = WebInputReaders.sessionToken(cookieHeader: text) {
            precondition(
                token.utf8.count == 64
                    && token.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) },
                "a session token that is not 64 hex digits")
            precondition(WebInputReaders.storedHash(of: token).utf8.count == 64)
        }
    case 2:
        if let code = WebInputReaders.pairingCode(text) {
            precondition(code.utf8.count == 6 && code.utf8.allSatisfy { (48...57).contains($0) }, "a code: \(code)")
        }
    default:
        if WebInputReaders.hostAllowed(text) {
            precondition(!text.contains("/") && !text.contains("@") && !text.contains(" "), "an odd Host allowed")
        }
    }
}

@main enum FuzzMain { static func main() { FuzzInput.main(fuzzWebInput) } }
