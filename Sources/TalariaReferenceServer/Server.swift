import Foundation
public import Hummingbird
public import Logging
public import NIOCore

/// Request context that keeps the connection, so the `drop` fault can close it before any response.
public struct ReferenceRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    public let channel: any Channel

    public init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
        self.channel = source.channel
    }
}

/// Thrown inside a response body writer to cut the connection mid-transfer (the client sees a broken transfer).
struct ConnectionDropped: Error {}

extension HTTPFields.Element.Name {
    static let deviceID = Self("X-Device-ID")!
    static let idempotencyKey = Self("Idempotency-Key")!
    static let lastEventID = Self("Last-Event-ID")!
    static let rateLimitReset = Self("X-RateLimit-Reset")!
    static let forwardedProto = Self("X-Forwarded-Proto")!
}

/// The reference recognition backend: routes, faults, job timelines.
public enum ReferenceServer {
    /// Builds the application. `onRunning` gets the bound port once the server listens.
    public static func makeApplication(
        configuration: ReferenceConfiguration,
        recognizer: any PhotoRecognizing = HashRecognizer(),
        state: ReferenceState? = nil,
        logger: Logger = Logger(label: "talaria-reference"),
        onRunning: @escaping @Sendable (Int) async -> Void = { _ in }
    ) -> some ApplicationProtocol {
        let state = state ?? ReferenceState(configuration: configuration, recognizer: recognizer)
        let router = makeRouter(configuration: configuration, state: state)
        return Application(
            router: router,
            configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: configuration.serverName),
            onServerRunning: { channel in await onRunning(channel.localAddress?.port ?? 0) },
            logger: logger
        )
    }

    public static func makeRouter(configuration: ReferenceConfiguration, state: ReferenceState) -> Router<ReferenceRequestContext> {
        let router = Router(context: ReferenceRequestContext.self)
        router.middlewares.add(RequestLogMiddleware())
        let handlers = Handlers(configuration: configuration, state: state)
        router.post("/v3/jobs/scans") { request, context in try await handlers.upload(request, context) }
        router.get("/v3/jobs/scans/:id") { request, context in try await handlers.status(request, context) }
        router.get("/v3/jobs/scans/:id/stream") { request, context in try await handlers.stream(request, context) }
        router.get("/v3/jobs/scans/:id/results") { request, context in try await handlers.results(request, context) }
        router.delete("/v3/jobs/scans/:id/cleanup") { request, context in try await handlers.cleanup(request, context) }
        router.delete("/v3/jobs/scans/:id") { request, context in try await handlers.cancel(request, context) }
        router.get("/_stats") { _, _ in json(200, await state.statsJSON()) }
        if configuration.faultEndpoints {
            router.post("/_faults") { request, context in try await handlers.queueFaults(request, context) }
            router.post("/_reset") { _, _ in
                await state.reset()
                return Response(status: .noContent)
            }
        }
        router.get("/api/books") { request, context in try await handlers.openLibraryBooks(request, context) }
        router.get("/search.json") { request, context in try await handlers.openLibrarySearch(request, context) }
        router.get("/books/v1/volumes") { request, context in try await handlers.googleBooksVolumes(request, context) }
        let health = JSONValue.object(
            configuration.healthDetails.mapValues { .string($0) }.merging(["status": "ok", "service": .string(configuration.serverName)]) {
                _, fixed in fixed
            })
        router.get("/health") { _, _ in json(200, health) }
        return router
    }

    static func json(_ status: Int, _ value: JSONValue, contentType: String = "application/json", headers: HTTPFields = [:]) -> Response {
        var fields = headers
        fields[.contentType] = contentType
        return Response(status: .init(code: status), headers: fields, body: .init(byteBuffer: ByteBuffer(string: value.serialized())))
    }
}

/// Logs one line per request at info: method, path, status, duration. Never headers (no Authorization in logs).
struct RequestLogMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let start = ContinuousClock.now
        do {
            let response = try await next(request, context)
            context.logger.info(
                "\(request.method) \(request.uri.path) -> \(response.status.code)",
                metadata: ["ms": "\(milliseconds(ContinuousClock.now - start))"])
            return response
        } catch {
            context.logger.info("\(request.method) \(request.uri.path) -> error \(type(of: error))")
            throw error
        }
    }
}

func milliseconds(_ d: Duration) -> Int64 {
    d.components.seconds * 1000 + d.components.attoseconds / 1_000_000_000_000_000
}

struct Handlers: Sendable {
    let configuration: ReferenceConfiguration
    let state: ReferenceState

    typealias Context = ReferenceRequestContext

