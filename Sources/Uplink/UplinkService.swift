import Foundation
import HTTPEngine
import Logging
import ServiceLifecycle
import Store
import Synchronization
import Talaria

/// Takes queued scans to the backend and their books into the library (issue 3): uploads, follows
/// each job's progress stream (or polls), commits books and the scan's `done` in one transaction,
/// then deletes the photo and sends the cleanup.
///
/// Nothing is lost: every step is persisted before the next one starts (the job before its stream
/// is opened, the books before the photo is deleted), so a restart at any point continues where
/// the queue says: `queued`/`uploading` are (re-)uploaded under the same `Idempotency-Key` — the
/// backend answers with the same job — and `analyzing` resumes its stream with `Last-Event-ID`.
///
/// Concurrency: one scheduler task starts at most ``UplinkSettings/concurrency`` scan tasks, each
/// holding its slot until the job is terminal. HTTP runs on the transport's own thread; SQLite and
/// spool files on ``StoreLane``; nothing here blocks the cooperative pool.
public final class UplinkService: Service, Sendable {
    public let settings: UplinkSettings
    private let client: TalariaClient
    private let queue: ScanQueue
    private let database: AppDatabase
    private let spool: SpoolDirectory
    private let logger: Logger
    private let events: @Sendable (UplinkEvent) -> Void
    private let store = StoreLane()
    private let doorbell = Doorbell()

    private struct State {
        var connectivity: UplinkConnectivity = .unknown
        var gate = RateLimitGate()
        var lastProblem: String?
        /// The API key file's content when the backend refused it; uploads wait until it changes.
        var refusedKeyFingerprint: String??
        var inFlight: [UUID: Task<Void, Never>] = [:]
        /// Scans whose last attempt hit a local error (the store): not picked again before this.
        var coolingDown: [UUID: Date] = [:]
    }

    private let state = Mutex(State())

    public init(
        settings: UplinkSettings, transport: any HTTPTransport, database: AppDatabase, spool: SpoolDirectory,
        logger: Logger, events: @escaping @Sendable (UplinkEvent) -> Void = { _ in }
    ) {
        self.settings = settings
        self.client = TalariaClient(transport: transport, settings: settings)
        self.database = database
        self.queue = ScanQueue(database: database)
        self.spool = spool
        self.logger = logger
        self.events = events
    }

    // MARK: Outside world

    /// A scan was queued (or something else changed): look for work now.
    public func wake() { doorbell.ring() }

    public var snapshot: UplinkSnapshot {
        let now = Date()
        return state.withLock { state in
            UplinkSnapshot(
                connectivity: Self.effectiveConnectivity(state, now: now), jobsInFlight: state.inFlight.count,
                concurrency: settings.concurrency, rateLimitRemainingSeconds: state.gate.remaining(at: now),
                lastProblem: state.lastProblem, backend: Self.redacted(settings.endpoints.base))
        }
    }

    /// Retries every failed scan (a long press, `swiftwing queue retry --all`) and lifts an
    /// "unauthorized" hold so the key is tried again. Returns the ids queued again.
    @discardableResult
    public func retryFailed() async throws(StoreError) -> [UUID] {
        let queue = self.queue
        let ids = try await store.run { () throws(StoreError) in try queue.retryAllFailed() }
        liftUnauthorizedHold()
        for id in ids { events(.scanChanged(scanID: id)) }
        wake()
        return ids
    }

    /// Retries one failed scan.
    @discardableResult
    public func retry(_ id: UUID) async throws(StoreError) -> ScanRecord {
        let queue = self.queue
        let record = try await store.run { () throws(StoreError) in try queue.retry(id) }
        liftUnauthorizedHold()
        events(.scanChanged(scanID: id))
        wake()
        return record
    }

