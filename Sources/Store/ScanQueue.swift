import Foundation
import GRDB

/// The persistent queue of scans: what the daemon's uploader works through and what the CLI lists.
///
/// A value over the shared ``AppDatabase``; `Sendable`, cheap to copy. Every method is one
/// transaction and blocks for the duration of the SQLite call (an fsync on commit): call the
/// writing ones from a thread or task that may block, not from a latency-critical path.
///
/// "Oldest first" means insertion order (SQLite's rowid), not wall time: a Pi without a real-time
/// clock may boot with a wrong clock.
public struct ScanQueue: Sendable {
    public let database: AppDatabase

    public init(database: AppDatabase) {
        self.database = database
    }

    /// The states the uploader still has work for (a `failed` scan only when ``ScanRecord/retryable``).
    public static let activeStates: [ScanState] = [.queued, .uploading, .analyzing]

    // MARK: Reading

    /// The scan with this id, or `nil`.
    public func scan(id: UUID) throws(StoreError) -> ScanRecord? {
        try database.read("nothing was read") { db in try Self.fetch(db, id) }
    }

    /// Scans in any of `states` (all states when `nil`), oldest first. Discarded scans are left out
    /// unless `includeDiscarded`.
    public func scans(in states: [ScanState]? = nil, includeDiscarded: Bool = false) throws(StoreError) -> [ScanRecord]
    {
        try database.read("nothing was read") { db in
            var request = ScanRecord.all()
            if let states { request = request.filter(states.contains(ScanRecord.Columns.state)) }
            if !includeDiscarded { request = request.filter(ScanRecord.Columns.discardedAt == nil) }
            return try request.order(Column.rowID).fetchAll(db)
        }
    }

    /// How many scans are in each state (every state present, zero included). Discarded scans are
    /// not counted (see ``discardedCount()``).
    public func counts() throws(StoreError) -> [ScanState: Int] {
        try database.read("nothing was read") { db in
            var counts = Dictionary(uniqueKeysWithValues: ScanState.allCases.map { ($0, 0) })
            let rows = try Row.fetchAll(
                db, sql: "SELECT state, count(*) AS n FROM scan WHERE discardedAt IS NULL GROUP BY state")
            for row in rows {
                if let state = ScanState(rawValue: row["state"]) { counts[state] = row["n"] }
            }
            return counts
        }
    }

    /// How many scans a person discarded.
    public func discardedCount() throws(StoreError) -> Int {
        try database.read("nothing was read") { db in
            try ScanRecord.filter(ScanRecord.Columns.discardedAt != nil).fetchCount(db)
        }
    }

    /// The work the uploader has, oldest first: `queued`, `uploading` and `analyzing` scans (after a
    /// restart these resume from their persisted state) and retryable `failed` ones. With `dueBy`,
    /// only scans whose ``ScanRecord/nextAttemptAt`` is `nil` or not after it.
    public func pending(dueBy now: Date? = nil, limit: Int? = nil) throws(StoreError) -> [ScanRecord] {
        try database.read("nothing was read") { db in
            let state = ScanRecord.Columns.state
            var request =
                ScanRecord
                .filter(ScanRecord.Columns.discardedAt == nil)
                .filter(
                    Self.activeStates.contains(state)
                        || (state == ScanState.failed && ScanRecord.Columns.retryable == true))
            if let now {
                let due = ScanRecord.Columns.nextAttemptAt
                request = request.filter(due == nil || due <= StorageTimestamp.databaseValue(now))
            }
            request = request.order(Column.rowID)
            if let limit { request = request.limit(limit) }
            return try request.fetchAll(db)
        }
    }

    // MARK: Writing

    /// Queues a scan whose photo is already durable in the spool. Returns the row as stored
    /// (state `queued`). Call it only after ``SpoolDirectory/write(jpeg:for:)`` returned: if this
    /// throws, the file stays in the spool and the next start's reconciliation re-queues it.
    ///
    /// With `attention`, the scan is kept for a person instead (`needs_attention`, `attention` its
    /// reason): a frame too poor to upload waits for ``retry(_:now:)``.
    @discardableResult
    public func enqueue(
        _ newScan: NewScan, attention: String? = nil, now: Date = Date()
    ) throws(StoreError) -> ScanRecord {
        var record = Self.record(for: newScan, now: now)
        if let attention {
            record.state = .needsAttention
            record.lastError = attention
        }
        return try database.write("the scan was not queued (its photo stays in the spool)") { db in
            try record.insert(db)
            return record
        }
    }

    /// The row a new scan starts as: `queued`.
    static func record(for newScan: NewScan, now: Date) -> ScanRecord {
        var record = ScanRecord(
            id: newScan.id, pressedAt: newScan.pressedAt, pressedWallAt: newScan.pressedWallAt,
            frameAt: newScan.frameAt, createdAt: now, updatedAt: now, state: .queued,
            imagePath: newScan.image.fileName, imageSize: newScan.image.size,
            width: newScan.width, height: newScan.height, thumbnailPath: newScan.thumbnail?.fileName)
        record.quality = newScan.quality
        record.barcodes = newScan.barcodes
        return record
    }