    private func problem(
        _ status: Int, _ code: String, _ title: String, _ detail: String, _ request: Request, retryable: Bool = false,
        retryAfterMs: Int? = nil, plain: Bool = false, headers: HTTPFields = [:]
    ) -> Response {
        ReferenceServer.json(
            status,
            Render.problem(
                status: status, code: code, title: title, detail: detail, instance: request.uri.path, retryable: retryable,
                retryAfterMs: retryAfterMs),
            contentType: plain ? "application/json" : "application/problem+json", headers: headers)
    }

    private func sleepSlow(_ faults: [FaultAction]) async throws {
        for case .slow(let ms) in faults { try await Task.sleep(for: configuration.scaled(ms)) }
    }

    func bearer(_ request: Request) -> String? {
        guard let value = request.headers[.authorization] else { return nil }
        let parts = value.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
        return parts[1].trimmingCharacters(in: .whitespaces)
    }

    /// Status, results, cleanup and cancel accept the API key (when one is configured) or the job's token.
    private func authorizedForJob(_ request: Request, _ job: JobSnapshot) -> Bool {
        guard let apiKey = configuration.apiKey else { return true }
        let token = bearer(request)
        return token == apiKey || token == job.token
    }

    private func baseURL(_ request: Request) -> String {
        if let base = configuration.publicBaseURL { return base.hasSuffix("/") ? String(base.dropLast()) : base }
        let scheme = request.headers[.forwardedProto] ?? "http"
        let host = request.head.authority ?? "\(configuration.host):\(configuration.port)"
        return "\(scheme)://\(host)"
    }

    // MARK: Upload

    func upload(_ request: Request, _ context: Context) async throws -> Response {
        let key = request.headers[.idempotencyKey]
        await state.countUpload(idempotencyKey: key)
        let faults = await state.takeFaults(.upload)
        try await sleepSlow(faults)
        if faults.contains(.drop) {
            // Close the connection before any response: the client sees a broken transfer.
            try? await context.channel.close()
            throw ConnectionDropped()
        }
        if let apiKey = configuration.apiKey, bearer(request) != apiKey {
            return problem(401, "UNAUTHORIZED", "Unauthorized", "A valid API key is required (Authorization: Bearer <key>)", request)
        }
        guard let deviceID = request.headers[.deviceID], !deviceID.isEmpty else {
            return problem(400, "INVALID_REQUEST", "Invalid request", "The X-Device-ID header is required", request)
        }
        guard let key, !key.isEmpty else {
            return problem(400, "INVALID_REQUEST", "Invalid request", "The Idempotency-Key header is required", request)
        }
        if let response = faultResponse(faults, request) { return response }

        let body: ByteBuffer
        do {
            body = try await request.body.collect(upTo: configuration.maxImageBytes + 1_048_576)
        } catch is NIOTooManyBytesError {
            return problem(413, "FILE_TOO_LARGE", "File too large", "An image may have at most \(configuration.maxImageBytes) bytes", request)
        }
        let parts: [UploadForm.Part]
        do {
            let boundary = try UploadForm.boundary(fromContentType: request.headers[.contentType] ?? "")
            parts = try UploadForm.parts(of: body, boundary: boundary)
        } catch {
            return problem(400, "INVALID_REQUEST", "Invalid request", "\(error)", request)
        }
        guard let photo = parts.first(where: { $0.name == "photos[]" }) else {
            let names = parts.compactMap(\.name).map { "'\($0)'" }.joined(separator: ", ")
            return problem(
                400, "INVALID_REQUEST", "Invalid request",
                "The image must be sent in a part named 'photos[]' (got: \(names.isEmpty ? "no named parts" : names))", request)
        }
        let mediaType = photo.contentType?.split(separator: ";").first?.trimmingCharacters(in: .whitespaces).lowercased()
        guard mediaType == "image/jpeg" else {
            return problem(
                400, "INVALID_FILE", "Invalid file", "The 'photos[]' part must have Content-Type image/jpeg (got: \(photo.contentType ?? "none"))",
                request)
        }
        let image = photo.body.readableBytesView
        guard image.count <= configuration.maxImageBytes else {
            return problem(
                413, "FILE_TOO_LARGE", "File too large",
                "The image has \(image.count) bytes; at most \(configuration.maxImageBytes) are accepted", request)
        }
        switch configuration.imageCheck {
        case .magicBytes:
            guard image.starts(with: [0xFF, 0xD8]) else {
                return problem(400, "INVALID_FILE", "Invalid file", "The 'photos[]' part is not a JPEG image", request)
            }
        case .structure(let maxPixels):
            do {
                _ = try JPEGHeader.check(image, maxPixels: maxPixels)
            } catch .tooManyPixels(let width, let height, let limit) {
                let problem = JPEGHeader.Problem.tooManyPixels(width: width, height: height, limit: limit)
                return self.problem(413, "IMAGE_TOO_LARGE", "Image too large", "\(problem)", request)
            } catch {
                return problem(400, "INVALID_FILE", "Invalid file", "\(error)", request)
            }
        }
        let (job, created) = await state.job(forKey: key, deviceID: deviceID, image: Array(image))
        context.logger.info(
            "\(created ? "created" : "existing") job \(job.id) (\(job.books.count) books)", metadata: ["idempotency-key": "\(key)"])
        var shape = configuration.envelope
        var noStream = false
        for fault in faults {
            if case .envelope(let s) = fault { shape = s }
            if fault == .noStream { noStream = true }
        }
        let requestID = "req_" + UUID().uuidString.lowercased().prefix(8)
        return ReferenceServer.json(
            202, Render.envelope(job, shape: shape, noStream: noStream, base: baseURL(request), requestID: String(requestID)))
    }

