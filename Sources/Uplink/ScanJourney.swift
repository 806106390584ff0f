import Foundation
import HTTPEngine
import Imaging
import Logging
import Store
import SwiftWingCore
import Synchronization
import Talaria

/// One scan's way to the library: upload (docs/protocol.md §1), follow the job by its stream or by
/// polling (§2, §4, in JobFollowing.swift), commit the books with the scan's `done`, keep each
/// book's spine cut from the photo, delete the photo, send the cleanup. Every step is persisted
/// before the next one starts, so a journey cut anywhere continues from the queue on the next start.
struct ScanJourney: Sendable {
    let settings: UplinkSettings
    let client: TalariaClient
    let queue: ScanQueue
    let database: AppDatabase
    let spool: SpoolDirectory
    let store: StoreLane
    /// Cuts the landed books' spines from the photo (a decode and a few small encodes): a thread of its own, so
    /// neither the cooperative pool nor the queue's commits on ``store`` wait for it.
    let cropper: BlockingThread
    let link: BackendLink
    let clock: UplinkTime
    let logger: Logger
    let events: @Sendable (UplinkEvent) -> Void
    /// Jobs the backend answered 404 for, shared by every journey: a scan waits for them outside its slot.
    let missingJobs = MissingJobs()

    /// The scan waits, without holding an upload slot, until `until`: the backend does not know
    /// its job (yet), which it may have lost. The scheduler picks the scan again then.
    struct Deferred: Error {
        let until: Date
    }

    /// Takes the scan `id` as far as it goes now: to a terminal state, or back to the queue with
    /// its next attempt. Throws `CancellationError` when stopped (the scan stays as persisted),
    /// ``Deferred`` when it waits outside its slot, and the Store's errors.
    func travel(_ id: UUID) async throws {
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
    }

    // MARK: Upload (docs/protocol.md §1)

