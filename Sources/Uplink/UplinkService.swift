import Foundation
import HTTPEngine
import Logging
import ServiceLifecycle
import Store
import SwiftWingCore
import Synchronization
import Talaria

/// Takes queued scans to the backend and their books into the library: uploads, follows each
/// job's progress stream (or polls), commits books and the scan's `done` in one transaction, then
/// deletes the photo and sends the cleanup.
///
/// Nothing is lost: every step is persisted before the next one starts (the job before its stream
/// is opened, the books before the photo is deleted), so a restart at any point continues where
/// the queue says: `queued`/`uploading` are (re-)uploaded under the same `Idempotency-Key` — the
/// backend answers with the same job — and `analyzing` resumes its stream with `Last-Event-ID`.
///
/// Three parts: this service schedules (one task starts at most ``UplinkSettings/concurrency``
/// scan tasks, each holding its slot until the job is terminal) and runs the background loops;
/// ``ScanJourney`` takes one scan through upload, following, completion and cleanup;
/// ``ConnectivityTracker`` is the pure state of the backend's reachability. HTTP runs on the
/// transport's own thread; SQLite and spool files on ``StoreLane``; time comes from the injected
/// `Clock` and ``WallClock``; nothing here blocks the cooperative pool.
public final class UplinkService: Service, Sendable {
    public let settings: UplinkSettings
    private let client: TalariaClient
    private let queue: ScanQueue
    private let spool: SpoolDirectory
    private let logger: Logger
    private let events: @Sendable (UplinkEvent) -> Void
    private let clock: UplinkTime
    private let store: StoreLane
    private let doorbell: Doorbell
    private let link: BackendLink
    private let journey: ScanJourney
    /// Called on every turn of the scheduler (at least every ``UplinkSettings/idleTick``): the daemon's
    /// watchdog sees from it that the uplink is not stuck.
    private let heartbeat: @Sendable () -> Void

    private struct Slots {
        var inFlight: [UUID: Task<Void, Never>] = [:]
        /// Scans not picked again before a date: their last attempt hit a local error (the store), or
        /// their job is missing at the backend and they wait outside a slot.
        var notBefore: [UUID: Date] = [:]
    }

    private let slots = Mutex(Slots())

    public init(
        settings: UplinkSettings, transport: any HTTPTransport, database: AppDatabase, spool: SpoolDirectory,
        logger: Logger, clock: any Clock<Duration> = ContinuousClock(), wallClock: WallClock = .system,
        events: @escaping @Sendable (UplinkEvent) -> Void = { _ in }, heartbeat: @escaping @Sendable () -> Void = {}
    ) {
        self.heartbeat = heartbeat
        let (queue, store, doorbell) = (ScanQueue(database: database), StoreLane(name: "sw-uplink-sql"), Doorbell())
        let client = TalariaClient(transport: transport, settings: settings)
        self.store = store
        self.doorbell = doorbell
        self.settings = settings
        self.client = client
        self.queue = queue
        self.spool = spool
        self.logger = logger
        self.events = events
        let clock = UplinkTime(clock: clock, wall: wallClock)
        self.clock = clock
        // The network is back: every waiting scan starts a new round now.
        self.link = BackendLink(clock: clock, logger: logger, events: events) {
            Task {
                _ = try? await store.run { () throws(StoreError) in try queue.makeWaitingScansDue(now: clock.now) }
                doorbell.ring()
            }
        }
        self.journey = ScanJourney(
            settings: settings, client: client, queue: queue, database: database, spool: spool, store: store,
            cropper: BlockingThread(name: "sw-uplink-crop"), link: link, clock: clock, logger: logger, events: events)
    }

    // MARK: Outside world

    /// A scan was queued (or something else changed): look for work now.
    public func wake() { doorbell.ring() }