    /// The response of an upload fault that answers instead of the real handler, if any.
    private func faultResponse(_ faults: [FaultAction], _ request: Request) -> Response? {
        let now = Date()
        for fault in faults {
            switch fault {
            case .rateLimitMs(let ms):
                let ms = ms ?? 1500
                return problem(429, "RATE_LIMIT_EXCEEDED", "Too many requests", "Rate limit exceeded; retry after \(ms) ms", request, retryable: true, retryAfterMs: ms)
            case .rateLimitSeconds(let seconds):
                let seconds = seconds ?? 2
                return problem(
                    429, "RATE_LIMIT_EXCEEDED", "Too many requests", "Rate limit exceeded", request, retryable: true,
                    headers: [.retryAfter: String(seconds)])
            case .rateLimitDate(let seconds):
                let date = now.addingTimeInterval(Double(seconds ?? 3))
                return problem(
                    429, "RATE_LIMIT_EXCEEDED", "Too many requests", "Rate limit exceeded", request, retryable: true,
                    headers: [.retryAfter: httpDate(date)])
            case .rateLimitReset(let ms):
                let reset = Int(now.timeIntervalSince1970 * 1000) + (ms ?? 2500)
                return problem(
                    429, "RATE_LIMIT_EXCEEDED", "Too many requests", "Rate limit exceeded", request, retryable: true,
                    headers: [.rateLimitReset: String(reset)])
            case .rateLimitLegacy(let seconds):
                let seconds = seconds ?? 2
                return ReferenceServer.json(
                    429,
                    ["error": "Too many requests, please slow down", "code": "RATE_LIMIT_EXCEEDED", "details": ["retryAfter": .int(seconds)]])
            case .http500:
                return problem(500, "INTERNAL_ERROR", "Internal server error", "An unexpected error occurred", request, retryable: true, plain: true)
            case .http503:
                return problem(
                    503, "CIRCUIT_OPEN", "Service unavailable", "The recognition provider is unavailable", request, retryable: true,
                    retryAfterMs: 1000)
            case .http401:
                return problem(401, "UNAUTHORIZED", "Unauthorized", "The API key was rejected", request)
            case .http413:
                return problem(413, "FILE_TOO_LARGE", "File too large", "An image may have at most \(configuration.maxImageBytes) bytes", request)
            case .invalidFile:
                return problem(400, "INVALID_FILE", "Invalid file", "The image could not be decoded", request)
            case .html:
                return Response(
                    status: .badGateway, headers: [.contentType: "text/html; charset=utf-8"],
                    body: .init(
                        byteBuffer: ByteBuffer(
                            string: "<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway</h1></center><hr><center>nginx</center></body></html>\n")))
            default:
                continue
            }
        }
        return nil
    }

    // MARK: Status, results, cleanup, cancel

    private func jobFor(_ context: Context) async -> JobSnapshot? {
        guard let id = context.parameters.get("id"), let job = await state.snapshot(id), !job.cleaned else { return nil }
        return job
    }

    private func notFound(_ request: Request, _ what: String = "No such job") -> Response {
        problem(404, "NOT_FOUND", "Not found", what, request)
    }

