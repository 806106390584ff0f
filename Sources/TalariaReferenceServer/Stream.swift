import Foundation
import Hummingbird
import NIOCore
import ServiceLifecycle
import Synchronization

extension Handlers {
    /// `GET /v3/jobs/scans/{id}/stream`: Server-Sent Events for one job (docs/protocol.md §2).
    func stream(_ request: Request, _ context: Context) async throws -> Response {
        guard let id = context.parameters.get("id"), let job = await state.snapshot(id), !job.cleaned else {
            return ReferenceServer.json(
                404,
                Render.problem(
                    status: 404, code: "NOT_FOUND", title: "Not found", detail: "No such job",
                    instance: request.uri.path, retryable: false),
                contentType: "application/problem+json")
        }
        guard presents(request, job.token) else {
            return ReferenceServer.json(
                401,
                Render.problem(
                    status: 401, code: "UNAUTHORIZED", title: "Unauthorized",
                    detail: "The stream needs Authorization: Bearer <job token>",
                    instance: request.uri.path, retryable: false),
                contentType: "application/problem+json")
        }
        func alreadyOpen(_ detail: String, seconds: Int) -> Response {
            problem(
                429, "STREAM_ALREADY_OPEN", "Stream already open",
                detail + ", or open the stream again in \(seconds) s",
                request, retryable: true, retryAfterMs: seconds * 1000, headers: [.retryAfter: "\(seconds)"])
        }
        let faults = await state.takeFaults(.stream)
        for case .rateLimited(let given) in faults {
            // What a recognizer at its `--max-streams-per-job` answers, on demand.
            return alreadyOpen("the fault stream:429 refused this stream", seconds: given ?? 2)
        }
        guard await state.openStream(id) else {
            // A client gone is noticed when its connection resets, or at the next ping when it closed its side.
            return alreadyOpen(
                "\(configuration.maxStreamsPerJob ?? 0) streams of this job are already open: close one, follow the "
                    + "job's status instead",
                seconds: max(1, Int(configuration.scaled(configuration.pingIntervalMs).components.seconds)))
        }
        let place = StreamPlace(state: state, jobID: id)
        let lastEventID = request.headers[.lastEventID].flatMap { Int($0.trimmingCharacters(in: .whitespaces)) }
        await state.countStream(resume: request.headers[.lastEventID] != nil)
        for case .slow(let ms) in faults { try await Task.sleep(for: configuration.scaled(ms)) }

        var sticky: Set<StickyFault> = []
        var plan = StreamPlan()
        for fault in faults {
            switch fault {
            case .resultsKey: sticky.insert(.resultsKey)
            case .completeAlias: sticky.insert(.completeAlias)
            case .stripped: sticky.insert(.stripped)
            case .progress100: sticky.insert(.progress100)
            case .badISBN: sticky.insert(.badISBN)
            case .wrongTypes: sticky.insert(.wrongTypes)
            case .failed: await state.scheduleFailure(id, retryable: false)
            case .failedRetryable: await state.scheduleFailure(id, retryable: true)
            case .dropAfter(let n): plan.dropAfter = n
            case .malformed: plan.malformed = true
            case .duplicateTerminal: plan.duplicateTerminal = true
            case .timeoutEvent: plan.timeoutEvent = true
            case .neverEnd: plan.neverEnd = true
            case .hugeLine: plan.hugeLine = true
            default: break
            }
        }
        if !sticky.isEmpty { await state.addSticky(id, sticky) }

        let state = self.state
        let configuration = self.configuration
        let logger = context.logger
        let finalPlan = plan
        let channel = context.channel
        let body = ResponseBody { writer in
            let shutdown = ShutdownFlag()
            do {
                try await withGracefulShutdownHandler {
                    try await writeStream(
                        to: &writer, jobID: id, lastEventID: lastEventID, plan: finalPlan, state: state,
                        configuration: configuration,
                        shutdown: shutdown, clientGone: { !channel.isActive })
                } onGracefulShutdown: {
                    shutdown.set()
                }
            } catch is ConnectionDropped {
                await place.release()
                logger.info("stream of \(id) dropped on purpose")
                throw ConnectionDropped()
            } catch {
                await place.release()
                throw error
            }
            await place.release()
            try await writer.finish(nil)
        }
        return Response(
            status: .ok,
            headers: [.contentType: "text/event-stream", .cacheControl: "no-cache", .init("X-Accel-Buffering")!: "no"],
            body: body)
    }
}

/// One of a job's stream places (`maxStreamsPerJob`), given back once when the stream ends, or when its response
/// is dropped unwritten.
final class StreamPlace: Sendable {
    private let state: ReferenceState
    private let jobID: String
    private let held = Mutex(true)

    init(state: ReferenceState, jobID: String) {
        self.state = state
        self.jobID = jobID
    }

    private func take() -> Bool {
        held.withLock { held in
            defer { held = false }
            return held
        }
    }

    func release() async {
        if take() { await state.closeStream(jobID) }
    }

