import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A request URL that passed the engine's policy: http(s) only, and plain http only to loopback.
/// Checked before any connection is made.
package struct TransferTarget: Sendable {
    /// The whole URL, for curl only: it may carry a query string, which is never logged.
    let url: String
    /// The host as written, without IPv6 brackets.
    let host: String
    /// `scheme://host[:port]/path`: no user info, no query, no fragment. Safe for logs and errors.
    let redacted: String
    /// The query string (without `?`), so error texts can be checked for it.
    let query: String?

    init(_ url: URL) throws(HTTPError) {
        let components = URLComponents(url: url, resolvingAgainstBaseURL: false)
        let scheme = (components?.scheme ?? url.scheme ?? "").lowercased()
        // URL's own host as written: URLComponents' host accessors run ICU's IDNA code (Punycode).
        var host = url.host(percentEncoded: true) ?? ""
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        let port = components?.port.map { ":\($0)" } ?? ""
        let path = components?.percentEncodedPath ?? ""
        let bracketedHost = host.contains(":") ? "[\(host)]" : host
        let redacted = "\(scheme)://\(bracketedHost)\(port)\(path)"

        guard scheme == "http" || scheme == "https", !host.isEmpty else { throw .invalidURL(redacted) }
        guard scheme == "https" || TransferTarget.isLoopback(host) else { throw .insecureURL(host) }
        self.url = url.absoluteString
        self.host = host
        self.redacted = redacted
        self.query = components?.percentEncodedQuery
    }

    /// True for `localhost`, 127.0.0.0/8, `::1` and IPv4-mapped 127.0.0.0/8. curl resolves
    /// `localhost` to loopback itself (since 7.78) without asking DNS, so the name cannot be redirected.
    /// The corresponding C function is `inet_pton`.
    package static func isLoopback(_ host: String) -> Bool {
        let name = host.lowercased()
        if name == "localhost" || name == "localhost." { return true }
        var ipv4 = in_addr()
        if inet_pton(AF_INET, name, &ipv4) == 1 { return UInt32(bigEndian: ipv4.s_addr) >> 24 == 127 }
        var ipv6 = in6_addr()
        guard inet_pton(AF_INET6, name, &ipv6) == 1 else { return false }
        let bytes = withUnsafeBytes(of: ipv6) { Array($0) }
        if bytes[0..<15].allSatisfy({ $0 == 0 }) && bytes[15] == 1 { return true }
        let mapped = bytes[0..<10].allSatisfy { $0 == 0 } && bytes[10] == 0xFF && bytes[11] == 0xFF
        return mapped && bytes[12] == 127
    }
}
