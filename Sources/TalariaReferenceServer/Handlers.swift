import Foundation
import Hummingbird

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

    /// Status, results, cleanup and cancel accept the API key (when one is configured) or the job's token.
    func authorizedForJob(_ request: Request, _ job: JobSnapshot) -> Bool {
        guard let apiKey = configuration.apiKey else { return true }
        let token = bearer(request)
        return token == apiKey || token == job.token
    }

    func baseURL(_ request: Request) -> String {
        if let base = configuration.publicBaseURL { return base.hasSuffix("/") ? String(base.dropLast()) : base }
        let scheme = request.headers[.forwardedProto] ?? "http"
        let host = request.head.authority ?? "\(configuration.host):\(configuration.port)"
        return "\(scheme)://\(host)"
    }
}