    func status(_ request: Request, _ context: Context) async throws -> Response {
        await state.countStatusPoll()
        let faults = await state.takeFaults(.status)
        try await sleepSlow(faults)
        if faults.contains(.http404) { return notFound(request, "Job not found (yet)") }
        if faults.contains(.http500) {
            return problem(500, "INTERNAL_ERROR", "Internal server error", "Status lookup failed", request, retryable: true)
        }
        guard let job = await jobFor(context) else { return notFound(request) }
        guard authorizedForJob(request, job) else { return problem(401, "UNAUTHORIZED", "Unauthorized", "Bad credentials", request) }
        var data: [String: JSONValue] = [
            "jobId": .string(job.id), "status": .string(job.status.rawValue),
            "progress": Render.progressValue(job.progress, percent: configuration.progressPercent),
            "processedCount": .int(job.processed), "totalCount": .int(job.books.count),
            "createdAt": .string(isoTimestamp(job.createdAt)), "updatedAt": .string(isoTimestamp(job.updatedAt)),
        ]
        if job.status == .completed { data["resultsUrl"] = .string(Render.resultsPath(job.id)) }
        if let last = job.events.last?.event, case .failed(_, let code, let message, let retryable) = last {
            data["error"] = ["code": .string(code), "message": .string(message), "retryable": .bool(retryable)]
        }
        return ReferenceServer.json(200, ["success": true, "data": .object(data)])
    }

    func results(_ request: Request, _ context: Context) async throws -> Response {
        await state.countResultsFetch()
        let faults = await state.takeFaults(.results)
        try await sleepSlow(faults)
        if faults.contains(.http404) { return notFound(request, "Results not found") }
        if faults.contains(.http500) {
            return problem(500, "INTERNAL_ERROR", "Internal server error", "Results lookup failed", request, retryable: true)
        }
        guard let job = await jobFor(context) else { return notFound(request) }
        guard authorizedForJob(request, job) else { return problem(401, "UNAUTHORIZED", "Unauthorized", "Bad credentials", request) }
        guard job.status.isFinished else { return notFound(request, "The job has not finished (status \(job.status.rawValue))") }
        var data: [String: JSONValue] = [
            "jobId": .string(job.id), "status": .string(job.status.rawValue),
            "results": .array(job.status == .completed ? Render.books(job) : []),
        ]
        if job.status == .completed {
            data["summary"] = Render.summary(job)
            data["unmatched"] = Render.unmatched(job)
        }
        return ReferenceServer.json(200, ["success": true, "data": .object(data)])
    }

    func cleanup(_ request: Request, _ context: Context) async throws -> Response {
        let faults = await state.takeFaults(.cleanup)
        try await sleepSlow(faults)
        if faults.contains(.http404) { return notFound(request, "Job not found") }
        if faults.contains(.http500) {
            return problem(500, "INTERNAL_ERROR", "Internal server error", "Cleanup failed", request, retryable: true, plain: true)
        }
        guard let id = context.parameters.get("id") else { return notFound(request) }
        if let job = await state.snapshot(id), !job.cleaned, !authorizedForJob(request, job) {
            return problem(401, "UNAUTHORIZED", "Unauthorized", "Bad credentials", request)
        }
        switch await state.cleanup(id) {
        case .cleaned: return Response(status: .noContent)
        case .notFound: return notFound(request, "Job not found or already cleaned up")
        }
    }

    func cancel(_ request: Request, _ context: Context) async throws -> Response {
        guard let job = await jobFor(context) else { return notFound(request) }
        guard authorizedForJob(request, job) else { return problem(401, "UNAUTHORIZED", "Unauthorized", "Bad credentials", request) }
        switch await state.cancel(job.id) {
        case .notFound: return notFound(request)
        case .alreadyFinished(let status):
            return problem(409, "JOB_FINISHED", "Conflict", "The job has already finished (status \(status.rawValue))", request)
        case .canceled:
            return ReferenceServer.json(200, ["success": true, "data": ["jobId": .string(job.id), "status": "canceled"]])
        }
    }

    // MARK: Faults

    func queueFaults(_ request: Request, _ context: Context) async throws -> Response {
        struct Body: Decodable { let faults: [String] }
        let buffer = try await request.body.collect(upTo: 1_048_576)
        let parsed: [Fault]
        do {
            let body = try JSONDecoder().decode(Body.self, from: Data(buffer.readableBytesView))
            parsed = try body.faults.map { spelling throws(Fault.ParseError) in try Fault.parse(spelling) }
        } catch {
            return problem(400, "INVALID_REQUEST", "Invalid fault list", "\(error)", request)
        }
        let pending = await state.enqueue(parsed)
        return ReferenceServer.json(
            200, ["queued": .array(parsed.map { .string($0.spelling) }), "pending": .int(pending)])
    }
}
