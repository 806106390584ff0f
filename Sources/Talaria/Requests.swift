import Foundation

/// The URLs of Talaria v3 (docs/protocol.md) for one backend base URL (`https://api.example.org/` or with a path
/// prefix, `https://example.org/talaria/`).
public struct TalariaEndpoints: Hashable, Sendable {
    public let base: URL

    /// `base` is normalised to end with `/`, so relative URLs from the server resolve under it.
    public init(base: URL) {
        var text = base.absoluteString
        if !text.hasSuffix("/") { text += "/" }
        self.base = URL(string: text) ?? base
    }

    /// `POST {base}/v3/jobs/scans`.
    public var upload: URL { base.appendingPathComponent("v3/jobs/scans") }

    /// `GET {base}/v3/jobs/scans/{id}` (status); `DELETE` of the same URL cancels.
    public func job(_ jobID: String) -> URL { upload.appendingPathComponent(jobID) }

    /// `GET {base}/v3/jobs/scans/{id}/results`.
    public func results(_ jobID: String) -> URL { job(jobID).appendingPathComponent("results") }

    /// `DELETE {base}/v3/jobs/scans/{id}/cleanup` (404 = already clean).
    public func cleanup(_ jobID: String) -> URL { job(jobID).appendingPathComponent("cleanup") }

    /// True when `url` has the backend's origin: the same scheme, host and port (a missing port read as the
    /// scheme's default, 80 or 443; hosts compared without case). Only requests to this origin carry the API key.
    public func isBackendOrigin(_ url: URL) -> Bool {
        Self.origin(of: url) != nil && Self.origin(of: url) == Self.origin(of: base)
    }

    /// The `Authorization` bearer for a request to `url`: on the backend's origin the API key or the job's token
    /// (`preferJobToken` says which comes first when both exist); on any other origin the job's token or nothing.
    /// The API key is the device's own and goes nowhere else (docs/protocol.md §2, §4).
    public func bearer(for url: URL, apiKey: String?, jobToken: String?, preferJobToken: Bool) -> String? {
        let apiKey = apiKey.flatMap { $0.isEmpty ? nil : $0 }
        let jobToken = jobToken.flatMap { $0.isEmpty ? nil : $0 }
        guard isBackendOrigin(url) else { return jobToken }
        return preferJobToken ? (jobToken ?? apiKey) : (apiKey ?? jobToken)
    }

    private struct Origin: Hashable {
        var scheme: String
        var host: String
        var port: Int
    }

    private static func origin(of url: URL) -> Origin? {
        guard let scheme = url.scheme?.lowercased(), let host = url.host?.lowercased(), !host.isEmpty else {
            return nil
        }
        let port = url.port ?? (scheme == "https" ? 443 : scheme == "http" ? 80 : -1)
        return Origin(scheme: scheme, host: host.trimmingCharacters(in: CharacterSet(charactersIn: "[]")), port: port)
    }

    /// True when plain `http://` may be used: loopback hosts only (development, the reference backend).
    public static func allowsPlainHTTP(_ url: URL) -> Bool {
        guard url.scheme?.lowercased() == "http" else { return url.scheme?.lowercased() == "https" }
        let host = (url.host ?? "").lowercased().trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        if host == "localhost" || host == "::1" { return true }
        // 127.0.0.0/8 written as a dotted quad (not "127.0.0.1.example.org").
        let octets = host.split(separator: ".", omittingEmptySubsequences: false)
        return octets.count == 4 && octets[0] == "127" && octets.allSatisfy { UInt8($0) != nil }
    }
}

/// The upload of one scan (docs/protocol.md §1) as headers and a `multipart/form-data` envelope, ready for a
/// transfer engine: the photo's bytes go between ``bodyPrefix`` and ``bodySuffix``, read from its file as
/// they are sent. The API key is a parameter, never logged: ``redactedHeaders`` is what may be.
public struct ScanUploadRequest: Sendable {
    public var url: URL
    public var headers: [(name: String, value: String)]
    /// The boundary and the `photos[]` part's head, up to the photo's first byte.
    public var bodyPrefix: [UInt8]
    /// After the photo's last byte: the part's end and the closing boundary.
    public var bodySuffix: [UInt8]
    public var boundary: String

    /// - Parameters:
    ///   - idempotencyKey: the scan's ``ScanRecord/idempotencyKey`` (its id for the first job): a
    ///     re-sent scan must not become a second job.
    ///   - apiKey: from the systemd credential, or `nil` when none is configured.
    /// One photo per request, at most ``maximumImageBytes``.
    public init(
        endpoints: TalariaEndpoints, idempotencyKey: String, deviceID: UUID, apiKey: String?, version: String,
        boundary: String = "swiftwing-" + UUID().uuidString.lowercased()
    ) {
        url = endpoints.upload
        self.boundary = boundary
        var headers: [(String, String)] = [
            ("Content-Type", "multipart/form-data; boundary=\(boundary)"),
            ("X-Device-ID", deviceID.uuidString.lowercased()),
            ("Idempotency-Key", idempotencyKey),
            ("User-Agent", "swiftwing/\(version)"),
            ("Accept", "application/json"),
        ]
        if let apiKey, !apiKey.isEmpty { headers.append(("Authorization", "Bearer \(apiKey)")) }
        self.headers = headers.map { (name: $0.0, value: $0.1) }
        bodyPrefix =
            Array("--\(boundary)\r\n".utf8)
            + Array("Content-Disposition: form-data; name=\"photos[]\"; filename=\"spine.jpg\"\r\n".utf8)
            + Array("Content-Type: image/jpeg\r\n\r\n".utf8)
        bodySuffix = Array("\r\n--\(boundary)--\r\n".utf8)
    }

    /// The whole body around a photo held in memory.
    public func body(jpeg: [UInt8]) -> [UInt8] {
        bodyPrefix + jpeg + bodySuffix
    }

    /// The server's limit per image.
    public static let maximumImageBytes = 10_000_000

    /// The headers with the bearer token replaced by `Bearer <redacted>`: safe for a log line.
    public var redactedHeaders: [(name: String, value: String)] {
        headers.map { $0.name.lowercased() == "authorization" ? (name: $0.name, value: "Bearer <redacted>") : $0 }
    }
}
