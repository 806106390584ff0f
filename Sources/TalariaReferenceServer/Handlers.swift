import Foundation
import Hummingbird
import NIOCore

struct Handlers: Sendable {
    let configuration: ReferenceConfiguration
    let state: ReferenceState

    typealias Context = ReferenceRequestContext

    func problem(
        _ status: Int, _ code: String, _ title: String, _ detail: String, _ request: Request, retryable: Bool = false,
        retryAfterMs: Int? = nil, plain: Bool = false, headers: HTTPFields = [:]
    ) -> Response {
        ReferenceServer.json(
            status,
            Render.problem(
                status: status, code: code, title: title, detail: detail, instance: request.uri.path,
                retryable: retryable,
                retryAfterMs: retryAfterMs),
            contentType: plain ? "application/json" : "application/problem+json", headers: headers)
    }

    func sleepSlow(_ faults: [FaultAction]) async throws {
        for case .slow(let ms) in faults { try await Task.sleep(for: configuration.scaled(ms)) }
    }

    func bearer(_ request: Request) -> String? {
        guard let value = request.headers[.authorization] else { return nil }
        let parts = value.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
        return parts[1].trimmingCharacters(in: .whitespaces)
    }

    /// Whether the request's bearer credential is `secret` (compared in constant time).
    func presents(_ request: Request, _ secret: String) -> Bool {
        guard let token = bearer(request) else { return false }
        return credentialsEqual(token, secret)
    }

    /// Status, results, cleanup and cancel accept the API key (when one is configured) or the job's token.
    func authorizedForJob(_ request: Request, _ job: JobSnapshot) -> Bool {
        guard let apiKey = configuration.apiKey else { return true }
        // Both compared, so the time taken does not say which of the two a guess came close to.
        let isKey = presents(request, apiKey)
        let isToken = presents(request, job.token)
        return isKey || isToken
    }

    /// Cancel and cleanup: as ``authorizedForJob(_:_:)``, but with no API key configured and
    /// ``ReferenceConfiguration/jobControlFromLoopbackOnlyWithoutKey`` set, only a loopback peer or the job's token.
    func authorizedForJobControl(_ request: Request, _ job: JobSnapshot, _ context: Context) -> Bool {
        if configuration.apiKey == nil, configuration.jobControlFromLoopbackOnlyWithoutKey {
            return Self.isLoopback(context.channel.remoteAddress) || presents(request, job.token)
        }
        return authorizedForJob(request, job)
    }

    /// Whether a peer is on this machine: 127.0.0.0/8, ::1, or an IPv4-mapped loopback address.
    static func isLoopback(_ address: SocketAddress?) -> Bool {
        guard let address else { return false }
        switch address {
        case .v4(let v4):
            return UInt32(bigEndian: v4.address.sin_addr.s_addr) >> 24 == 127
        case .v6(let v6):
            var raw = v6.address.sin6_addr
            let bytes = withUnsafeBytes(of: &raw) { Array($0) }
            if bytes[0..<15].allSatisfy({ $0 == 0 }) && bytes[15] == 1 { return true }
            return bytes[0..<10].allSatisfy { $0 == 0 } && bytes[10] == 0xFF && bytes[11] == 0xFF && bytes[12] == 127
        case .unixDomainSocket:
            return true
        }
    }

    func baseURL(_ request: Request) -> String {
        if let base = configuration.publicBaseURL { return base.hasSuffix("/") ? String(base.dropLast()) : base }
        let scheme = request.headers[.forwardedProto] ?? "http"
        let host = request.head.authority ?? "\(configuration.host):\(configuration.port)"
        return "\(scheme)://\(host)"
    }
}