    /// Applies `change` to the scan in one transaction and returns the stored result. `updatedAt`
    /// is set to `now`; the schema checks the outcome (a `done` scan cannot change state, an
    /// `analyzing` one needs a job id…).
    @discardableResult
    public func update(
        _ id: UUID, now: Date = Date(), _ change: (inout ScanRecord) throws(StoreError) -> Void
    ) throws(StoreError) -> ScanRecord {
        try database.write("the scan was not updated") { db in
            guard var record = try Self.fetch(db, id) else { throw StoreError.scanNotFound(id) }
            let before = record
            try change(&record)
            if record.state != before.state, before.state == .done {
                throw StoreError.invalidTransition(id: id, from: before.state, to: record.state)
            }
            record.updatedAt = now
            try record.updateChanges(db, from: before)
            return record
        }
    }

    /// Sets the state, and `lastError` when given (the other fields stay).
    @discardableResult
    public func updateState(
        _ id: UUID, to state: ScanState, lastError: String? = nil, now: Date = Date()
    ) throws(StoreError) -> ScanRecord {
        try update(id, now: now) { record in
            record.state = state
            if let lastError { record.lastError = lastError }
        }
    }

    /// An upload attempt starts: `uploading`, `attempts + 1`, the previous failure cleared.
    @discardableResult
    public func markUploading(_ id: UUID, now: Date = Date()) throws(StoreError) -> ScanRecord {
        try update(id, now: now) { record in
            record.state = .uploading
            record.attempts += 1
            record.nextAttemptAt = nil
            record.retryable = nil
        }
    }

    /// The backend accepted the upload (202): keep the job so a restart follows it instead of
    /// uploading again. State `analyzing`.
    @discardableResult
    public func recordJob(
        _ id: UUID, jobID: String, streamURL: String?, statusURL: String?, jobToken: String?, now: Date = Date()
    ) throws(StoreError) -> ScanRecord {
        try update(id, now: now) { record in
            record.state = .analyzing
            record.jobID = jobID
            record.streamURL = streamURL
            record.statusURL = statusURL
            record.jobToken = jobToken
            record.progress = 0
            record.lastError = nil
        }
    }

    /// A progress event: `progress` clamped to 0…1 (convert 0–100 before), and the event id for resuming.
    @discardableResult
    public func recordProgress(
        _ id: UUID, progress: Double, lastEventID: String? = nil, now: Date = Date()
    ) throws(StoreError) -> ScanRecord {
        try update(id, now: now) { record in
            record.progress = progress.isFinite ? min(max(progress, 0), 1) : record.progress
            if let lastEventID { record.lastEventID = lastEventID }
        }
    }

    /// The attempt failed. A retryable failure is picked up again by ``pending(dueBy:limit:)`` from
    /// `nextAttemptAt`; a final one stays `failed` for a person to see.
    @discardableResult
    public func markFailed(
        _ id: UUID, reason: String, retryable: Bool, nextAttemptAt: Date? = nil, now: Date = Date()
    ) throws(StoreError) -> ScanRecord {
        try update(id, now: now) { record in
            record.state = .failed
            record.lastError = reason
            record.retryable = retryable
            record.nextAttemptAt = retryable ? nextAttemptAt : nil
        }
    }

    /// A person must look at the scan (`reason` says why and what to do).
    @discardableResult
    public func markNeedsAttention(_ id: UUID, reason: String, now: Date = Date()) throws(StoreError) -> ScanRecord {
        try update(id, now: now) { record in
            record.state = .needsAttention
            record.lastError = reason
            record.retryable = nil
        }
    }

    /// The scan is discarded by a person: it leaves every list of work (its row stays, for the
    /// record). Returns it, so the caller can delete its spool files. A done scan cannot be discarded.
    @discardableResult
    public func markDiscarded(_ id: UUID, now: Date = Date()) throws(StoreError) -> ScanRecord {
        try update(id, now: now) { record throws(StoreError) in
            if record.state == .done { throw StoreError.scanAlreadyDone(id) }
            if record.discardedAt == nil { record.discardedAt = now }
            record.jobToken = nil
        }
    }

    // MARK: The uplink

    /// A transient failure (offline, 5xx, timeout…): back to `queued`, tried again from
    /// `notBefore`. The scan is never dropped; `reason` is what `swiftwing queue` shows.
    @discardableResult
    public func requeue(_ id: UUID, reason: String, notBefore: Date?, now: Date = Date()) throws(StoreError)
        -> ScanRecord
    {
        try update(id, now: now) { record in Self.wait(&record, reason: reason, notBefore: notBefore) }
    }

