import Foundation
import HTTPEngine
import Synchronization

/// An in-memory backend for unit tests of the uplink's logic: it implements the same
/// ``HTTPTransport`` the real `CurlEngine` does and answers each request from a script.
/// (The real engine against the real reference backend is covered by the integration tests.)
public final class ScriptedBackend: HTTPTransport, Sendable {
    public indirect enum Reply: Sendable {
        case response(status: Int, headers: [HTTPHeader] = [], body: String)
        case failure(HTTPError)
        /// A 200 event stream of these chunks, then the end (`dropped`: ends with a lost connection).
        case stream(chunks: [String], dropped: Bool = false)
        /// `reply` once as many requests as the barrier counts wait for theirs: requests in flight at once.
        case together(RequestBarrier, reply: Reply)
    }

    private struct Received {
        let request: HTTPRequest
        let at: Date
    }

    private let handler: @Sendable (HTTPRequest, Int) -> Reply
    private let now: @Sendable () -> Date
    private let log = Mutex<[Received]>([])

    /// `handler` gets each request and how many requests of the same method+path came before it;
    /// `now` stamps each request (the test's clock).
    public init(
        now: @escaping @Sendable () -> Date = Date.init, _ handler: @escaping @Sendable (HTTPRequest, Int) -> Reply
    ) {
        self.now = now
        self.handler = handler
    }

    public var requests: [HTTPRequest] { log.withLock { $0.map(\.request) } }

    public func requests(_ method: HTTPRequest.Method, pathSuffix: String) -> [HTTPRequest] {
        requests.filter { $0.method == method && $0.url.path.hasSuffix(pathSuffix) }
    }

    /// When each request of `method` whose path ends with `pathSuffix` arrived, in order.
    public func times(_ method: HTTPRequest.Method, pathSuffix: String) -> [Date] {
        log.withLock { log in
            log.filter { $0.request.method == method && $0.request.url.path.hasSuffix(pathSuffix) }.map(\.at)
        }
    }

    private func record(_ request: HTTPRequest) -> Int {
        let at = now()
        return log.withLock { log in
            let earlier = log.filter { $0.request.method == request.method && $0.request.url.path == request.url.path }
                .count
            log.append(Received(request: request, at: at))
            return earlier
        }
    }

    public func send(_ request: HTTPRequest) async throws(HTTPError) -> HTTPResponse {
        var reply = handler(request, record(request))
        while case .together(let barrier, let held) = reply {
            await barrier.arrive()
            reply = held
        }
        switch reply {
        case .response(let status, let headers, let body):
            return HTTPResponse(
                head: HTTPResponseHead(status: status, headers: headers, version: .http1_1), body: Array(body.utf8))
        case .failure(let error):
            throw error
        case .stream:
            throw HTTPError.other(code: 0, detail: "the script answered a plain request with a stream")
        case .together:
            preconditionFailure("unwrapped above")
        }
    }

    public func stream(_ request: HTTPRequest) -> AsyncThrowingStream<HTTPStreamPart, any Error> {
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
                continuation.yield(
                    .head(
                        HTTPResponseHead(
                            status: 200, headers: [HTTPHeader(name: "Content-Type", value: "text/event-stream")],
                            version: .http1_1)))
                for chunk in chunks { continuation.yield(.body(Array(chunk.utf8))) }
                if dropped {
                    continuation.finish(throwing: HTTPError.connectionLost(detail: "scripted drop"))
                } else {
                    continuation.finish()
                }
            case .together:
                continuation.finish(throwing: HTTPError.other(code: 0, detail: "the script holds plain requests only"))
            }
        }
    }

    public func header(_ request: HTTPRequest, _ name: String) -> String? {
        request.headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }
}

/// Holds each arriving request until `count` have arrived, then lets them all go (without blocking
/// a thread: the uplink's tasks share the cooperative pool with the test).
public final class RequestBarrier: Sendable {
    private struct State {
        var waiting: [CheckedContinuation<Void, Never>] = []
        var open = false
    }

    private let count: Int
    private let state = Mutex(State())

    public init(count: Int) {
        self.count = count
    }

    func arrive() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let released = state.withLock { state -> [CheckedContinuation<Void, Never>] in
                state.waiting.append(continuation)
                guard state.open || state.waiting.count >= count else { return [] }
                state.open = true
                defer { state.waiting = [] }
                return state.waiting
            }
            for waiter in released { waiter.resume() }
        }
    }
}
