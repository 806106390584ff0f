import Hummingbird

/// Logs one line per request at info: method, path, status, duration. Never headers (no Authorization in logs).
struct RequestLogMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
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