    public var snapshot: UplinkSnapshot {
        let jobsInFlight = slots.withLock { $0.inFlight.count }
        return link.read { tracker, now in
            UplinkSnapshot(
                connectivity: tracker.connectivity(at: now), jobsInFlight: jobsInFlight,
                concurrency: settings.concurrency, rateLimitRemainingSeconds: tracker.gate.remaining(at: now),
                lastProblem: tracker.lastProblem, backend: UplinkLog.redacted(settings.endpoints.base))
        }
    }

    /// Retries every failed scan (a long press, `swiftwing queue retry --all`) and lifts an
    /// "unauthorized" hold so the key is tried again. Returns the ids queued again.
    @discardableResult
    public func retryFailed() async throws(StoreError) -> [UUID] {
        let (queue, clock) = (self.queue, self.clock)
        let ids = try await store.run { () throws(StoreError) in try queue.retryAllFailed(now: clock.now) }
        link.liftKeyHold()
        for id in ids { events(.scanChanged(scanID: id)) }
        wake()
        return ids
    }

    /// Retries one failed scan.
    @discardableResult
    public func retry(_ id: UUID) async throws(StoreError) -> ScanRecord {
        let (queue, clock) = (self.queue, self.clock)
        let record = try await store.run { () throws(StoreError) in try queue.retry(id, now: clock.now) }
        link.liftKeyHold()
        events(.scanChanged(scanID: id))
        wake()
        return record
    }

    /// Discards a scan a person gave up on: its work stops, its photo is deleted, a job it had at the
    /// backend is cancelled (best effort). A done scan cannot be discarded.
    @discardableResult
    public func discard(_ id: UUID) async throws(StoreError) -> ScanRecord {
        let running = slots.withLock { $0.inFlight[id] }
        running?.cancel()
        await running?.value
        let (queue, spool, clock) = (self.queue, self.spool, self.clock)
        let record = try await store.run { () throws(StoreError) in
            let record = try queue.markDiscarded(id, now: clock.now)
            try spool.remove(scan: id)
            return record
        }
        // A job id stored before ids were checked is not sent: it might aim at another path of the backend.
        if let jobID = record.jobID, jobIDProblem(jobID) == nil {
            let url = settings.endpoints.job(jobID)
            let bearer = settings.endpoints.bearer(
                for: url, apiKey: (try? settings.apiKey.read()) ?? nil, jobToken: nil, preferJobToken: false)
            let outcome = await client.delete(url, bearer: bearer)
            logger.info(
                "asked the backend to cancel the discarded scan's job",
                metadata: [
                    "scan_id": "\(record.idString)", "job_id": "\(jobID)", "outcome": "\(UplinkLog.summary(outcome))",
                ])
        }
        events(.scanChanged(scanID: id))
        return record
    }

    // MARK: Service

    public func run() async throws {
        logger.info(
            "uplink started",
            metadata: [
                "backend": "\(UplinkLog.redacted(settings.endpoints.base))", "concurrency": "\(settings.concurrency)",
                "api_key": "\(settings.apiKey.path == nil ? "none configured" : "from a credential file")",
            ])
        checkKeyAtStart()
        await journey.keepSpinesLeftBehind()
        await withDiscardingTaskGroup { group in
            group.addTask { await self.cleanupLoop() }
            group.addTask { await self.probeLoop() }
            await cancelWhenGracefulShutdown {
                await self.scheduleLoop()
            }
            group.cancelAll()
        }
        // Stop the scan tasks: their scans stay as persisted (uploading/analyzing) and resume on start.
        let running = slots.withLock { slots in Array(slots.inFlight.values) }
        for task in running { task.cancel() }
        for task in running { await task.value }
        logger.info("uplink stopped", metadata: ["jobs_interrupted": "\(running.count)"])
    }

    /// A key that is missing or unreadable holds uploads from the start, so `status` and the panel say
    /// why before the first press rather than after it.
    private func checkKeyAtStart() {
        do {
            _ = try settings.apiKey.read()
        } catch {
            logger.warning("uploads are held until the API key can be read", metadata: ["problem": "\(error)"])
            link.hold(keyError: error)
        }
    }

