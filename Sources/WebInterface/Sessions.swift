import Foundation

/// The browser's side of a pairing: a random token in an HttpOnly cookie, stored on the device only as its
/// hash, and the CSRF token every form carries, derived from it (so nothing more is stored).
enum Session {
    static let cookieName = "swiftwing_session"

    /// 32 random bytes from the kernel's generator, as hex.
    static func newToken() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<32).map { _ in
            let byte = UInt8.random(in: .min ... .max, using: &generator)
            return String(byte, radix: 16).leftPadded(to: 2)
        }.joined()
    }

    static func storedHash(of token: String) -> String { SHA256.hex("session:" + token) }

    static func csrfToken(for token: String) -> String { SHA256.hex("csrf:" + token) }

    /// The `Set-Cookie` value that pairs a browser until `maxAge` seconds pass.
    static func cookie(_ token: String, maxAge: Int) -> String {
        "\(cookieName)=\(token); Path=/; Max-Age=\(maxAge); HttpOnly; SameSite=Strict"
    }

    /// The token in a `Cookie` header, when it has the shape of one.
    static func token(inCookieHeader header: String) -> String? {
        for part in header.split(separator: ";") {
            let pair = part.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard pair.count == 2, pair[0] == cookieName else { continue }
            let value = pair[1]
            guard value.utf8.count == 64, value.utf8.allSatisfy({ isHexDigit($0) }) else { return nil }
            return value
        }
        return nil
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
    }

    /// Equal strings, compared in time independent of where they differ.
    static func same(_ a: String, _ b: String) -> Bool {
        let left = Array(a.utf8)
        let right = Array(b.utf8)
        guard left.count == right.count else { return false }
        var difference: UInt8 = 0
        for index in left.indices { difference |= left[index] ^ right[index] }
        return difference == 0
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
