public import Hummingbird
public import Logging
import NIOCore

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
            server: .http1(
                configuration: .init(
                    additionalChannelHandlers: configuration.unacknowledgedDataTimeout.map {
                        [UnacknowledgedDataTimeout($0)]
                    } ?? [],
                    idleTimeout: configuration.idleTimeout.map { TimeAmount($0) })),
            configuration: .init(
                address: .hostname(configuration.host, port: configuration.port), serverName: configuration.serverName),
            onServerRunning: { channel in await onRunning(channel.localAddress?.port ?? 0) },
            logger: logger
        )
    }

    public static func makeRouter(configuration: ReferenceConfiguration, state: ReferenceState) -> Router<
        ReferenceRequestContext
    > {
        let router = Router(context: ReferenceRequestContext.self)
        router.middlewares.add(RequestLogMiddleware())
        let handlers = Handlers(configuration: configuration, state: state)
        router.post("/v3/jobs/scans") { request, context in try await handlers.upload(request, context) }
        router.get("/v3/jobs/scans/:id") { request, context in try await handlers.status(request, context) }
        router.get("/v3/jobs/scans/:id/stream") { request, context in try await handlers.stream(request, context) }
        router.get("/v3/jobs/scans/:id/results") { request, context in try await handlers.results(request, context) }
        router.delete("/v3/jobs/scans/:id/cleanup") { request, context in try await handlers.cleanup(request, context) }
        router.delete("/v3/jobs/scans/:id") { request, context in try await handlers.cancel(request, context) }
        router.get("/v3/books/search") { request, context in try await handlers.searchBooks(request, context) }
        router.get("/_stats") { request, context in
            if configuration.statsNeedAPIKey, let apiKey = configuration.apiKey, !handlers.presents(request, apiKey) {
                return handlers.problem(
                    401, "UNAUTHORIZED", "Unauthorized", "The stats need the API key (Authorization: Bearer <key>)",
                    request)
            }
            if configuration.apiKey == nil, configuration.jobControlFromLoopbackOnlyWithoutKey,
                !Handlers.isLoopback(context.channel.remoteAddress)
            {
                return handlers.problem(
                    403, "FORBIDDEN", "Forbidden",
                    "With no API key the stats answer only this machine: ask on 127.0.0.1, or set a key "
                        + "(--api-key-file) and send it", request)
            }
            return json(200, await state.statsJSON())
        }
        if configuration.faultEndpoints {
            router.post("/_faults") { request, context in try await handlers.queueFaults(request, context) }
            router.post("/_reset") { _, _ in
                await state.reset()
                return Response(status: .noContent)
            }
        }
        if configuration.catalogEndpoints {
            router.get("/api/books") { request, context in try await handlers.openLibraryBooks(request, context) }
            router.get("/search.json") { request, context in try await handlers.openLibrarySearch(request, context) }
            router.get("/books/v1/volumes") { request, context in
                try await handlers.googleBooksVolumes(request, context)
            }
        }
        let health = JSONValue.object(
            configuration.healthDetails.mapValues { .string($0) }.merging([
                "status": "ok", "service": .string(configuration.serverName),
            ]) {
                _, fixed in fixed
            })
        router.get("/health") { _, _ in json(200, health) }
        return router
    }

    static func json(
        _ status: Int, _ value: JSONValue, contentType: String = "application/json", headers: HTTPFields = [:]
    ) -> Response {
        var fields = headers
        fields[.contentType] = contentType
        return Response(
            status: .init(code: status), headers: fields,
            body: .init(byteBuffer: ByteBuffer(string: value.serialized())))
    }
}
