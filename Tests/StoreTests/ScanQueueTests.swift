import Foundation
import GRDB
import SwiftWingCore
import Testing

@testable import Store

@Suite("Scan queue")
struct ScanQueueTests {
    @Test("enqueue stores a queued scan with its fields")
    func enqueue() throws {
        let database = try AppDatabase.inMemory()
        let id = UUID()
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let scan = try database.queue.enqueue(
            NewScan(
                id: id, pressedAt: MonotonicInstant(nanoseconds: 123_456_789_012), pressedWallAt: now,
                frameAt: MonotonicInstant(nanoseconds: 123_500_000_000),
                image: SpooledImage(fileName: "x.jpg", path: "/s/x.jpg", size: 4321), width: 1920, height: 1080,
                thumbnail: SpooledImage(fileName: "x.thumb.jpg", path: "/s/x.thumb.jpg", size: 99)),
            now: now)
        let stored = try #require(try database.queue.scan(id: id))
        #expect(stored == scan)
        #expect(stored.state == .queued)
        #expect(stored.attempts == 0)
        #expect(stored.pressedAt.nanoseconds == 123_456_789_012)
        #expect(stored.frameAt?.nanoseconds == 123_500_000_000)
        #expect(stored.imagePath == "x.jpg")
        #expect(stored.thumbnailPath == "x.thumb.jpg")
        #expect(stored.createdAt == now)
        // The id is stored as the lowercase string sent as Idempotency-Key.
        let raw = try database.writer.read { try String.fetchOne($0, sql: "SELECT id FROM scan") }
        #expect(raw == id.uuidString.lowercased())
        #expect(try database.queue.scan(id: UUID()) == nil)
    }

    @Test("pending is oldest first, skips done, discarded and final failures, and honours nextAttemptAt")
    func pendingOrderAndCounts() throws {
        let database = try AppDatabase.inMemory()
        let queue = database.queue
        // Wall clock going backwards (no RTC) must not reorder the queue.
        let ids = try (0..<6).map { i in
            try queue.enqueue(newScan(), now: Date(timeIntervalSince1970: 2_000_000_000 - Double(i) * 60)).id
        }
        let now = Date(timeIntervalSince1970: 2_000_000_000)
        try queue.markUploading(ids[1])
        try queue.recordJob(ids[1], jobID: "j1", streamURL: nil, statusURL: nil, jobToken: nil)
        _ = try database.completeScan(ids[2], books: [])
        try queue.markFailed(ids[3], reason: "429", retryable: true, nextAttemptAt: now.addingTimeInterval(60))
        try queue.markFailed(ids[4], reason: "INVALID_FILE", retryable: false)
        try queue.markDiscarded(ids[5])

        #expect(try queue.pending().map(\.id) == [ids[0], ids[1], ids[3]])
        #expect(try queue.pending(dueBy: now).map(\.id) == [ids[0], ids[1]])
        #expect(try queue.pending(dueBy: now.addingTimeInterval(61)).map(\.id) == [ids[0], ids[1], ids[3]])
        #expect(try queue.pending(limit: 1).map(\.id) == [ids[0]])

        let counts = try queue.counts()
        #expect(counts == [.queued: 0 + 1, .uploading: 0, .analyzing: 1, .done: 1, .failed: 2, .needsAttention: 0])
        #expect(try queue.discardedCount() == 1)
        #expect(try queue.scans(in: [.failed]).map(\.id) == [ids[3], ids[4]])
        #expect(try queue.scans(in: [.queued]).map(\.id) == [ids[0]])
        #expect(try queue.scans(in: [.queued], includeDiscarded: true).map(\.id) == [ids[0], ids[5]])
        #expect(try queue.scans().count == 5)
    }

    @Test("a scan's life: uploading → analyzing with its job → progress → done; done is final")
    func lifecycle() throws {
        let database = try AppDatabase.inMemory()
        let queue = database.queue
        let id = try queue.enqueue(newScan()).id
        let uploading = try queue.markUploading(id)
        #expect(uploading.state == .uploading)
        #expect(uploading.attempts == 1)
        let analyzing = try queue.recordJob(
            id, jobID: "job-42", streamURL: "https://x/stream", statusURL: "/status", jobToken: "tok-SECRET")
        #expect(analyzing.state == .analyzing)
        #expect(try queue.scan(id: id)?.jobToken == "tok-SECRET")
        #expect(try queue.recordProgress(id, progress: 0.5, lastEventID: "7").progress == 0.5)
        #expect(try queue.recordProgress(id, progress: 7).progress == 1)  // clamped
        #expect(try queue.scan(id: id)?.lastEventID == "7")
        _ = try database.completeScan(id, books: [])
        #expect(throws: StoreError.invalidTransition(id: id, from: .done, to: .queued)) {
            try queue.updateState(id, to: .queued)
        }
        #expect(throws: StoreError.scanAlreadyDone(id)) { try queue.markDiscarded(id) }
        // The trigger holds even for raw SQL.
        #expect(throws: (any Error).self) {
            try database.writer.write { db in
                try db.execute(
                    sql: "UPDATE scan SET state = 'queued' WHERE id = ?", arguments: [id.uuidString.lowercased()])
            }
        }
        #expect(throws: StoreError.scanNotFound(UUID(uuidString: "00000000-0000-4000-8000-000000000000")!)) {
            try queue.markUploading(UUID(uuidString: "00000000-0000-4000-8000-000000000000")!)
        }
    }

    @Test("a job id belongs to one scan only")
    func jobIDUnique() throws {
        let database = try AppDatabase.inMemory()
        let a = try database.queue.enqueue(newScan()).id
        let b = try database.queue.enqueue(newScan()).id
        try database.queue.recordJob(a, jobID: "same", streamURL: nil, statusURL: nil, jobToken: nil)
        #expect(throws: StoreError.self) {
            try database.queue.recordJob(b, jobID: "same", streamURL: nil, statusURL: nil, jobToken: nil)
        }
    }

    @Test("the job token is never in the description or the JSON form")
    func tokenStaysSecret() throws {
        let database = try AppDatabase.inMemory()
        let id = try database.queue.enqueue(newScan()).id
        let scan = try database.queue.recordJob(id, jobID: "j", streamURL: "/s", statusURL: nil, jobToken: "tok-SECRET")
        #expect(!scan.description.contains("tok-SECRET"))
        #expect(!"\(scan)".contains("tok-SECRET"))
        let json = String(decoding: try JSONEncoder().encode(scan), as: UTF8.self)
        #expect(!json.contains("tok-SECRET"))
        #expect(json.contains("\"jobId\":\"j\""))
        let decoded = try JSONDecoder().decode(ScanRecord.self, from: Data(json.utf8))
        #expect(decoded.id == id)
        #expect(decoded.jobToken == nil)
        #expect(decoded.pressedAt == scan.pressedAt)
    }
}