    /// Discards a scan a person gave up on: its work stops, its photo is deleted, a job it had at the
    /// backend is cancelled (best effort). A done scan cannot be discarded.
    @discardableResult
    public func discard(_ id: UUID) async throws(StoreError) -> ScanRecord {
        let running = state.withLock { $0.inFlight[id] }
        running?.cancel()
        await running?.value
        let (queue, spool) = (self.queue, self.spool)
        let record = try await store.run { () throws(StoreError) in
            let record = try queue.markDiscarded(id)
            try spool.remove(scan: id)
            return record
        }
        if let jobID = record.jobID {
            let outcome = await client.delete(settings.endpoints.job(jobID), bearer: try? settings.apiKey.read())
            logger.info("asked the backend to cancel the discarded scan's job", metadata: [
                "scan_id": "\(record.idString)", "job_id": "\(jobID)", "outcome": "\(Self.summary(outcome))",
            ])
        }
        events(.scanChanged(scanID: id))
        return record
    }

    // MARK: Service

    public func run() async throws {
        logger.info("uplink started", metadata: [
            "backend": "\(Self.redacted(settings.endpoints.base))", "concurrency": "\(settings.concurrency)",
            "api_key": "\(settings.apiKey.path == nil ? "none configured" : "from a credential file")",
        ])
        checkKeyAtStart()
        await withDiscardingTaskGroup { group in
            group.addTask { await self.cleanupLoop() }
            group.addTask { await self.probeLoop() }
            await cancelWhenGracefulShutdown {
                await self.scheduleLoop()
            }
            group.cancelAll()
        }
        // Stop the scan tasks: their scans stay as persisted (uploading/analyzing) and resume on start.
        let running = state.withLock { state in Array(state.inFlight.values) }
        for task in running { task.cancel() }
        for task in running { await task.value }
        logger.info("uplink stopped", metadata: ["jobs_interrupted": "\(running.count)"])
    }

    private func scheduleLoop() async {
        while !Task.isCancelled {
            let now = Date()
            checkKeyReplaced()
            let (free, uploadsHeld, cooling) = state.withLock { state in
                state.coolingDown = state.coolingDown.filter { $0.value > now }
                let held = state.gate.isPaused(at: now) || state.refusedKeyFingerprint != nil
                return (settings.concurrency - state.inFlight.count, held, state.coolingDown)
            }
            if free > 0 {
                let (queue, limit) = (self.queue, 4 * settings.concurrency + 16)
                let candidates =
                    (try? await store.run { () throws(StoreError) in
                        uploadsHeld
                            ? try queue.scans(in: [.analyzing]) : try queue.pending(dueBy: now, limit: limit)
                    }) ?? []
                var started = 0
                for scan in candidates where started < free && cooling[scan.id] == nil {
                    if start(scan) { started += 1 }
                }
            }
            let queue = self.queue
            let nextDue = (try? await store.run { () throws(StoreError) in try queue.earliestNextAttempt() }) ?? nil
            let pauseEnds = state.withLock { $0.gate.pausedUntil }
            var wakeAt = now.addingTimeInterval(60)
            for date in [nextDue, pauseEnds].compactMap({ $0 }) where date > now { wakeAt = min(wakeAt, date) }
            await doorbell.wait(timeout: wakeAt.timeIntervalSince(now) + 0.01)
        }
    }

    /// Starts a task for `scan` unless one runs for it; it holds a slot until it ends.
    private func start(_ scan: ScanRecord) -> Bool {
        state.withLock { state in
            guard state.inFlight[scan.id] == nil, state.inFlight.count < settings.concurrency else { return false }
            state.inFlight[scan.id] = Task {
                await self.process(scan.id)
                self.state.withLock { _ = $0.inFlight.removeValue(forKey: scan.id) }
                self.doorbell.ring()
            }
            return true
        }
    }

    // MARK: One scan