    private func upload(_ scan: ScanRecord) async throws {
        let (queue, spool, clock) = (self.queue, self.spool, self.clock)
        var attempt = 1
        while true {
            try Task.checkCancellation()
            let (pausedUntil, keyRefused) = link.read { tracker, now in
                (tracker.pausedUntil(at: now), tracker.holdsForKey)
            }
            if let until = pausedUntil {
                try await record(scan.id) { () throws(StoreError) in
                    try queue.requeue(
                        scan.id, reason: "waiting: the backend asked the device to wait", notBefore: until,
                        now: clock.now)
                }
                return
            }
            if keyRefused { return }

            let photo: SpooledImage
            do {
                photo = try await store.run { () throws(StoreError) in try spool.image(scan.imagePath) }
            } catch {
                try await photoUnreadable(scan, error)
                return
            }
            guard photo.size <= ScanUploadRequest.maximumImageBytes else {
                let reason =
                    "the photo is \(photo.size) bytes, over the backend's "
                    + "\(ScanUploadRequest.maximumImageBytes)-byte limit; it is kept: lower imaging.jpeg_quality or "
                    + "imaging.max_long_edge, then `swiftwing queue retry`"
                try await fail(scan.id, reason: reason)
                return
            }
            let apiKey: String?
            do {
                apiKey = try settings.apiKey.read()
            } catch {
                link.hold(keyError: error)
                return
            }

            let uploading = try await store.run { () throws(StoreError) in
                try queue.markUploading(scan.id, now: clock.now)
            }
            events(.scanChanged(scanID: scan.id))
            let started = clock.now
            let outcome: TransferOutcome
            do {
                outcome = try await client.upload(
                    idempotencyKey: uploading.idempotencyKey, photoPath: photo.path, apiKey: apiKey)
            } catch {
                try await photoUnreadable(scan, error)
                return
            }
            try Task.checkCancellation()
            let finished = clock.now
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
                    link.answered()
                    logger.info(
                        "scan uploaded",
                        metadata: [
                            "scan_id": "\(scan.idString)", "job_id": "\(accepted.jobID)", "status": "\(status)",
                            "bytes": "\(photo.size)", "ms": "\(clock.milliseconds(since: started))",
                            "follow": "\(accepted.needsPolling ? "polling" : "stream")",
                        ])
                    // The job is durable before its stream opens: a restart follows it, never re-sends.
                    let job = try await store.run { () throws(StoreError) in
                        try queue.recordJob(
                            scan.id, jobID: accepted.jobID, streamURL: accepted.streamURL?.absoluteString,
                            statusURL: accepted.statusURL.absoluteString, jobToken: accepted.streamToken,
                            now: clock.now)
                    }
                    events(.scanChanged(scanID: scan.id))
                    if let refusal = accepted.refusal {
                        try await fail(scan.id, reason: "job \(accepted.jobID) is not followed: " + refusal)
                        return
                    }
                    try await follow(job)
                    return
                }
            }
            let reason = verdict.reason ?? "retrying"
            link.note(outcome, verdict: verdict)
            switch settings.retry.decide(after: verdict, attemptInRound: attempt, now: finished) {
            case .done:
                return
            case .retry(let at, let next):
                logger.notice(
                    "upload failed; retrying",
                    metadata: [
                        "scan_id": "\(scan.idString)", "attempt": "\(attempt)", "reason": "\(verdict.reason ?? "")",
                    ])
                try await record(scan.id) { () throws(StoreError) in
                    try queue.requeue(scan.id, reason: reason, notBefore: at, now: clock.now)
                }
                try await clock.sleep(until: at)
                attempt = next
            case .nextRound(let notBefore, let reason):
                let roundStart = max(notBefore, settings.retry.nextRoundStart(after: finished))
                logger.notice(
                    "upload round over; the scan waits for the network or the next round",
                    metadata: [
                        "scan_id": "\(scan.idString)", "next_round": "\(roundStart)", "reason": "\(reason)",
                    ])
                try await record(scan.id) { () throws(StoreError) in
                    try queue.requeue(scan.id, reason: reason, notBefore: roundStart, now: clock.now)
                }
                return
            case .pauseAll(let until, let reason, let busy):
                link.pause(until: until, busy: busy, reason: reason)
                try await record(scan.id) { () throws(StoreError) in
                    try queue.requeue(scan.id, reason: reason, notBefore: until, now: clock.now)
                }
                return
            case .fail(let reason, let unauthorized):
                if unauthorized { link.refuse(key: apiKey ?? "", reason: reason) }
                try await fail(scan.id, reason: reason)
                return
            }
        }
    }

    /// The photo is gone or cannot be read whole: a person must look (sending it again cannot help).
    private func photoUnreadable(_ scan: ScanRecord, _ error: any Error) async throws {
        let (queue, clock) = (self.queue, self.clock)
        try await record(scan.id) { () throws(StoreError) in
            try queue.markNeedsAttention(
                scan.id,
                reason:
                    "its photo cannot be read (\(error)); discard it with `swiftwing queue discard \(scan.idString)`",
                now: clock.now)
        }
    }

    // MARK: Terminal states

    /// Books, spines to check (docs/protocol.md §6) and `done` in one transaction; then the spines are cut from the
    /// photo (the books' pictures and the spines to check's), and only then the photo is deleted and the cleanup
    /// sent. A crash after the transaction loses nothing read: the photo is kept until the cut is done
    /// (``keepSpinesLeftBehind()``).
    func complete(_ scan: ScanRecord, jobID: String, books: [TalariaBook], spines: [TalariaSpine] = []) async throws {
        if let reason = TalariaLimits.violation(in: books) ?? TalariaSpine.violation(in: spines) {
            try await overLimit(scan, jobID: jobID, reason: reason)
            return
        }
        let database = self.database
        let now = clock.now
        let landing = TalariaBook.deduplicated(books)
        let records = landing.map { $0.record(scanID: scan.id, now: now) }
        let toCheck = spines.map(\.newSpineToCheck)
        let (done, saved, landedSpines) = try await store.run { () throws(StoreError) in
            try database.completeScanMatchingTitles(scan.id, books: records, spines: toCheck, jobID: jobID, now: now)
        }
        logger.info(
            "books landed in the library",
            metadata: [
                "scan_id": "\(scan.idString)", "job_id": "\(jobID)", "books": "\(saved.count)",
                "spines_to_check": "\(landedSpines.count)",
                "titles": "\(saved.map(\.title).joined(separator: " | "))",
            ])
        for book in saved {
            logger.info(
                "book in the library",
                metadata: [
                    "scan_id": "\(scan.idString)", "job_id": "\(jobID)",
                    "isbn": "\(book.isbn13 ?? book.isbn10 ?? "none")",
                    "title": "\(book.title)",
                ])
        }
        events(.booksLanded(scanID: scan.id, books: saved))
        // The books saved line up with `landing` only when they landed now: a scan found done already returned the
        // books of its first landing, which kept their spines then.
        if scan.state != .done, saved.count == landing.count {
            let wanted = zip(landing, saved).compactMap { book, record in
                book.boundingBox.flatMap { box in record.id.map { (id: $0, box: box) } }
            }
            let spineBoxes = landedSpines.compactMap { spine in spine.box.map { (id: spine.id, box: $0) } }
            await keepSpines(scan, jobID: jobID, of: wanted, toCheck: spineBoxes)
        }
        await removePhoto(of: scan)
        if done.cleanupPending {
            await sendCleanup(done)
        }
    }

    private func removePhoto(of scan: ScanRecord) async {
        let spool = self.spool
        do {
            try await store.run { () throws(StoreError) in try spool.remove(scan: scan.id) }
        } catch {
            // The next start's reconciliation removes the photo of a done scan.
            logger.warning(
                "the photo of a done scan was not deleted",
                metadata: [
                    "scan_id": "\(scan.idString)", "error": "\(error)",
                ])
        }
    }

    /// Spines the device did not cut before it stopped: the books of a done scan landed, and the start's
    /// reconciliation kept its photo for this. Cut now, then the photo is removed, whether or not a spine came out
    /// of it, so a photo that gives none is not kept for ever.
    func keepSpinesLeftBehind() async {
        let (database, queue, spool) = (self.database, self.queue, self.spool)
        typealias Left = (scan: ScanRecord, books: [(id: Int64, rawJSON: String)], spines: [(id: Int64, box: SpineBox)])
        let scans: [Left]
        do {
            scans = try await store.run { () throws(StoreError) in
                var found: [Left] = []
                for id in try database.scansAwaitingSpines().sorted(by: { $0.uuidString < $1.uuidString }) {
                    guard let scan = try queue.scan(id: id),
                        FileManager.default.fileExists(atPath: spool.path(of: scan.imagePath))
                    else { continue }
                    found.append(
                        (
                            scan, try database.booksAwaitingSpines(scanID: id),
                            try database.spinesAwaitingCrop(scanID: id)
                        ))
                }
                return found
            }
        } catch {
            logger.warning(
                "the spines left to cut were not looked up; those books keep their title tiles",
                metadata: ["error": "\(error)"])
            return
        }
        for (scan, books, spines) in scans {
            let wanted = books.compactMap { book -> (id: Int64, box: BoundingBox)? in
                let value = try? JSONValue.parse(book.rawJSON, what: "a book's JSON")
                return BoundingBox(json: value?["boundingBox"]).map { (book.id, $0) }
            }
            await keepSpines(scan, jobID: scan.jobID ?? "none", of: wanted, toCheck: spines)
            await removePhoto(of: scan)
        }
    }

    /// Each landed book with a bounding box keeps its spine, cut from the photo that is about to be deleted, and so
    /// does each spine to check: one decode of the photo for both. Best effort for the books (they are committed
    /// already: a photo that cannot be read, a box that gives no crop or a failed write leaves them with their
    /// title tiles, and is only logged). A spine to check whose box gives no crop is settled without one; one not
    /// cut because the photo could not be read stays pending, its photo kept for the next start while it exists.
    private func keepSpines(
        _ scan: ScanRecord, jobID: String, of books: [(id: Int64, box: BoundingBox)],
        toCheck spines: [(id: Int64, box: SpineBox)] = []
    ) async {
        let wanted = books.map { book in
            (
                id: book.id,
                box: SpineCrop.Box(x: book.box.x, y: book.box.y, width: book.box.width, height: book.box.height)
            )
        }
        let spineBoxes = spines.map {
            SpineCrop.Box(x: $0.box.x, y: $0.box.y, width: $0.box.width, height: $0.box.height)
        }
        guard !wanted.isEmpty || !spineBoxes.isEmpty else { return }
        let (database, now, started) = (self.database, clock.now, clock.now)
        let path = spool.path(of: scan.imagePath)
        do {
            let (covers, pictures, without) = try await cropper.runIfActive {
                () throws -> ([BookCover], [SpinePicture], [Int64]) in
                let crops = try SpineCrop.crops(photoAt: path, boxes: wanted.map(\.box) + spineBoxes)
                let covers = zip(wanted, crops).compactMap { book, crop in
                    crop.map { BookCover(bookID: book.id, jpeg: $0.jpeg, width: $0.width, height: $0.height) }
                }
                var pictures: [SpinePicture] = []
                var without: [Int64] = []
                for (spine, crop) in zip(spines, crops.dropFirst(wanted.count)) {
                    if let crop {
                        pictures.append(
                            SpinePicture(spineID: spine.id, jpeg: crop.jpeg, width: crop.width, height: crop.height))
                    } else {
                        without.append(spine.id)
                    }
                }
                return (covers, pictures, without)
            }
            let (kept, keptSpines) = try await store.run { () throws(StoreError) in
                (try database.saveBookCovers(covers, now: now), try database.saveSpineCrops(pictures, without: without))
            }
            logger.info(
                "the books' spines were kept",
                metadata: [
                    "scan_id": "\(scan.idString)", "job_id": "\(jobID)", "spines": "\(kept.count)",
                    "boxes": "\(wanted.count)", "spines_to_check": "\(keptSpines)",
                    "bytes": "\((covers.reduce(0) { $0 + $1.jpeg.count }) + pictures.reduce(0) { $0 + $1.jpeg.count })",
                    "ms": "\(clock.milliseconds(since: started))",
                ])
        } catch {
            logger.warning(
                "the books' spines were not kept; the books are in the library with their title tiles",
                metadata: ["scan_id": "\(scan.idString)", "job_id": "\(jobID)", "error": "\(error)"])
        }
    }

    /// `DELETE …/cleanup`: 2xx or 404 (already clean) settles it; anything else is retried later by
    /// the service's cleanup loop. Never throws, never blocks the library.
    func sendCleanup(_ scan: ScanRecord) async {
        guard let jobID = scan.jobID else { return }
        let (queue, clock) = (self.queue, self.clock)
        // A job id stored before ids were checked is not sent (it might aim at another path): nothing is owed.
        guard jobIDProblem(jobID) == nil else {
            logger.warning(
                "no cleanup for a job id that is not one path segment",
                metadata: [
                    "scan_id": "\(scan.idString)", "job_id": "\(jobID.debugDescription.prefix(80))",
                ])
            _ = try? await store.run { () throws(StoreError) in
                try queue.recordCleanup(scan.id, acknowledged: true, now: clock.now)
            }
            return
        }
        let url = settings.endpoints.cleanup(jobID)
        let bearer = settings.endpoints.bearer(
            for: url, apiKey: (try? settings.apiKey.read()) ?? nil, jobToken: nil, preferJobToken: false)
        let outcome = await client.delete(url, bearer: bearer)
        let acknowledged: Bool
        if case .response(let status, _, _) = outcome, (200..<300).contains(status) || status == 404 {
            acknowledged = true
        } else {
            acknowledged = false
        }
        do {
            try await store.run { () throws(StoreError) in
                _ = try queue.recordCleanup(scan.id, acknowledged: acknowledged, now: clock.now)
            }
        } catch {
            logger.warning(
                "a cleanup's outcome was not recorded",
                metadata: [
                    "scan_id": "\(scan.idString)", "job_id": "\(jobID)", "error": "\(error)",
                ])
        }
        if !acknowledged {
            logger.notice(
                "the backend's cleanup failed; retried later",
                metadata: [
                    "scan_id": "\(scan.idString)", "job_id": "\(jobID)", "outcome": "\(UplinkLog.summary(outcome))",
                ])
        }
    }

    func jobFailed(_ scan: ScanRecord, jobID: String, failure: JobFailure) async throws {
        if failure.retryable, !failure.isCanceled {
            try await restart(scan, reason: "the backend failed job \(jobID) (\(failure)); sent again as a new job")
        } else {
            let reason =
                failure.isCanceled
                ? "job \(jobID) was cancelled at the backend; the photo is kept: "
                    + "`swiftwing queue retry \(scan.idString)` sends it again"
                : "the backend could not recognise the photo (\(failure)); it is kept: `swiftwing queue retry "
                    + "\(scan.idString)` or `swiftwing queue discard \(scan.idString)`"
            try await fail(scan.id, reason: reason)
        }
    }

    /// The job is lost or failed retryably: the scan goes back to the queue to be sent as a new job.
    func restart(_ scan: ScanRecord, reason: String) async throws {
        let (queue, now) = (self.queue, clock.now)
        let notBefore = now.addingTimeInterval(settings.retry.delay(afterFailure: 1))
        logger.notice(
            "the job is sent again as a new one",
            metadata: [
                "scan_id": "\(scan.idString)", "reason": "\(reason)",
            ])
        try await record(scan.id) { () throws(StoreError) in
            try queue.restartJob(scan.id, reason: reason, notBefore: notBefore, now: now)
        }
    }

    /// The job's result is more than one photo may give (``TalariaLimits``): nothing is committed, the
    /// photo stays, and a person decides.
    func overLimit(_ scan: ScanRecord, jobID: String, reason: String) async throws {
        let (queue, now) = (self.queue, clock.now)
        try await record(scan.id) { () throws(StoreError) in
            try queue.markNeedsAttention(scan.id, reason: "job \(jobID): " + reason, now: now)
        }
        logger.error(
            "the job's result was refused; its photo is kept",
            metadata: [
                "scan_id": "\(scan.idString)", "job_id": "\(jobID)", "reason": "\(reason)",
            ])
    }

    func fail(_ id: UUID, reason: String) async throws {
        let (queue, now) = (self.queue, clock.now)
        try await record(id) { () throws(StoreError) in
            try queue.markFailed(id, reason: reason, retryable: false, now: now)
        }
        logger.error(
            "scan failed; its photo is kept",
            metadata: [
                "scan_id": "\(id.uuidString.lowercased())", "reason": "\(reason)",
            ])
        events(.scanFailed(scanID: id, reason: reason))
    }

    func record(_ id: UUID, _ change: @escaping @Sendable () throws(StoreError) -> ScanRecord) async throws {
        _ = try await store.run(change)
        events(.scanChanged(scanID: id))
    }
}

/// When the backend first answered 404 for each scan's job, so the wait for a lost job spans the
/// checks made from different slots (in memory: after a restart the wait starts again).
final class MissingJobs: Sendable {
    private let since = Mutex<[UUID: Date]>([:])

    /// When `scan`'s job was first found missing (`now` if this is the first time).
    func missing(_ scan: UUID, at now: Date) -> Date {
        since.withLock { since in
            let first = since[scan] ?? now
            since[scan] = first
            return first
        }
    }

    /// The job answered (or the scan moved on): the wait starts again at the next 404.
    func found(_ scan: UUID) {
        since.withLock { _ = $0.removeValue(forKey: scan) }
    }
}
