import CNettle

/// SHA-256, for the one thing this process hashes: session tokens before they are stored or looked up, and the
/// CSRF token derived from a session. Nettle's (Debian's libnettle8, which GnuTLS already brings onto the device),
/// in place of a hand-written one: a well-kept implementation, for the cost of one shared library already mapped by
/// libcurl's GnuTLS in the other processes.
enum SHA256 {
    static func digest(_ message: some Collection<UInt8>) -> [UInt8] {
        var context = sha256_ctx()
        nettle_sha256_init(&context)
        let bytes = Array(message)
        bytes.withUnsafeBufferPointer { nettle_sha256_update(&context, $0.count, $0.baseAddress) }
        var digest = [UInt8](repeating: 0, count: Int(SHA256_DIGEST_SIZE))
        digest.withUnsafeMutableBufferPointer { nettle_sha256_digest(&context, $0.count, $0.baseAddress) }
        return digest
    }

    /// The digest of the UTF-8 of `text`, in lowercase hex.
    static func hex(_ text: String) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var characters: [UInt8] = []
        characters.reserveCapacity(64)
        for byte in digest(Array(text.utf8)) {
            characters.append(digits[Int(byte >> 4)])
            characters.append(digits[Int(byte & 0xf)])
        }
        return String(decoding: characters, as: UTF8.self)
    }
}