    /// The backend failed or lost the job itself (a retryable `failed` event, results expired): the
    /// scan is sent again as a *new* job, under a new `Idempotency-Key` (the server would answer
    /// the old key with the old job). Job fields are cleared; `reason` is kept for the record.
    @discardableResult
    public func restartJob(_ id: UUID, reason: String, notBefore: Date?, now: Date = Date()) throws(StoreError)
        -> ScanRecord
    {
        try update(id, now: now) { record in
            Self.wait(&record, reason: reason, notBefore: notBefore)
            Self.startOver(&record)
        }
    }

    /// A person asks for a failed scan to be tried again (`swiftwing queue retry`, a long press).
    /// `failed` scans qualify, and scans kept for a poor frame (they are then uploaded despite
    /// their quality); one whose job failed at the server is re-sent as a new job.
    @discardableResult
    public func retry(_ id: UUID, now: Date = Date()) throws(StoreError) -> ScanRecord {
        try update(id, now: now) { record throws(StoreError) in
            guard record.discardedAt == nil else { throw StoreError.scanDiscarded(id) }
            let poorFrame = record.state == .needsAttention && record.quality?.isPoor == true
            guard record.state == .failed || poorFrame else {
                throw StoreError.notRetryable(id: id, state: record.state)
            }
            if poorFrame { record.uploadDespiteQuality = true }
            if record.jobID != nil { Self.startOver(&record) }
            Self.wait(
                &record, reason: "retried by a person after: " + (record.lastError ?? "a failure"), notBefore: nil)
        }
    }

    /// ``retry(_:now:)`` for every failed scan; returns their ids, oldest first.
    @discardableResult
    public func retryAllFailed(now: Date = Date()) throws(StoreError) -> [UUID] {
        let failed = try scans(in: [.failed])
        var retried: [UUID] = []
        for scan in failed {
            try retry(scan.id, now: now)
            retried.append(scan.id)
        }
        return retried
    }

    /// Makes every waiting scan due now (the network came back: start a new round at once).
    @discardableResult
    public func makeWaitingScansDue(now: Date = Date()) throws(StoreError) -> Int {
        try database.write("nothing was changed") { db in
            try ScanRecord
                .filter(ScanRecord.Columns.discardedAt == nil)
                .filter(ScanRecord.Columns.state == ScanState.queued)
                .filter(ScanRecord.Columns.nextAttemptAt != nil)
                .updateAll(db, ScanRecord.Columns.nextAttemptAt.set(to: nil))
        }
    }

    /// When the earliest queued scan that is waiting (for backoff or the next round) becomes due.
    public func earliestNextAttempt() throws(StoreError) -> Date? {
        try database.read("nothing was read") { db in
            let earliest = try DatabaseValue.fetchOne(
                db,
                ScanRecord
                    .select(min(ScanRecord.Columns.nextAttemptAt))
                    .filter(ScanRecord.Columns.discardedAt == nil)
                    .filter(ScanRecord.Columns.state == ScanState.queued))
            return earliest.flatMap(StorageTimestamp.date(from:))
        }
    }

    /// Done scans that still owe the backend a cleanup, oldest first.
    public func pendingCleanups(limit: Int? = nil) throws(StoreError) -> [ScanRecord] {
        try database.read("nothing was read") { db in
            var request =
                ScanRecord
                .filter(ScanRecord.Columns.state == ScanState.done)
                .filter(ScanRecord.Columns.cleanupPending == true)
                .order(Column.rowID)
            if let limit { request = request.limit(limit) }
            return try request.fetchAll(db)
        }
    }

    /// The backend acknowledged the cleanup (2xx, or 404: already clean); or a failed attempt when
    /// `acknowledged` is false (counted, retried later).
    @discardableResult
    public func recordCleanup(_ id: UUID, acknowledged: Bool, now: Date = Date()) throws(StoreError) -> ScanRecord {
        try update(id, now: now) { record in
            if acknowledged {
                record.cleanupPending = false
            } else {
                record.cleanupAttempts += 1
            }
        }
    }

    // MARK: Helpers

    /// Back to `queued`, due at `notBefore` (now when `nil`), saying why it waits.
    static func wait(_ record: inout ScanRecord, reason: String, notBefore: Date?) {
        record.state = .queued
        record.lastError = reason
        record.retryable = true
        record.nextAttemptAt = notBefore
    }

    /// A new job under a new `Idempotency-Key`: the old job's fields are forgotten.
    static func startOver(_ record: inout ScanRecord) {
        record.uploadKey = UUID().uuidString.lowercased()
        record.jobID = nil
        record.streamURL = nil
        record.statusURL = nil
        record.jobToken = nil
        record.lastEventID = nil
        record.progress = 0
    }

    static func fetch(_ db: Database, _ id: UUID) throws -> ScanRecord? {
        try ScanRecord.fetchOne(db, key: id.uuidString.lowercased())
    }
}
