import Hummingbird

extension Handlers {
    // MARK: Status, results, cleanup, cancel

    private func jobFor(_ context: Context) async -> JobSnapshot? {
        guard let id = context.parameters.get("id"), let job = await state.snapshot(id), !job.cleaned else {
            return nil
        }
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
            return problem(
                500, "INTERNAL_ERROR", "Internal server error", "Status lookup failed", request, retryable: true)
        }
        guard let job = await jobFor(context) else { return notFound(request) }
        guard authorizedForJob(request, job) else {
            return problem(401, "UNAUTHORIZED", "Unauthorized", "Bad credentials", request)
        }
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
            return problem(
                500, "INTERNAL_ERROR", "Internal server error", "Results lookup failed", request, retryable: true)
        }
        guard let job = await jobFor(context) else { return notFound(request) }
        guard authorizedForJob(request, job) else {
            return problem(401, "UNAUTHORIZED", "Unauthorized", "Bad credentials", request)
        }
        guard job.status.isFinished else {
            return notFound(request, "The job has not finished (status \(job.status.rawValue))")
        }
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
            return problem(
                500, "INTERNAL_ERROR", "Internal server error", "Cleanup failed", request, retryable: true, plain: true)
        }
        guard let id = context.parameters.get("id") else { return notFound(request) }
        if let job = await state.snapshot(id), !job.cleaned, !authorizedForJobControl(request, job, context) {
            return problem(401, "UNAUTHORIZED", "Unauthorized", "Bad credentials", request)
        }
        switch await state.cleanup(id) {
        case .cleaned: return Response(status: .noContent)
        case .notFound: return notFound(request, "Job not found or already cleaned up")
        }
    }

    func cancel(_ request: Request, _ context: Context) async throws -> Response {
        guard let job = await jobFor(context) else { return notFound(request) }
        guard authorizedForJobControl(request, job, context) else {
            return problem(401, "UNAUTHORIZED", "Unauthorized", "Bad credentials", request)
        }
        switch await state.cancel(job.id) {
        case .notFound: return notFound(request)
        case .alreadyFinished(let status):
            return problem(
                409, "JOB_FINISHED", "Conflict", "The job has already finished (status \(status.rawValue))", request)
        case .canceled:
            return ReferenceServer.json(
                200, ["success": true, "data": ["jobId": .string(job.id), "status": "canceled"]])
        }
    }
}