    private func process(_ id: UUID) async {
        do {
            let queue = self.queue
            guard let scan = try await store.run({ () throws(StoreError) in try queue.scan(id: id) }), !scan.isSettled
            else { return }
            switch scan.state {
            case .analyzing:
                try await follow(scan)
            case .queued, .uploading:
                try await upload(scan)
            case .failed where scan.retryable == true:
                try await upload(scan)
            default:
                return
            }
        } catch is CancellationError {
            // Stopping: the scan stays as persisted and resumes on the next start.
        } catch let error as StoreError {
            logger.error("the uplink could not record a scan's progress; it is tried again in 30 s", metadata: [
                "scan_id": "\(id.uuidString.lowercased())", "error": "\(error)",
            ])
            state.withLock { $0.coolingDown[id] = Date().addingTimeInterval(30) }
        } catch {
            logger.error("unexpected uplink error", metadata: ["scan_id": "\(id.uuidString.lowercased())", "error": "\(error)"])
            state.withLock { $0.coolingDown[id] = Date().addingTimeInterval(30) }
        }
    }

    // MARK: Upload (docs/protocol.md §1)

    private func upload(_ scan: ScanRecord) async throws {
        let (queue, spool) = (self.queue, self.spool)
        var attempt = 1
        while true {
            try Task.checkCancellation()
            let now = Date()
            if let until = state.withLock({ $0.gate.isPaused(at: now) ? $0.gate.pausedUntil : nil }) {
                try await record(scan.id) { () throws(StoreError) in
                    try queue.requeue(scan.id, reason: "waiting: the backend is rate limiting", notBefore: until)
                }
                return
            }
            if state.withLock({ $0.refusedKeyFingerprint != nil }) { return }

            let jpeg: [UInt8]
            do {
                jpeg = try await store.run { () throws(StoreError) in try spool.readImage(scan.imagePath) }
            } catch {
                try await record(scan.id) { () throws(StoreError) in
                    try queue.markNeedsAttention(
                        scan.id,
                        reason: "its photo cannot be read (\(error)); discard it with `swiftwing queue discard \(scan.idString)`")
                }
                return
            }
            guard jpeg.count <= ScanUploadRequest.maximumImageBytes else {
                let reason = "the photo is \(jpeg.count) bytes, over the backend's \(ScanUploadRequest.maximumImageBytes)-byte "
                    + "limit; it is kept: lower imaging.jpeg_quality or imaging.max_long_edge, then `swiftwing queue retry`"
                try await fail(scan.id, reason: reason)
                return
            }
            let apiKey: String?
            do {
                apiKey = try settings.apiKey.read()
            } catch {
                holdUploads(keyError: error)
                return
            }

            let uploading = try await store.run { () throws(StoreError) in try queue.markUploading(scan.id) }
            events(.scanChanged(scanID: scan.id))
            let started = ContinuousClock.now
            let outcome = await client.upload(idempotencyKey: uploading.idempotencyKey, jpeg: jpeg, apiKey: apiKey)
            try Task.checkCancellation()
            let finished = Date()
            var verdict = RetryPolicy.classify(outcome, operation: "the upload", now: finished)
            if case .success = verdict, case .response(let status, _, let body) = outcome {
                var accepted: UploadAccepted?
                do throws(TalariaDecodingError) {
                    accepted = try UploadAccepted.decode(body, base: settings.endpoints.base)
                } catch {
                    verdict = .transient(
                        reason: "the backend accepted the upload (HTTP \(status)) but its reply was not understood "
                            + "(\(error)); sent again under the same Idempotency-Key")
                }
                if let accepted {
                    noteReachable()
                    logger.info("scan uploaded", metadata: [
                        "scan_id": "\(scan.idString)", "job_id": "\(accepted.jobID)", "status": "\(status)",
                        "bytes": "\(jpeg.count)", "ms": "\(Self.milliseconds(since: started))",
                        "follow": "\(accepted.needsPolling ? "polling" : "stream")",
                    ])
                    // The job is durable before its stream opens: a restart follows it, never re-sends.
                    let job = try await store.run { () throws(StoreError) in
                        try queue.recordJob(
                            scan.id, jobID: accepted.jobID, streamURL: accepted.streamURL?.absoluteString,
                            statusURL: accepted.statusURL.absoluteString, jobToken: accepted.streamToken)
                    }
                    events(.scanChanged(scanID: scan.id))
                    try await follow(job)
                    return
                }
            }
            let reason = verdict.reason ?? "retrying"
            note(outcome, verdict: verdict)
            switch settings.retry.decide(after: verdict, attemptInRound: attempt, now: finished) {
            case .done:
                return
            case .retry(let at, let next):
                logger.notice("upload failed; retrying", metadata: [
                    "scan_id": "\(scan.idString)", "attempt": "\(attempt)", "reason": "\(verdict.reason ?? "")",
                ])
                try await record(scan.id) { () throws(StoreError) in
                    try queue.requeue(scan.id, reason: reason, notBefore: at)
                }
                try await sleep(until: at)
                attempt = next
            case .nextRound(let notBefore, let reason):
                let roundStart = max(notBefore, settings.retry.nextRoundStart(after: finished))
                logger.notice("upload round over; the scan waits for the network or the next round", metadata: [
                    "scan_id": "\(scan.idString)", "next_round": "\(roundStart)", "reason": "\(reason)",
                ])
                try await record(scan.id) { () throws(StoreError) in
                    try queue.requeue(scan.id, reason: reason, notBefore: roundStart)
                }
                return
            case .pauseAll(let until, let reason):
                pauseForRateLimit(until: until, reason: reason)
                try await record(scan.id) { () throws(StoreError) in
                    try queue.requeue(scan.id, reason: reason, notBefore: until)
                }
                return
            case .fail(let reason, let unauthorized):
                if unauthorized { holdUploadsUnauthorized(reason: reason, fingerprint: apiKey ?? "") }
                try await fail(scan.id, reason: reason)
                return
            }
        }
    }