    private func scheduleLoop() async {
        while !Task.isCancelled {
            heartbeat()
            let now = clock.now
            link.liftKeyHoldIfReplaced { (try? settings.apiKey.read()) ?? nil }
            let uploadsHeld = link.read { tracker, now in tracker.uploadsHeld(at: now) }
            let (free, waiting) = slots.withLock { slots in
                slots.notBefore = slots.notBefore.filter { $0.value > now }
                return (settings.concurrency - slots.inFlight.count, slots.notBefore)
            }
            if free > 0 {
                let (queue, limit) = (self.queue, 4 * settings.concurrency + 16)
                let candidates =
                    (try? await store.run { () throws(StoreError) in
                        uploadsHeld
                            ? try queue.scans(in: [.analyzing]) : try queue.pending(dueBy: now, limit: limit)
                    }) ?? []
                var started = 0
                for scan in candidates where started < free && waiting[scan.id] == nil {
                    if start(scan) { started += 1 }
                }
            }
            let queue = self.queue
            let nextDue = (try? await store.run { () throws(StoreError) in try queue.earliestNextAttempt() }) ?? nil
            let pauseEnds = link.read { tracker, _ in tracker.gate.pausedUntil }
            var wakeAt = now.addingTimeInterval(settings.idleTick)
            for date in [nextDue, pauseEnds, waiting.values.min()].compactMap({ $0 }) where date > now {
                wakeAt = min(wakeAt, date)
            }
            await doorbell.wait(until: wakeAt.addingTimeInterval(0.01), on: clock)
        }
    }

    /// Starts a task for `scan` unless one runs for it; it holds a slot until it ends.
    private func start(_ scan: ScanRecord) -> Bool {
        slots.withLock { slots in
            guard slots.inFlight[scan.id] == nil, slots.inFlight.count < settings.concurrency else { return false }
            slots.inFlight[scan.id] = Task {
                await self.process(scan.id)
                self.slots.withLock { _ = $0.inFlight.removeValue(forKey: scan.id) }
                self.doorbell.ring()
            }
            return true
        }
    }

    private func process(_ id: UUID) async {
        do {
            try await journey.travel(id)
        } catch is CancellationError {
            // Stopping: the scan stays as persisted and resumes on the next start.
        } catch let deferred as ScanJourney.Deferred {
            slots.withLock { $0.notBefore[id] = deferred.until }
        } catch let error as StoreError {
            logger.error(
                "the uplink could not record a scan's progress; it is tried again in 30 s",
                metadata: [
                    "scan_id": "\(id.uuidString.lowercased())", "error": "\(error)",
                ])
            coolDown(id)
        } catch {
            logger.error(
                "unexpected uplink error",
                metadata: [
                    "scan_id": "\(id.uuidString.lowercased())", "error": "\(error)",
                ])
            coolDown(id)
        }
    }

    private func coolDown(_ id: UUID) {
        let until = clock.now.addingTimeInterval(30)
        slots.withLock { $0.notBefore[id] = until }
    }

    // MARK: Background loops

    /// Owed cleanups, retried while the backend is reachable.
    private func cleanupLoop() async {
        let queue = self.queue
        try? await clock.sleep(for: 1)
        while !Task.isCancelled {
            if case .online = link.connectivity {
                let owed =
                    (try? await store.run { () throws(StoreError) in try queue.pendingCleanups(limit: 50) }) ?? []
                for scan in owed where !Task.isCancelled { await journey.sendCleanup(scan) }
            }
            try? await clock.sleep(for: settings.cleanupInterval)
        }
    }

    /// While offline (or before the first answer), probe the backend so a return is noticed soon.
    private func probeLoop() async {
        while !Task.isCancelled {
            try? await clock.sleep(for: settings.probeInterval)
            switch link.connectivity {
            case .offline, .unknown:
                let outcome = await client.get(settings.endpoints.base, bearer: nil)
                if case .response = outcome { link.answered() }
            default:
                break
            }
        }
    }
}
