import Foundation
import HTTPEngine
import Store
import Talaria

/// Following a job to its end (docs/protocol.md §2, §4): its progress stream, resumed with
/// `Last-Event-ID` when it drops; polling its status when there is no stream or it fails.
extension ScanJourney {
    private enum StreamEnd {
        case finished
        case poll(reason: String)
    }

    func follow(_ scan: ScanRecord) async throws {
        guard let jobID = scan.jobID else { return }
        // Judged again here: a row may hold URLs stored before the rule, or written by another build.
        let base = settings.endpoints.base
        let stream = ServerURL(scan.streamURL, field: "the stream URL", base: base)
        let status = ServerURL(scan.statusURL, field: "the status URL", base: base)
        if let reason = stream.refusal ?? status.refusal {
            try await fail(scan.id, reason: "job \(jobID) is not followed: " + reason)
            return
        }
        if let problem = jobIDProblem(jobID) {
            try await fail(
                scan.id,
                reason: "the stored job id \(jobID.debugDescription.prefix(80)) is not followed: "
                    + "\(problem), so it is not one path segment; `swiftwing queue retry` sends the photo as a new job")
            return
        }
        if let url = stream.url {
            switch try await followStream(scan, jobID: jobID, url: url) {
            case .finished:
                return
            case .poll(let reason):
                logger.notice(
                    "following the job by polling",
                    metadata: [
                        "scan_id": "\(scan.idString)", "job_id": "\(jobID)", "reason": "\(reason)",
                    ])
            }
        }
        try await poll(scan, jobID: jobID)
    }

