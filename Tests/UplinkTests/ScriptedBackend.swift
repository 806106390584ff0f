import Foundation
import HTTPEngine
import Synchronization

/// An in-memory backend for unit tests of the uplink's logic: it implements the same
/// ``HTTPTransport`` the real ``CurlEngine`` does and answers each request from a script.
/// (The real engine against the real reference backend is covered by the integration tests.)
final class ScriptedBackend: HTTPTransport, Sendable {
    enum Reply: Sendable {
        case response(status: Int, headers: [HTTPHeader] = [], body: String)
        case failure(HTTPError)
        /// A 200 event stream of these chunks, then the end (`dropAfter`: ends with a lost connection).
        case stream(chunks: [String], dropped: Bool = false)
    }

    private let handler: @Sendable (HTTPRequest, Int) -> Reply
    private let log = Mutex<[HTTPRequest]>([])

    /// `handler` gets each request and how many requests of the same method+path came before it.
    init(_ handler: @escaping @Sendable (HTTPRequest, Int) -> Reply) {
        self.handler = handler
    }

    var requests: [HTTPRequest] { log.withLock { $0 } }

    func requests(_ method: HTTPRequest.Method, pathSuffix: String) -> [HTTPRequest] {
        requests.filter { $0.method == method && $0.url.path.hasSuffix(pathSuffix) }
    }

    private func record(_ request: HTTPRequest) -> Int {
        log.withLock { log in
            let earlier = log.filter { $0.method == request.method && $0.url.path == request.url.path }.count
            log.append(request)
            return earlier
        }
    }

    func send(_ request: HTTPRequest) async throws(HTTPError) -> HTTPResponse {
        let index = record(request)
        switch handler(request, index) {
        case .response(let status, let headers, let body):
            return HTTPResponse(head: HTTPResponseHead(status: status, headers: headers, version: .http1_1), body: Array(body.utf8))
        case .failure(let error):
            throw error
        case .stream:
            throw HTTPError.other(code: 0, detail: "the script answered a plain request with a stream")
        }
    }

    func stream(_ request: HTTPRequest) -> AsyncThrowingStream<HTTPStreamPart, any Error> {
        let index = record(request)
        let reply = handler(request, index)
        return AsyncThrowingStream { continuation in
            switch reply {
            case .response(let status, let headers, let body):
                continuation.yield(.head(HTTPResponseHead(status: status, headers: headers, version: .http1_1)))
                continuation.yield(.body(Array(body.utf8)))
                continuation.finish()
            case .failure(let error):
                continuation.finish(throwing: error)
            case .stream(let chunks, let dropped):
                continuation.yield(.head(HTTPResponseHead(
                    status: 200, headers: [HTTPHeader(name: "Content-Type", value: "text/event-stream")], version: .http1_1)))
                for chunk in chunks { continuation.yield(.body(Array(chunk.utf8))) }
                if dropped {
                    continuation.finish(throwing: HTTPError.connectionLost(detail: "scripted drop"))
                } else {
                    continuation.finish()
                }
            }
        }
    }

    func header(_ request: HTTPRequest, _ name: String) -> String? {
        request.headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }
}

/// JSON bodies in the shapes of docs/protocol.md.
enum Talk {
    static func accepted(job: String, stream: Bool = true) -> String {
        stream
            ? #"{"success":true,"data":{"jobId":"\#(job)","sseUrl":"/v3/jobs/scans/\#(job)/stream","authToken":"tok-\#(job)","statusUrl":"/v3/jobs/scans/\#(job)"}}"#
            : #"{"success":true,"data":{"jobId":"\#(job)","status":"queued"}}"#
    }

    static let book1 = #"{"isbn":"9780262033848","title":"Introduction to Algorithms","authors":["Thomas H. Cormen","Charles E. Leiserson"],"confidence":0.95,"format":"hardcover"}"#
    static let book2 = #"{"isbn":"0-201-63361-2","title":"Design Patterns","author":"Erich Gamma","confidence":0.7}"#

    static func completed(job: String, id: Int, books: [String] = [book1, book2]) -> String {
        "id: \(id)\nevent: completed\ndata: {\"jobId\":\"\(job)\",\"status\":\"completed\",\"books\":[\(books.joined(separator: ","))]}\n\n"
    }

    static func progress(job: String, id: Int, progress: Double) -> String {
        "id: \(id)\nevent: progress\ndata: {\"jobId\":\"\(job)\",\"status\":\"processing\",\"progress\":\(progress)}\n\n"
    }

    static let opening = ": connection established\nretry: 10\n\n"
}