    deinit {
        if take() { Task { [state, jobID] in await state.closeStream(jobID) } }
    }
}

/// Set when the server shuts down gracefully: open streams end so the server can stop.
final class ShutdownFlag: Sendable {
    private let flag = Mutex(false)
    func set() { flag.withLock { $0 = true } }
    var isSet: Bool { flag.withLock { $0 } }
}

/// What one stream request does besides writing the job's events.
struct StreamPlan: Sendable {
    var dropAfter: Int?
    var malformed = false
    var duplicateTerminal = false
    var timeoutEvent = false
    var neverEnd = false
    var hugeLine = false
}

private func write(_ text: String, to writer: inout any ResponseBodyWriter) async throws {
    try await writer.write(ByteBuffer(string: text))
}

private func writeStream(
    to writer: inout any ResponseBodyWriter, jobID: String, lastEventID: Int?, plan: StreamPlan, state: ReferenceState,
    configuration: ReferenceConfiguration, shutdown: ShutdownFlag, clientGone: @escaping @Sendable () -> Bool
) async throws {
    try await write(": connection established\nretry: \(configuration.retryMs)\n\n", to: &writer)
    let pingInterval = configuration.scaled(configuration.pingIntervalMs)
    let clock = ContinuousClock()
    var lastWrite = clock.now

    func ping(_ writer: inout any ResponseBodyWriter) async throws {
        let data: JSONValue = ["timestamp": .string(isoTimestamp())]
        try await write(Render.sseText(name: "ping", data: data.serialized(), id: nil), to: &writer)
        lastWrite = clock.now
    }

    if plan.neverEnd {
        // Pings only, until the client goes away (a write fails) or the server shuts down.
        while !shutdown.isSet, !clientGone() {
            try await Task.sleep(for: .milliseconds(10))
            if clock.now - lastWrite >= pingInterval { try await ping(&writer) }
        }
        return
    }

    var lastID = lastEventID ?? 0
    var sent = 0
    var malformedDone = !plan.malformed
    var firstRound = true
    // A client that went away is noticed between polls (its connection closed) rather than at the next write.
    while !shutdown.isSet, !clientGone() {
        guard let job = await state.snapshot(jobID) else { return }
        var pending = job.events.filter { $0.id > lastID }
        // A finished job replays its terminal event to a client that already has everything.
        if firstRound, pending.isEmpty, job.status.isFinished, let terminal = job.events.last {
            pending = [terminal]
        }
        firstRound = false
        let percent = configuration.progressPercent || job.sticky.contains(.progress100)
        for event in pending {
            if let n = plan.dropAfter, sent >= n {
                // Let what was written reach the socket, then cut the connection (no terminating chunk).
                try await Task.sleep(for: .milliseconds(50))
                throw ConnectionDropped()
            }
            if plan.timeoutEvent, sent == 2 {
                let data: JSONValue = [
                    "jobId": .string(job.id),
                    "error": [
                        "code": "STREAM_TIMEOUT", "message": "The stream timed out; the job continues",
                        "retryable": true,
                    ],
                ]
                try await write(Render.sseText(name: "timeout", data: data.serialized(), id: nil), to: &writer)
                return
            }
            if plan.hugeLine, sent == 2 {
                try await write("event: result\ndata: {\"blob\":\"", to: &writer)
                let chunk = ByteBuffer(repeating: UInt8(ascii: "A"), count: 65536)
                for _ in 0..<(10 * 1_048_576 / 65536) { try await writer.write(chunk) }
                // The response ends with the line still open (cutting the connection here could discard
                // buffered bytes, and the client must see the whole 10 MB line).
                return
            }
            if !malformedDone, case .result = event.event {
                malformedDone = true
                try await write(
                    "event: result\ndata: {\"jobId\":\"\(job.id)\",\"book\":{\"isbn\":\"97801\n\n", to: &writer)
                let badBook: JSONValue = [
                    "isbn": 9_780_000_000_000, "title": ["not", "a", "string"], "authors": "nobody",
                    "confidence": "high",
                    "format": 7, "pageCount": "many", "boundingBox": "none",
                ]
                let goodBook = Render.books(job).first ?? .null
                let data: JSONValue = ["jobId": .string(job.id), "books": [badBook, goodBook]]
                try await write(Render.sseText(name: "result", data: data.serialized(), id: nil), to: &writer)
            }
            let (name, data) = Render.sse(event.event, job: job, percent: percent)
            let text = Render.sseText(name: name, data: data.serialized(), id: event.id)
            try await write(text, to: &writer)
            lastWrite = clock.now
            sent += 1
            lastID = max(lastID, event.id)
            if event.event.isTerminal {
                if plan.duplicateTerminal { try await write(text, to: &writer) }
                return
            }
        }
        if pending.isEmpty {
            if job.status.isFinished { return }
            try await Task.sleep(for: .milliseconds(10))
            if clock.now - lastWrite >= pingInterval { try await ping(&writer) }
        }
    }
}
