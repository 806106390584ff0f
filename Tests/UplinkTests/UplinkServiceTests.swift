import Foundation
import HTTPEngine
import Logging
import Store
import Talaria
import Testing

@testable import Uplink

/// A state directory with a real SQLite file and spool, and an uplink over a scripted backend.
final class UplinkHarness: @unchecked Sendable {
    let directory: String
    let database: AppDatabase
    let spool: SpoolDirectory
    let keyFile: String
    let backend: ScriptedBackend
    let service: UplinkService
    private var task: Task<Void, any Error>?

    init(apiKey: String? = "sk-test-key", tweak: (inout UplinkSettings) -> Void = { _ in }, backend: ScriptedBackend) throws {
        directory = NSTemporaryDirectory() + "swiftwing-uplink-" + UUID().uuidString
        let state = StateDirectory(path: directory)
        try state.create()
        database = try AppDatabase.open(state)
        spool = SpoolDirectory(state)
        keyFile = directory + "/api-key"
        if let apiKey { try Data((apiKey + "\n").utf8).write(to: URL(fileURLWithPath: keyFile)) }
        var settings = UplinkSettings(
            endpoints: TalariaEndpoints(base: URL(string: "http://127.0.0.1:9/")!), deviceID: UUID(),
            apiKey: APIKeySource(path: apiKey == nil ? nil : keyFile), version: "test")
        settings.retry = RetryPolicy(backoff: [0.02, 0.04, 0.08], roundInterval: 30, random: { 0.5 })
        settings.pollInterval = 0.05
        settings.probeInterval = 0.1
        tweak(&settings)
        self.backend = backend
        service = UplinkService(
            settings: settings, transport: backend, database: database, spool: spool, logger: Logger(label: "test"))
    }

    func start() {
        let service = self.service
        task = Task { try await service.run() }
    }

    func stop() async {
        task?.cancel()
        _ = await task?.result
    }

    @discardableResult
    func queueScan(bytes: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0, 1, 2, 3, 0xFF, 0xD9]) throws -> ScanRecord {
        let id = UUID()
        let image = try spool.write(jpeg: bytes, for: id)
        let record = try database.queue.enqueue(
            NewScan(id: id, pressedAt: .now(), pressedWallAt: Date(), frameAt: nil, image: image, width: 64, height: 48))
        service.wake()
        return record
    }

    func scan(_ id: UUID) throws -> ScanRecord { try #require(try database.queue.scan(id: id)) }

    deinit { try? FileManager.default.removeItem(atPath: directory) }
}

/// Waits until `condition` holds (checked every 20 ms), failing after `seconds`.
func eventually(
    _ what: String, within seconds: Double = 30, sourceLocation: SourceLocation = #_sourceLocation,
    _ condition: () throws -> Bool
) async throws {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if try condition() { return }
        try await Task.sleep(for: .milliseconds(20))
    }
    Issue.record("timed out waiting for: \(what)", sourceLocation: sourceLocation)
}

@Suite("Uplink over a scripted backend (logic; the real engine and server are in the integration tests)")
struct UplinkServiceTests {
    @Test("upload → stream → books committed once, photo deleted, cleanup sent; headers as docs/protocol.md §1")
    func happyPath() async throws {
        let backend = ScriptedBackend { request, _ in
            let path = request.url.path
            if request.method == .post { return .response(status: 202, body: Talk.accepted(job: "job-1")) }
            if path.hasSuffix("/stream") {
                return .stream(chunks: [Talk.opening, Talk.progress(job: "job-1", id: 1, progress: 40), Talk.completed(job: "job-1", id: 2)])
            }
            if request.method == .delete { return .response(status: 204, body: "") }
            return .response(status: 404, body: "{}")
        }
        let harness = try UplinkHarness(backend: backend)
        harness.start()
        let scan = try harness.queueScan()
        try await eventually("the scan is done and its cleanup acknowledged") {
            let record = try harness.scan(scan.id)
            return record.state == .done && !record.cleanupPending
        }
        await harness.stop()

        let books = try harness.database.library.books()
        #expect(books.map(\.isbn13) == ["9780262033848", "9780201633610"])
        #expect(books.allSatisfy { $0.scanID == scan.id })
        #expect(books.last?.needsReview == true)
        #expect(!FileManager.default.fileExists(atPath: harness.spool.path(of: scan.imagePath)))

        let upload = try #require(backend.requests(.post, pathSuffix: "/v3/jobs/scans").first)
        #expect(backend.header(upload, "Idempotency-Key") == scan.idString)
        #expect(backend.header(upload, "Authorization") == "Bearer sk-test-key")
        #expect(backend.header(upload, "X-Device-ID") == harness.service.settings.deviceID.uuidString.lowercased())
        #expect(String(decoding: upload.body, as: UTF8.self).contains("name=\"photos[]\"; filename=\"spine.jpg\""))
        let stream = try #require(backend.requests(.get, pathSuffix: "/stream").first)
        #expect(stream.url.absoluteString == "http://127.0.0.1:9/v3/jobs/scans/job-1/stream")
        #expect(backend.header(stream, "Authorization") == "Bearer tok-job-1")
        #expect(backend.requests(.delete, pathSuffix: "/job-1/cleanup").count == 1)
        #expect(try harness.database.queue.scan(id: scan.id)?.jobToken == nil)
    }