    private func followStream(_ scan: ScanRecord, jobID: String, url: URL) async throws -> StreamEnd {
        let (queue, clock) = (self.queue, self.clock)
        var stream = JobStream(
            jobID: jobID, base: settings.endpoints.base, abandonAfter: settings.abandonStreamAfter,
            resumingAfter: scan.lastEventID)
        var failures = 0
        // Progress is worth an fsync only for resuming a long job: not before it has run a while.
        var lastPersisted = clock.now
        var persistedEventID = scan.lastEventID
        let token = settings.endpoints.bearer(
            for: url, apiKey: (try? settings.apiKey.read()) ?? nil, jobToken: scan.jobToken, preferJobToken: true)

        func persistProgress(_ fraction: Double?, force: Bool) async throws {
            let now = clock.now
            let eventID = stream.lastEventID
            guard force || now.timeIntervalSince(lastPersisted) >= settings.progressPersistInterval else { return }
            guard fraction != nil || eventID != persistedEventID else { return }
            lastPersisted = now
            persistedEventID = eventID
            try await store.run { () throws(StoreError) in
                try queue.update(scan.id, now: now) { record in
                    if let fraction, fraction.isFinite { record.progress = min(max(fraction, 0), 1) }
                    if let eventID { record.lastEventID = eventID }
                }
            }
        }

        while true {
            try Task.checkCancellation()
            if let abandon = stream.tick(now: clock.now), case .pollStatus(let reason) = abandon {
                return .poll(reason: reason)
            }
            var problem: String?
            var serverWait: TimeInterval = 0
            do {
                reading: for try await part in client.openStream(url, token: token, lastEventID: stream.lastEventID) {
                    switch part {
                    case .head(let head):
                        switch head.status {
                        case 200..<300:
                            stream.connected(now: clock.now)
                            link.answered()
                            missingJobs.found(scan.id)
                        case 401, 403, 404, 410:
                            return .poll(reason: "the stream answered HTTP \(head.status)")
                        case 429,
                            503 where head.header("Retry-After") != nil:
                            // A recognizer holding its most streams to a job, or busy: its Retry-After is the
                            // soonest a new stream can be had. A wait past the stream's abandoning polls instead.
                            let now = clock.now
                            serverWait = RetryAfter.resumeInstant(
                                problem: nil, headers: head.fields, now: now
                            ).timeIntervalSince(now)
                            let said =
                                "the stream answered HTTP \(head.status), retry in \(Int(serverWait.rounded(.up))) s"
                            if serverWait > settings.abandonStreamAfter { return .poll(reason: said) }
                            problem = said
                            break reading
                        default:
                            problem = "the stream answered HTTP \(head.status)"
                            break reading
                        }
                    case .body(let bytes):
                        failures = 0
                        for action in stream.receive(bytes, now: clock.now) {
                            switch action {
                            case .progress(let fraction, let message):
                                events(.progress(scanID: scan.id, fraction: fraction, message: message))
                                try await persistProgress(fraction, force: false)
                            case .complete(let books, let spines):
                                try await complete(scan, jobID: jobID, books: books, spines: spines)
                                return .finished
                            case .fetchResults(let resultsURL):
                                if try await fetchResultsAndComplete(scan, jobID: jobID, url: resultsURL) {
                                    return .finished
                                }
                                return .poll(
                                    reason: "the job completed without its books and the results were not ready")
                            case .failed(let failure):
                                try await jobFailed(scan, jobID: jobID, failure: failure)
                                return .finished
                            case .refusedURL(let reason):
                                try await fail(scan.id, reason: "job \(jobID) is not followed: " + reason)
                                return .finished
                            case .overLimit(let reason):
                                try await overLimit(scan, jobID: jobID, reason: reason)
                                return .finished
                            case .pollStatus(let reason):
                                return .poll(reason: reason)
                            case .warning(let warning):
                                logger.warning(
                                    "skipped part of the progress stream",
                                    metadata: [
                                        "scan_id": "\(scan.idString)", "job_id": "\(jobID)", "warning": "\(warning)",
                                    ])
                            }
                        }
                    }
                }
            } catch let error as HTTPError {
                if Task.isCancelled { throw CancellationError() }
                problem = error.description
                let verdict = OutcomeClass.transient(reason: "the progress stream: \(error)")
                link.note(TalariaClient.outcome(of: error), verdict: verdict)
            }
            try Task.checkCancellation()
            guard stream.disconnected() else { return .poll(reason: "the stream ended without a terminal event") }
            failures += 1
            try await persistProgress(nil, force: true)
            if failures > settings.retry.attemptsPerRound + 2 {
                return .poll(reason: "the stream failed \(failures) times in a row (\(problem ?? "closed"))")
            }
            let backoff = failures > 1 ? settings.retry.delay(afterFailure: failures - 1) : 0
            let wait = max(min(stream.reconnectDelay, 30) + backoff, serverWait)
            logger.notice(
                "progress stream dropped; resuming",
                metadata: [
                    "scan_id": "\(scan.idString)", "job_id": "\(jobID)",
                    "last_event_id": "\(stream.lastEventID ?? "-")",
                    "in_s": "\(String(format: "%.1f", wait))", "reason": "\(problem ?? "closed by the server")",
                ])
            try await clock.sleep(for: wait)
        }
    }

