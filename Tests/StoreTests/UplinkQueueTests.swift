import Foundation
import GRDB
import Testing

@testable import Store

@Suite("Scan queue: the uplink's transitions (v2)")
struct UplinkQueueTests {
    @Test(
        "a retried scan whose job failed at the server gets a new Idempotency-Key and no job; one that never had a job keeps its id"
    )
    func retryKeys() throws {
        let database = try AppDatabase.inMemory()
        let queue = database.queue
        let neverSent = try queue.enqueue(newScan())
        let sent = try queue.enqueue(newScan())
        #expect(sent.idempotencyKey == sent.idString)

        try queue.markUploading(sent.id)
        try queue.recordJob(sent.id, jobID: "job-1", streamURL: "https://b/s", statusURL: nil, jobToken: "secret")
        try queue.markFailed(sent.id, reason: "the backend could not read the spines", retryable: false)
        try queue.markFailed(neverSent.id, reason: "HTTP 413", retryable: false)

        let retried = try #require(try queue.retryAllFailed().count == 2 ? queue.scan(id: sent.id) : nil)
        #expect(retried.state == .queued)
        #expect(retried.jobID == nil && retried.jobToken == nil && retried.streamURL == nil)
        #expect(retried.idempotencyKey != retried.idString)
        #expect(UUID(uuidString: retried.idempotencyKey) != nil)
        #expect(retried.lastError?.contains("the backend could not read the spines") == true)

        let plain = try #require(try queue.scan(id: neverSent.id))
        #expect(plain.state == .queued)
        #expect(plain.idempotencyKey == plain.idString)
        // Only failed scans can be retried by hand.
        #expect(throws: StoreError.notRetryable(id: plain.id, state: .queued)) { try queue.retry(plain.id) }
    }

    @Test("restartJob clears the job, takes a fresh key each time, and keeps the keys unique")
    func restartJob() throws {
        let database = try AppDatabase.inMemory()
        let queue = database.queue
        let scan = try queue.enqueue(newScan())
        try queue.recordJob(scan.id, jobID: "job-a", streamURL: nil, statusURL: nil, jobToken: nil)
        let first = try queue.restartJob(scan.id, reason: "lost", notBefore: nil)
        try queue.recordJob(scan.id, jobID: "job-b", streamURL: nil, statusURL: nil, jobToken: nil)
        let second = try queue.restartJob(scan.id, reason: "lost again", notBefore: Date(timeIntervalSinceNow: 5))
        #expect(first.uploadKey != nil && second.uploadKey != nil && first.uploadKey != second.uploadKey)
        #expect(second.jobID == nil && second.state == .queued && second.nextAttemptAt != nil)
        // The schema keeps keys unique: no two scans can share a job's Idempotency-Key.
        let other = try queue.enqueue(newScan())
        #expect(throws: StoreError.self) {
            try queue.update(other.id) { $0.uploadKey = second.uploadKey }
        }
    }

    @Test("completing a scan with a job owes a cleanup until it is acknowledged; failures are counted")
    func cleanupOwed() throws {
        let database = try AppDatabase.inMemory()
        let queue = database.queue
        let withJob = try queue.enqueue(newScan())
        let withoutJob = try queue.enqueue(newScan())
        try queue.recordJob(withJob.id, jobID: "job-1", streamURL: nil, statusURL: nil, jobToken: "t")
        let done = try database.completeScanMatchingTitles(withJob.id, books: []).scan
        #expect(done.cleanupPending)
        #expect(try database.completeScan(withoutJob.id, books: []).scan.cleanupPending == false)
        #expect(try queue.pendingCleanups().map(\.id) == [withJob.id])

        try queue.recordCleanup(withJob.id, acknowledged: false)
        #expect(try queue.scan(id: withJob.id)?.cleanupAttempts == 1)
        #expect(try queue.pendingCleanups().count == 1)
        try queue.recordCleanup(withJob.id, acknowledged: true)
        #expect(try queue.pendingCleanups().isEmpty)
    }

    @Test("the schema refuses a cleanup owed by a scan that is not done or had no job")
    func cleanupNeedsDoneJob() throws {
        let database = try AppDatabase.inMemory()
        let queue = database.queue
        let scan = try queue.enqueue(newScan())
        #expect(throws: StoreError.self) { try queue.update(scan.id) { $0.cleanupPending = true } }
        try queue.recordJob(scan.id, jobID: "job-1", streamURL: nil, statusURL: nil, jobToken: nil)
        #expect(throws: StoreError.self) { try queue.update(scan.id) { $0.cleanupPending = true } }
    }

    @Test("a new round makes every waiting scan due at once; earliestNextAttempt finds the next one")
    func waitingScansDue() throws {
        let database = try AppDatabase.inMemory()
        let queue = database.queue
        let later = Date(timeIntervalSinceNow: 600)
        let soon = Date(timeIntervalSinceNow: 60)
        let a = try queue.enqueue(newScan())
        let b = try queue.enqueue(newScan())
        try queue.requeue(a.id, reason: "offline", notBefore: later)
        try queue.requeue(b.id, reason: "offline", notBefore: soon)
        #expect(try queue.pending(dueBy: Date()).isEmpty)
        let earliest = try #require(try queue.earliestNextAttempt())
        #expect(abs(earliest.timeIntervalSince(soon)) < 0.01)
        #expect(try queue.makeWaitingScansDue() == 2)
        #expect(try queue.pending(dueBy: Date()).map(\.id) == [a.id, b.id])
        #expect(try queue.earliestNextAttempt() == nil)
    }

    @Test("a database made by v1 migrates to v2 with its scans intact")
    func migratesFromV1() throws {
        let queue = try DatabaseQueue()
        try AppDatabase.migrator.migrate(queue, upTo: "v1")
        try queue.write { db in
            try db.execute(
                sql: """
                    INSERT INTO scan (id, pressedAt, pressedWallAt, createdAt, updatedAt, imagePath, imageSize, width, height)
                    VALUES ('5e1f0c4a-0000-4000-8000-000000000001', 1, '2026-01-01 00:00:00', '2026-01-01 00:00:00',
                            '2026-01-01 00:00:00', 'a.jpg', 10, 64, 48)
                    """)
        }
        try AppDatabase.migrator.migrate(queue)
        let record = try queue.read { try ScanRecord.fetchOne($0) }
        #expect(record?.cleanupPending == false)
        #expect(record?.uploadKey == nil)
        #expect(record?.idempotencyKey == "5e1f0c4a-0000-4000-8000-000000000001")
    }
}
