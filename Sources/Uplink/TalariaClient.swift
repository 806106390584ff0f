import Foundation
import HTTPEngine
import Talaria

/// The backend's requests (docs/protocol.md §1, §2, §4) over any ``HTTPTransport``, with every result turned
/// into a ``TransferOutcome`` that ``RetryPolicy`` can classify. No state, no retries: the
/// ``UplinkService`` decides what an outcome means for a scan.
struct TalariaClient: Sendable {
    let transport: any HTTPTransport
    let settings: UplinkSettings

    private var commonHeaders: [HTTPHeader] {
        [
            HTTPHeader(name: "X-Device-ID", value: settings.deviceID.uuidString.lowercased()),
            HTTPHeader(name: "User-Agent", value: "swiftwing/\(settings.version)"),
        ]
    }

    /// `POST /v3/jobs/scans` with the photo file as `photos[]`, read from disk as it is sent. Throws
    /// ``HTTPError/requestBodyUnreadable(path:detail:)`` when the photo itself could not be read whole
    /// (gone, unreadable, shrank meanwhile): that is the scan's problem, not the link's.
    func upload(idempotencyKey: String, photoPath: String, apiKey: String?) async throws(HTTPError) -> TransferOutcome {
        let upload = ScanUploadRequest(
            endpoints: settings.endpoints, idempotencyKey: idempotencyKey, deviceID: settings.deviceID, apiKey: apiKey,
            version: settings.version)
        let body = HTTPFileBody(prefix: upload.bodyPrefix, path: photoPath, suffix: upload.bodySuffix)
        let request = HTTPRequest(
            method: .post, url: upload.url, headers: upload.headers.map { HTTPHeader(name: $0.name, value: $0.value) },
            body: .file(body), timeouts: settings.uploadTimeouts)
        do {
            return try await response(to: request)
        } catch {
            if case .requestBodyUnreadable = error { throw error }
            return Self.outcome(of: error)
        }
    }

    /// A `GET` of status or results; `bearer` is the API key (or the job token when there is none).
    func get(_ url: URL, bearer: String?) async -> TransferOutcome {
        await send(
            HTTPRequest(
                method: .get, url: url, headers: headers(bearer: bearer, accept: "application/json"),
                timeouts: settings.requestTimeouts))
    }

    /// A `DELETE` (cleanup, cancel).
    func delete(_ url: URL, bearer: String?) async -> TransferOutcome {
        await send(
            HTTPRequest(
                method: .delete, url: url, headers: headers(bearer: bearer, accept: "application/json"),
                timeouts: settings.requestTimeouts))
    }

    /// The progress stream, resumed after `lastEventID` when given.
    func openStream(_ url: URL, token: String?, lastEventID: String?) -> AsyncThrowingStream<HTTPStreamPart, any Error>
    {
        var headers = headers(bearer: token, accept: "text/event-stream")
        headers.append(HTTPHeader(name: "Cache-Control", value: "no-cache"))
        if let lastEventID, !lastEventID.isEmpty {
            headers.append(HTTPHeader(name: "Last-Event-ID", value: lastEventID))
        }
        return transport.stream(
            HTTPRequest(method: .get, url: url, headers: headers, timeouts: settings.streamTimeouts))
    }

    private func headers(bearer: String?, accept: String) -> [HTTPHeader] {
        var headers = commonHeaders
        headers.append(HTTPHeader(name: "Accept", value: accept))
        if let bearer, !bearer.isEmpty { headers.append(HTTPHeader(name: "Authorization", value: "Bearer \(bearer)")) }
        return headers
    }

    private func send(_ request: HTTPRequest) async -> TransferOutcome {
        do {
            return try await response(to: request)
        } catch {
            return Self.outcome(of: error)
        }
    }

    private func response(to request: HTTPRequest) async throws(HTTPError) -> TransferOutcome {
        TransferOutcome(try await transport.send(request))
    }

    /// How a transport error counts for retries. Cancellation is not an outcome: callers check
    /// `Task.isCancelled` first; it maps to a lost connection only so nothing is ever dropped.
    static func outcome(of error: HTTPError) -> TransferOutcome {
        switch error {
        case .couldNotConnect, .tls, .invalidURL, .insecureURL: .connectFailed(detail: error.description)
        case .timedOut: .timedOut(detail: error.description)
        case .connectionLost, .responseTooLarge, .other, .cancelled, .engineStopped, .requestBodyUnreadable:
            .connectionLost(detail: error.description)
        }
    }
}

extension HTTPResponseHead {
    /// The headers as Talaria's rules read them (`Retry-After`, `X-RateLimit-Reset`).
    var fields: HTTPFields { HTTPFields(headers.map { (name: $0.name, value: $0.value) }) }
}

extension TransferOutcome {
    /// A complete response, as the retry rules classify it.
    init(_ response: HTTPResponse) {
        self = .response(status: response.status, headers: response.head.fields, body: response.body)
    }
}