    @Test("a dropped stream is resumed with Last-Event-ID and the books land once")
    func resumesAfterDrop() async throws {
        let backend = ScriptedBackend { request, index in
            if request.method == .post { return .response(status: 202, body: Talk.accepted(job: "job-2")) }
            if request.url.path.hasSuffix("/stream") {
                return index == 0
                    ? .stream(chunks: [Talk.opening, Talk.progress(job: "job-2", id: 7, progress: 0.5)], dropped: true)
                    : .stream(chunks: [Talk.completed(job: "job-2", id: 8), Talk.completed(job: "job-2", id: 9)])
            }
            return .response(status: 204, body: "")
        }
        let harness = try UplinkHarness(backend: backend)
        harness.start()
        let scan = try harness.queueScan()
        try await eventually("done") { try harness.scan(scan.id).state == .done }
        await harness.stop()
        let streams = backend.requests(.get, pathSuffix: "/stream")
        #expect(streams.count == 2)
        #expect(backend.header(streams[1], "Last-Event-ID") == "7")
        #expect(backend.header(streams[0], "Last-Event-ID") == nil)
        #expect(try harness.database.library.bookCount() == 2)
        #expect(backend.requests(.post, pathSuffix: "/v3/jobs/scans").count == 1)
    }

    @Test("5xx and connection failures: three attempts with backoff, then the scan waits for the next round, never failed")
    func transientRound() async throws {
        let backend = ScriptedBackend { request, index in
            if request.method == .post {
                return index == 0
                    ? .response(status: 503, body: #"{"code":"PROVIDER_ERROR","title":"busy"}"#)
                    : .failure(.couldNotConnect(host: "127.0.0.1", detail: "refused"))
            }
            return .failure(.couldNotConnect(host: "127.0.0.1", detail: "refused"))
        }
        let harness = try UplinkHarness(tweak: { $0.probeInterval = 60 }, backend: backend)
        harness.start()
        let scan = try harness.queueScan()
        try await eventually("three attempts") { backend.requests(.post, pathSuffix: "/v3/jobs/scans").count >= 3 }
        try await eventually("waiting for the next round") {
            let record = try harness.scan(scan.id)
            return record.state == .queued && (record.nextAttemptAt ?? .distantPast) > Date().addingTimeInterval(10)
        }
        try await Task.sleep(for: .milliseconds(300))
        await harness.stop()
        let record = try harness.scan(scan.id)
        #expect(backend.requests(.post, pathSuffix: "/v3/jobs/scans").count == 3)
        #expect(record.attempts == 3)
        #expect(record.retryable == true)
        #expect(record.lastError?.isEmpty == false)
        if case .offline = harness.service.snapshot.connectivity {} else {
            Issue.record("expected offline, got \(harness.service.snapshot.connectivity)")
        }
    }

    @Test("429 pauses every upload until Retry-After, reports the countdown, then the scans go out")
    func rateLimited() async throws {
        let backend = ScriptedBackend { request, index in
            if request.method == .post {
                if index == 0 {
                    return .response(status: 429, headers: [HTTPHeader(name: "Retry-After", value: "2")],
                                     body: #"{"code":"RATE_LIMIT_EXCEEDED"}"#)
                }
                return .response(status: 202, body: Talk.accepted(job: "job-\(index)"))
            }
            if request.url.path.hasSuffix("/stream") {
                let job = request.url.pathComponents.dropLast().last ?? "?"
                return .stream(chunks: [Talk.completed(job: job, id: 1, books: [Talk.book1])])
            }
            return .response(status: 204, body: "")
        }
        let harness = try UplinkHarness(tweak: { $0.concurrency = 1 }, backend: backend)
        harness.start()
        let first = try harness.queueScan()
        try await eventually("rate limited") {
            if case .rateLimited = harness.service.snapshot.connectivity { return true }
            return false
        }
        let second = try harness.queueScan()
        #expect(harness.service.snapshot.rateLimitRemainingSeconds >= 1)
        try await Task.sleep(for: .milliseconds(500))
        #expect(backend.requests(.post, pathSuffix: "/v3/jobs/scans").count == 1, "no upload during the pause")
        try await eventually("both done after the pause", within: 15) {
            try harness.scan(first.id).state == .done && harness.scan(second.id).state == .done
        }
        await harness.stop()
        #expect(harness.service.snapshot.connectivity == .online)
    }

    @Test("401 fails that scan with the server's reason, holds the others, and a new key in the file resumes them")
    func unauthorized() async throws {
        let backend = ScriptedBackend { request, _ in
            if request.method == .post {
                if request.headers.contains(where: { $0.value == "Bearer good-key" }) {
                    return .response(status: 202, body: Talk.accepted(job: "job-\(UUID().uuidString.prefix(8))", stream: false))
                }
                return .response(status: 401, body: #"{"code":"UNAUTHORIZED","detail":"bad key"}"#)
            }
            if request.url.path.hasSuffix("/results") {
                return .response(status: 200, body: #"{"success":true,"data":{"status":"completed","results":[\#(Talk.book1)]}}"#)
            }
            if request.method == .get { return .response(status: 200, body: #"{"success":true,"data":{"status":"completed"}}"#) }
            return .response(status: 204, body: "")
        }
        let harness = try UplinkHarness(apiKey: "bad-key", tweak: { $0.concurrency = 1 }, backend: backend)
        let refused = try harness.queueScan()
        let held = try harness.queueScan()
        harness.start()
        try await eventually("the first scan failed") { try harness.scan(refused.id).state == .failed }
        #expect(try harness.scan(refused.id).lastError?.contains("bad key") == true)
        if case .unauthorized = harness.service.snapshot.connectivity {} else {
            Issue.record("expected unauthorized, got \(harness.service.snapshot.connectivity)")
        }
        try await Task.sleep(for: .milliseconds(300))
        #expect(try harness.scan(held.id).state == .queued, "held, not failed scan after scan")
        #expect(backend.requests(.post, pathSuffix: "/v3/jobs/scans").count == 1)

        try Data("good-key\n".utf8).write(to: URL(fileURLWithPath: harness.keyFile))
        harness.service.wake()
        try await eventually("the held scan went out (polling, no stream) and is done") { try harness.scan(held.id).state == .done }
        try await harness.service.retryFailed()
        try await eventually("the retried scan is done") { try harness.scan(refused.id).state == .done }
        await harness.stop()
        #expect(!"\(harness.service.snapshot)".contains("good-key"))
    }

    @Test("an empty key file (no key installed) holds uploads from the start and says why; a key put there resumes them")
    func missingKey() async throws {
        let backend = ScriptedBackend { request, _ in
            if request.method == .post {
                return .response(status: 202, body: Talk.accepted(job: "job-\(UUID().uuidString.prefix(8))", stream: false))
            }
            if request.url.path.hasSuffix("/results") {
                return .response(status: 200, body: #"{"success":true,"data":{"status":"completed","results":[\#(Talk.book1)]}}"#)
            }
            if request.method == .get { return .response(status: 200, body: #"{"success":true,"data":{"status":"completed"}}"#) }
            return .response(status: 204, body: "")
        }
        let harness = try UplinkHarness(apiKey: "", tweak: { $0.concurrency = 1 }, backend: backend)
        harness.start()
        try await eventually("uploads are held before any press") {
            if case .unauthorized = harness.service.snapshot.connectivity { return true }
            return false
        }
        #expect(harness.service.snapshot.lastProblem?.contains("no API key is installed") == true)
        #expect(harness.service.snapshot.lastProblem?.contains("systemd-creds encrypt") == true)
        let waiting = try harness.queueScan()
        try await Task.sleep(for: .milliseconds(300))
        #expect(try harness.scan(waiting.id).state == .queued)
        #expect(backend.requests(.post, pathSuffix: "/v3/jobs/scans").isEmpty)

        try Data("sk-installed\n".utf8).write(to: URL(fileURLWithPath: harness.keyFile))
        harness.service.wake()
        try await eventually("the waiting scan went out with the new key and is done") { try harness.scan(waiting.id).state == .done }
        await harness.stop()
    }

    @Test("a retryable failed job is sent again as a new job under a new key; a final one fails and keeps the photo")
    func failedJobs() async throws {
        let backend = ScriptedBackend { request, index in
            if request.method == .post { return .response(status: 202, body: Talk.accepted(job: "job-\(index)")) }
            if request.url.path.hasSuffix("/job-0/stream") {
                return .stream(chunks: [#"event: failed"# + "\n" + #"data: {"error":{"code":"PROVIDER_TIMEOUT","message":"slow","retryable":true}}"# + "\n\n"])
            }
            if request.url.path.hasSuffix("/job-1/stream") {
                return .stream(chunks: ["event: error\ndata: {\"code\":\"INVALID_FILE\",\"message\":\"not a shelf\",\"retryable\":false}\n\n"])
            }
            return .response(status: 204, body: "")
        }
        let harness = try UplinkHarness(backend: backend)
        harness.start()
        let scan = try harness.queueScan()
        try await eventually("failed for good") { try harness.scan(scan.id).state == .failed }
        await harness.stop()
        let uploads = backend.requests(.post, pathSuffix: "/v3/jobs/scans")
        #expect(uploads.count == 2)
        let keys = uploads.compactMap { backend.header($0, "Idempotency-Key") }
        #expect(keys.first == scan.idString)
        #expect(Set(keys).count == 2)
        let record = try harness.scan(scan.id)
        #expect(record.lastError?.contains("not a shelf") == true)
        #expect(record.retryable == false)
        #expect(FileManager.default.fileExists(atPath: harness.spool.path(of: record.imagePath)))
    }

    @Test("a scan analyzing at start resumes its job (no second upload), after its persisted event id")
    func resumesAfterRestart() async throws {
        let backend = ScriptedBackend { request, _ in
            if request.method == .post { return .response(status: 500, body: "{}") }
            if request.url.path.hasSuffix("/stream") { return .stream(chunks: [Talk.completed(job: "job-r", id: 12)]) }
            return .response(status: 204, body: "")
        }
        let harness = try UplinkHarness(backend: backend)
        let scan = try harness.queueScan()
        try harness.database.queue.recordJob(
            scan.id, jobID: "job-r", streamURL: "http://127.0.0.1:9/v3/jobs/scans/job-r/stream", statusURL: nil, jobToken: "t")
        try harness.database.queue.recordProgress(scan.id, progress: 0.3, lastEventID: "11")
        harness.start()
        try await eventually("done") { try harness.scan(scan.id).state == .done }
        await harness.stop()
        #expect(backend.requests(.post, pathSuffix: "/v3/jobs/scans").isEmpty)
        #expect(backend.requests(.get, pathSuffix: "/stream").first.flatMap { backend.header($0, "Last-Event-ID") } == "11")
    }

    @Test("a job without a stream is polled no faster than the poll interval until its results arrive")
    func pollingPace() async throws {
        let backend = ScriptedBackend { request, index in
            if request.method == .post { return .response(status: 202, body: Talk.accepted(job: "job-p", stream: false)) }
            if request.url.path.hasSuffix("/results") {
                return .response(status: 200, body: #"{"success":true,"data":{"status":"completed","results":[\#(Talk.book2)]}}"#)
            }
            if request.method == .get {
                return .response(status: 200, body: index < 3
                    ? #"{"success":true,"data":{"status":"processing","progress":50}}"#
                    : #"{"success":true,"data":{"status":"completed"}}"#)
            }
            return .response(status: 204, body: "")
        }
        let harness = try UplinkHarness(tweak: { $0.pollInterval = 0.25 }, backend: backend)
        harness.start()
        let started = Date()
        let scan = try harness.queueScan()
        try await eventually("done") { try harness.scan(scan.id).state == .done }
        let elapsed = Date().timeIntervalSince(started)
        await harness.stop()
        #expect(backend.requests(.get, pathSuffix: "/job-p").count == 4)
        #expect(elapsed >= 0.75, "four polls at least 0.25 s apart take at least 0.75 s")
        #expect(try harness.database.library.bookCount() == 1)
    }
}