    // MARK: Following a job (docs/protocol.md §2, §4)

    private enum StreamEnd {
        case finished
        case poll(reason: String)
    }

    private func follow(_ scan: ScanRecord) async throws {
        guard let jobID = scan.jobID else { return }
        if let raw = scan.streamURL, let url = URL(string: raw) {
            switch try await followStream(scan, jobID: jobID, url: url) {
            case .finished:
                return
            case .poll(let reason):
                logger.notice("following the job by polling", metadata: [
                    "scan_id": "\(scan.idString)", "job_id": "\(jobID)", "reason": "\(reason)",
                ])
            }
        }
        try await poll(scan, jobID: jobID)
    }

    private func followStream(_ scan: ScanRecord, jobID: String, url: URL) async throws -> StreamEnd {
        let queue = self.queue
        var stream = JobStream(
            jobID: jobID, base: settings.endpoints.base, abandonAfter: settings.abandonStreamAfter,
            resumingAfter: scan.lastEventID)
        var failures = 0
        // Progress is worth an fsync only for resuming a long job: not before it has run a while.
        var lastPersisted = Date()
        var persistedEventID = scan.lastEventID
        let token = scan.jobToken ?? (try? settings.apiKey.read()) ?? nil

        func persistProgress(_ fraction: Double?, force: Bool) async throws {
            let now = Date()
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
            if let abandon = stream.tick(now: Date()), case .pollStatus(let reason) = abandon { return .poll(reason: reason) }
            var problem: String?
            do {
                reading: for try await part in client.openStream(url, token: token, lastEventID: stream.lastEventID) {
                    switch part {
                    case .head(let head):
                        switch head.status {
                        case 200..<300:
                            stream.connected(now: Date())
                            noteReachable()
                        case 401, 403, 404, 410:
                            return .poll(reason: "the stream answered HTTP \(head.status)")
                        default:
                            problem = "the stream answered HTTP \(head.status)"
                            break reading
                        }
                    case .body(let bytes):
                        failures = 0
                        for action in stream.receive(bytes, now: Date()) {
                            switch action {
                            case .progress(let fraction, let message):
                                events(.progress(scanID: scan.id, fraction: fraction, message: message))
                                try await persistProgress(fraction, force: false)
                            case .complete(let books):
                                try await complete(scan, jobID: jobID, books: books)
                                return .finished
                            case .fetchResults(let resultsURL):
                                if try await fetchResultsAndComplete(scan, jobID: jobID, url: resultsURL) { return .finished }
                                return .poll(reason: "the job completed without its books and the results were not ready")
                            case .failed(let failure):
                                try await jobFailed(scan, jobID: jobID, failure: failure)
                                return .finished
                            case .pollStatus(let reason):
                                return .poll(reason: reason)
                            case .warning(let warning):
                                logger.warning("skipped part of the progress stream", metadata: [
                                    "scan_id": "\(scan.idString)", "job_id": "\(jobID)", "warning": "\(warning)",
                                ])
                            }
                        }
                    }
                }
            } catch let error as HTTPError {
                if Task.isCancelled { throw CancellationError() }
                problem = error.description
                note(TalariaClient.outcome(of: error), verdict: .transient(reason: "the progress stream: \(error)"))
            }
            try Task.checkCancellation()
            guard stream.disconnected() else { return .poll(reason: "the stream ended without a terminal event") }
            failures += 1
            try await persistProgress(nil, force: true)
            if failures > settings.retry.attemptsPerRound + 2 {
                return .poll(reason: "the stream failed \(failures) times in a row (\(problem ?? "closed"))")
            }
            let wait = min(stream.reconnectDelay, 30) + (failures > 1 ? settings.retry.delay(afterFailure: failures - 1) : 0)
            logger.notice("progress stream dropped; resuming", metadata: [
                "scan_id": "\(scan.idString)", "job_id": "\(jobID)", "last_event_id": "\(stream.lastEventID ?? "-")",
                "in_s": "\(String(format: "%.1f", wait))", "reason": "\(problem ?? "closed by the server")",
            ])
            try await Task.sleep(for: .seconds(wait))
        }
    }