    /// Polls the job's status (≥ ``UplinkSettings/pollInterval`` apart) until it is terminal.
    private func poll(_ scan: ScanRecord, jobID: String) async throws {
        let (queue, clock) = (self.queue, self.clock)
        let statusURL =
            ServerURL(scan.statusURL, field: "the status URL", base: settings.endpoints.base).url
            ?? settings.endpoints.job(jobID)
        var resultsMissingSince: Date?
        var failures = 0
        while true {
            try Task.checkCancellation()
            let bearer = settings.endpoints.bearer(
                for: statusURL, apiKey: (try? settings.apiKey.read()) ?? nil, jobToken: scan.jobToken,
                preferJobToken: false)
            let outcome = await client.get(statusURL, bearer: bearer)
            try Task.checkCancellation()
            let now = clock.now
            var wait = settings.pollInterval
            switch outcome {
            case .response(let status, _, let body) where (200..<300).contains(status):
                link.answered()
                missingJobs.found(scan.id)
                failures = 0
                guard let report = try? JobStatusResponse.decode(body) else {
                    logger.warning(
                        "the job's status reply was not understood; polling on",
                        metadata: [
                            "scan_id": "\(scan.idString)", "job_id": "\(jobID)", "body": "\(UplinkLog.preview(body))",
                        ])
                    break
                }
                switch report.status {
                case .completed:
                    if try await fetchResultsAndComplete(scan, jobID: jobID, url: nil) { return }
                    let since = resultsMissingSince ?? now
                    resultsMissingSince = since
                    if now.timeIntervalSince(since) >= settings.jobLostAfter {
                        try await restart(
                            scan, reason: "the backend completed job \(jobID) but its results stayed unavailable")
                        return
                    }
                case .failed, .canceled:
                    let failure = JobFailure(
                        code: report.error?.code ?? (report.status == .canceled ? "CANCELED" : nil),
                        message: report.error?.reason, retryable: report.error?.retryable ?? (report.status == .failed))
                    try await jobFailed(scan, jobID: jobID, failure: failure)
                    return
                default:
                    if let progress = report.progress {
                        events(.progress(scanID: scan.id, fraction: progress, message: nil))
                        try await store.run { () throws(StoreError) in
                            try queue.recordProgress(scan.id, progress: progress, now: now)
                        }
                    }
                }
            case .response(404, _, _), .response(410, _, _):
                link.answered()
                let since = missingJobs.missing(scan.id, at: now)
                if now.timeIntervalSince(since) >= settings.jobLostAfter {
                    missingJobs.found(scan.id)
                    try await restart(
                        scan,
                        reason: "the backend no longer knows job \(jobID) (HTTP 404 for "
                            + "\(Int(settings.jobLostAfter)) s)")
                    return
                }
                // Perhaps lost (a backend restarted), perhaps not there yet: about ten more checks, each
                // from a slot taken only for the check, so new presses go out meanwhile.
                let recheck = max(settings.pollInterval, settings.jobLostAfter / 10)
                logger.notice(
                    "the backend does not know the job; checked again without holding a slot",
                    metadata: [
                        "scan_id": "\(scan.idString)", "job_id": "\(jobID)",
                        "missing_s": "\(Int(now.timeIntervalSince(since)))",
                    ])
                throw Deferred(until: now.addingTimeInterval(recheck))
            default:
                let verdict = RetryPolicy.classify(outcome, operation: "the status poll", now: now)
                // A 429, or a 503 with Retry-After (a busy backend): the next poll waits as long as asked (at most
                // 5 min), as uploads do; it is not a failure of the backend.
                if case .rateLimited(let until, _, _) = verdict {
                    wait = max(wait, min(until.timeIntervalSince(now), 300))
                    break
                }
                failures += 1
                link.note(outcome, verdict: verdict)
                wait = max(wait, min(settings.retry.delay(afterFailure: failures) * Double(failures), 60))
            }
            try await clock.sleep(for: wait)
        }
    }

    /// `GET …/results`, then commit. `false` when they are not available (404, an error): poll on.
    private func fetchResultsAndComplete(_ scan: ScanRecord, jobID: String, url: URL?) async throws -> Bool {
        let url = url ?? settings.endpoints.results(jobID)
        let bearer = settings.endpoints.bearer(
            for: url, apiKey: (try? settings.apiKey.read()) ?? nil, jobToken: scan.jobToken, preferJobToken: false)
        let outcome = await client.get(url, bearer: bearer)
        try Task.checkCancellation()
        guard case .response(let status, _, let body) = outcome, (200..<300).contains(status) else {
            logger.notice(
                "the job's results are not available yet",
                metadata: [
                    "scan_id": "\(scan.idString)", "job_id": "\(jobID)", "outcome": "\(UplinkLog.summary(outcome))",
                ])
            return false
        }
        let results: JobResultsResponse
        do throws(TalariaDecodingError) {
            results = try JobResultsResponse.decode(body)
        } catch {
            logger.warning(
                "the job's results were not understood; polling on",
                metadata: [
                    "scan_id": "\(scan.idString)", "job_id": "\(jobID)", "error": "\(error)",
                    "body": "\(UplinkLog.preview(body))",
                ])
            return false
        }
        for warning in results.warnings {
            logger.warning(
                "skipped part of the job's results",
                metadata: [
                    "job_id": "\(jobID)", "warning": "\(warning)",
                ])
        }
        try await complete(scan, jobID: jobID, books: results.books, spines: results.spines)
        return true
    }
}