    /// Polls the job's status (≥ ``UplinkSettings/pollInterval`` apart) until it is terminal.
    private func poll(_ scan: ScanRecord, jobID: String) async throws {
        let queue = self.queue
        let statusURL = scan.statusURL.flatMap(URL.init(string:)) ?? settings.endpoints.job(jobID)
        var missingSince: Date?
        var resultsMissingSince: Date?
        var failures = 0
        while true {
            try Task.checkCancellation()
            let bearer = (try? settings.apiKey.read()) ?? scan.jobToken
            let outcome = await client.get(statusURL, bearer: bearer)
            try Task.checkCancellation()
            let now = Date()
            var wait = settings.pollInterval
            switch outcome {
            case .response(let status, _, let body) where (200..<300).contains(status):
                noteReachable()
                missingSince = nil
                failures = 0
                guard let report = try? JobStatusResponse.decode(body) else {
                    logger.warning("the job's status reply was not understood; polling on", metadata: [
                        "scan_id": "\(scan.idString)", "job_id": "\(jobID)", "body": "\(Self.preview(body))",
                    ])
                    break
                }
                switch report.status {
                case .completed:
                    if try await fetchResultsAndComplete(scan, jobID: jobID, url: nil) { return }
                    resultsMissingSince = resultsMissingSince ?? now
                    if now.timeIntervalSince(resultsMissingSince!) >= settings.jobLostAfter {
                        try await restart(scan, reason: "the backend completed job \(jobID) but its results stayed unavailable")
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
                            try queue.recordProgress(scan.id, progress: progress)
                        }
                    }
                }
            case .response(404, _, _), .response(410, _, _):
                noteReachable()
                missingSince = missingSince ?? now
                if now.timeIntervalSince(missingSince!) >= settings.jobLostAfter {
                    try await restart(scan, reason: "the backend no longer knows job \(jobID) (HTTP 404 for "
                        + "\(Int(settings.jobLostAfter)) s)")
                    return
                }
            case .response(429, let headers, let body):
                let until = RetryAfter.resumeInstant(problem: ProblemDetails.decode(body), headers: headers, now: now)
                wait = max(wait, min(until.timeIntervalSince(now), 300))
            default:
                failures += 1
                note(outcome, verdict: RetryPolicy.classify(outcome, operation: "the status poll", now: now))
                wait = max(wait, min(settings.retry.delay(afterFailure: failures) * Double(failures), 60))
            }
            try await Task.sleep(for: .seconds(wait))
        }
    }

    /// `GET …/results`, then commit. `false` when they are not available (404, an error): poll on.
    private func fetchResultsAndComplete(_ scan: ScanRecord, jobID: String, url: URL?) async throws -> Bool {
        let outcome = await client.get(url ?? settings.endpoints.results(jobID), bearer: (try? settings.apiKey.read()) ?? scan.jobToken)
        try Task.checkCancellation()
        guard case .response(let status, _, let body) = outcome, (200..<300).contains(status) else {
            logger.notice("the job's results are not available yet", metadata: [
                "scan_id": "\(scan.idString)", "job_id": "\(jobID)", "outcome": "\(Self.summary(outcome))",
            ])
            return false
        }
        let results: JobResultsResponse
        do throws(TalariaDecodingError) {
            results = try JobResultsResponse.decode(body)
        } catch {
            logger.warning("the job's results were not understood; polling on", metadata: [
                "scan_id": "\(scan.idString)", "job_id": "\(jobID)", "error": "\(error)", "body": "\(Self.preview(body))",
            ])
            return false
        }
        for warning in results.warnings {
            logger.warning("skipped part of the job's results", metadata: ["job_id": "\(jobID)", "warning": "\(warning)"])
        }
        try await complete(scan, jobID: jobID, books: results.books)
        return true
    }

    // MARK: Terminal states

    /// Books and `done` in one transaction; only then the photo is deleted and the cleanup sent.
    private func complete(_ scan: ScanRecord, jobID: String, books: [TalariaBook]) async throws {
        let (database, spool) = (self.database, self.spool)
        let now = Date()
        let records = TalariaBook.deduplicated(books).map { $0.record(scanID: scan.id, now: now) }
        let (done, saved) = try await store.run { () throws(StoreError) in
            try database.completeScanMatchingTitles(scan.id, books: records, now: now)
        }
        logger.info("books landed in the library", metadata: [
            "scan_id": "\(scan.idString)", "job_id": "\(jobID)", "books": "\(saved.count)",
            "titles": "\(saved.map(\.title).joined(separator: " | "))",
        ])
        events(.booksLanded(scanID: scan.id, books: saved))
        do {
            try await store.run { () throws(StoreError) in try spool.remove(scan: scan.id) }
        } catch {
            // The next start's reconciliation removes the photo of a done scan.
            logger.warning("the photo of a done scan was not deleted", metadata: ["scan_id": "\(scan.idString)", "error": "\(error)"])
        }
        if done.cleanupPending {
            await sendCleanup(done)
        }
    }

    /// `DELETE …/cleanup`: 2xx or 404 (already clean) settles it; anything else is retried later by
    /// ``cleanupLoop()``. Never throws, never blocks the library.
    private func sendCleanup(_ scan: ScanRecord) async {
        guard let jobID = scan.jobID else { return }
        let queue = self.queue
        let outcome = await client.delete(settings.endpoints.cleanup(jobID), bearer: (try? settings.apiKey.read()) ?? nil)
        let acknowledged: Bool
        if case .response(let status, _, _) = outcome, (200..<300).contains(status) || status == 404 {
            acknowledged = true
        } else {
            acknowledged = false
        }
        do {
            try await store.run { () throws(StoreError) in _ = try queue.recordCleanup(scan.id, acknowledged: acknowledged) }
        } catch {
            logger.warning("a cleanup's outcome was not recorded", metadata: ["job_id": "\(jobID)", "error": "\(error)"])
        }
        if !acknowledged {
            logger.notice("the backend's cleanup failed; retried later", metadata: [
                "job_id": "\(jobID)", "outcome": "\(Self.summary(outcome))",
            ])
        }
    }

    private func jobFailed(_ scan: ScanRecord, jobID: String, failure: JobFailure) async throws {
        if failure.retryable, !failure.isCanceled {
            try await restart(scan, reason: "the backend failed job \(jobID) (\(failure)); sent again as a new job")
        } else {
            let reason = failure.isCanceled
                ? "job \(jobID) was cancelled at the backend; the photo is kept: `swiftwing queue retry \(scan.idString)` "
                    + "sends it again"
                : "the backend could not recognise the photo (\(failure)); it is kept: `swiftwing queue retry "
                    + "\(scan.idString)` or `swiftwing queue discard \(scan.idString)`"
            try await fail(scan.id, reason: reason)
        }
    }

    private func restart(_ scan: ScanRecord, reason: String) async throws {
        let queue = self.queue
        let notBefore = Date().addingTimeInterval(settings.retry.delay(afterFailure: 1))
        logger.notice("the job is sent again as a new one", metadata: ["scan_id": "\(scan.idString)", "reason": "\(reason)"])
        try await record(scan.id) { () throws(StoreError) in
            try queue.restartJob(scan.id, reason: reason, notBefore: notBefore)
        }
    }

    private func fail(_ id: UUID, reason: String) async throws {
        let queue = self.queue
        try await record(id) { () throws(StoreError) in try queue.markFailed(id, reason: reason, retryable: false) }
        logger.error("scan failed; its photo is kept", metadata: ["scan_id": "\(id.uuidString.lowercased())", "reason": "\(reason)"])
        events(.scanFailed(scanID: id, reason: reason))
    }

    private func record(_ id: UUID, _ change: @escaping @Sendable () throws(StoreError) -> ScanRecord) async throws {
        _ = try await store.run(change)
        events(.scanChanged(scanID: id))
    }

    // MARK: Background loops

    /// Owed cleanups, retried while the backend is reachable.
    private func cleanupLoop() async {
        let queue = self.queue
        try? await Task.sleep(for: .seconds(1))
        while !Task.isCancelled {
            if case .online = snapshot.connectivity {
                let owed = (try? await store.run { () throws(StoreError) in try queue.pendingCleanups(limit: 50) }) ?? []
                for scan in owed where !Task.isCancelled { await sendCleanup(scan) }
            }
            try? await Task.sleep(for: .seconds(settings.cleanupInterval))
        }
    }

    /// While offline (or before the first answer), probe the backend so a return is noticed soon.
    private func probeLoop() async {
        while !Task.isCancelled {
            try? await Task.sleep(for: .seconds(settings.probeInterval))
            switch snapshot.connectivity {
            case .offline, .unknown:
                let outcome = await client.get(settings.endpoints.base, bearer: nil)
                if case .response = outcome { noteReachable() }
            default:
                break
            }
        }
    }

    // MARK: Connectivity

    private static func effectiveConnectivity(_ state: State, now: Date) -> UplinkConnectivity {
        if case .unauthorized = state.connectivity, state.refusedKeyFingerprint != nil { return state.connectivity }
        if let until = state.gate.pausedUntil, state.gate.isPaused(at: now) { return .rateLimited(until: until) }
        if case .rateLimited = state.connectivity { return .online }
        return state.connectivity
    }

    private func setConnectivity(_ new: UplinkConnectivity, problem: String?) {
        let now = Date()
        let (changed, cameBack) = state.withLock { state -> (UplinkConnectivity?, Bool) in
            let before = Self.effectiveConnectivity(state, now: now)
            state.connectivity = new
            if let problem { state.lastProblem = problem }
            let after = Self.effectiveConnectivity(state, now: now)
            guard before != after else { return (nil, false) }
            let wasAway: Bool
            switch before {
            case .offline, .unknown: wasAway = true
            default: wasAway = false
            }
            return (after, wasAway && after == .online)
        }
        guard let changed else { return }
        logger.notice("backend connectivity changed", metadata: [
            "connectivity": "\(changed)", "problem": "\(problem ?? "")",
        ])
        events(.connectivityChanged(changed))
        if cameBack {
            // The network is back: every waiting scan starts a new round now.
            let queue = self.queue
            Task {
                _ = try? await store.run { () throws(StoreError) in try queue.makeWaitingScansDue() }
                self.wake()
            }
        }
    }

    private func noteReachable() {
        let current = state.withLock { $0.connectivity }
        switch current {
        case .online, .unauthorized: return
        default: setConnectivity(.online, problem: nil)
        }
    }

    private func note(_ outcome: TransferOutcome, verdict: OutcomeClass) {
        switch outcome {
        case .connectFailed, .timedOut, .connectionLost:
            setConnectivity(.offline(reason: verdict.reason ?? "unreachable"), problem: verdict.reason)
        case .response:
            if case .transient(let reason) = verdict { state.withLock { $0.lastProblem = reason } }
            noteReachable()
        }
    }

    private func pauseForRateLimit(until: Date, reason: String) {
        state.withLock { state in
            state.gate.pause(until: until)
            state.lastProblem = reason
        }
        logger.warning("uploads paused: the backend is rate limiting", metadata: [
            "until": "\(until)", "reason": "\(reason)",
        ])
        setConnectivity(.rateLimited(until: until), problem: reason)
        events(.connectivityChanged(snapshot.connectivity))
    }

    /// The backend refused the key (or it cannot be read): uploads wait, without failing scan
    /// after scan, until the key file changes or a person retries.
    private func holdUploadsUnauthorized(reason: String, fingerprint: String?) {
        state.withLock { $0.refusedKeyFingerprint = .some(fingerprint) }
        setConnectivity(.unauthorized(reason: reason), problem: reason)
    }

    /// A key that is missing or unreadable holds uploads from the start, so `status` and the panel say
    /// why before the first press rather than after it.
    private func checkKeyAtStart() {
        do {
            _ = try settings.apiKey.read()
        } catch {
            logger.warning("uploads are held until the API key can be read", metadata: ["problem": "\(error)"])
            holdUploads(keyError: error)
        }
    }

    private func holdUploads(keyError: UplinkError) {
        holdUploadsUnauthorized(reason: keyError.description, fingerprint: nil)
        if case .apiKeyMissing = keyError { events(.apiKeyMissing(reason: keyError.description)) }
    }

    private func liftUnauthorizedHold() {
        let held = state.withLock { state -> Bool in
            defer { state.refusedKeyFingerprint = nil }
            return state.refusedKeyFingerprint != nil
        }
        if held { setConnectivity(.unknown, problem: nil) }
    }

    /// A new key in the credential file lifts the hold.
    private func checkKeyReplaced() {
        guard let refused = state.withLock({ $0.refusedKeyFingerprint }) else { return }
        guard let current = try? settings.apiKey.read() else { return }
        if current != refused {
            logger.notice("the API key file changed; uploads resume")
            liftUnauthorizedHold()
        }
    }

    // MARK: Helpers

    private static func milliseconds(since start: ContinuousClock.Instant) -> Int {
        let elapsed = ContinuousClock.now - start
        return Int(elapsed.components.seconds * 1000 + elapsed.components.attoseconds / 1_000_000_000_000_000)
    }

    /// Scheme, host and path only: a base URL never carries credentials into logs.
    static func redacted(_ url: URL) -> String {
        var components = URLComponents(url: url, resolvingAgainstBaseURL: false)
        components?.user = nil
        components?.password = nil
        components?.query = nil
        return components?.string ?? "<backend>"
    }

    static func summary(_ outcome: TransferOutcome) -> String {
        switch outcome {
        case .connectFailed(let detail), .timedOut(let detail), .connectionLost(let detail): detail
        case .response(let status, _, let body): "HTTP \(status) \(preview(body))"
        }
    }

    static func preview(_ body: [UInt8]) -> String {
        let text = String(decoding: body.prefix(160), as: UTF8.self)
        return text.replacingOccurrences(of: "\n", with: " ")
    }
}
