import Foundation
import HTTPEngine
import Store
import SwiftWingTesting
import Talaria
import Testing

@testable import Uplink

/// The gaps between consecutive instants.
func gaps(_ times: [Date]) -> [TimeInterval] {
    zip(times.dropFirst(), times).map { $0.timeIntervalSince($1) }
}

@Suite(
    "Uplink over a scripted backend on a manual clock (logic; the real engine and server are in the integration tests)")
struct UplinkServiceTests {
    @Test("upload → stream → books committed once, photo deleted, cleanup sent; headers as docs/protocol.md §1")
    func happyPath() async throws {
        let harness = try UplinkHarness { request, _ in
            let path = request.url.path
            if request.method == .post { return .response(status: 202, body: Talk.accepted(job: "job-1")) }
            if path.hasSuffix("/stream") {
                return .stream(chunks: [
                    Talk.opening, Talk.progress(job: "job-1", id: 1, progress: 40), Talk.completed(job: "job-1", id: 2),
                ])
            }
            if request.method == .delete { return .response(status: 204, body: "") }
            return .response(status: 404, body: "{}")
        }
        let backend = harness.backend
        harness.start()
        let scan = try harness.queueScan()
        try await harness.eventually("the scan is done and its cleanup acknowledged") {
            let record = try harness.scan(scan.id)
            return record.state == .done && !record.cleanupPending
        }
        await harness.stop()

        let books = try harness.database.library.books()
        #expect(books.map(\.isbn13) == ["9780262033848", "9780201633610"])
        #expect(books.allSatisfy { $0.scanID == scan.id })
        #expect(books.last?.needsReview == true)
        #expect(!FileManager.default.fileExists(atPath: harness.spool.path(of: scan.imagePath)))

        let upload = try #require(harness.uploads().first)
        #expect(backend.header(upload, "Idempotency-Key") == scan.idString)
        #expect(backend.header(upload, "Authorization") == "Bearer sk-test-key")
        #expect(backend.header(upload, "X-Device-ID") == harness.service.settings.deviceID.uuidString.lowercased())
        guard case .file(let photo) = upload.body else {
            Issue.record("the upload's body is not the photo file: \(upload.body)")
            return
        }
        #expect(photo.path == harness.spool.path(of: scan.imagePath))
        #expect(String(decoding: photo.prefix, as: UTF8.self).contains("name=\"photos[]\"; filename=\"spine.jpg\""))
        let stream = try #require(backend.requests(.get, pathSuffix: "/stream").first)
        #expect(stream.url.absoluteString == "http://127.0.0.1:9/v3/jobs/scans/job-1/stream")
        #expect(backend.header(stream, "Authorization") == "Bearer tok-job-1")
        #expect(backend.requests(.delete, pathSuffix: "/job-1/cleanup").count == 1)
        #expect(try harness.database.queue.scan(id: scan.id)?.jobToken == nil)
        #expect(
            harness.events.all.contains {
                if case .booksLanded(scan.id, let landed) = $0 { landed.count == 2 } else { false }
            })
    }

    @Test("a dropped stream is resumed with Last-Event-ID after the server's retry time, and the books land once")
    func resumesAfterDrop() async throws {
        let harness = try UplinkHarness { request, index in
            if request.method == .post { return .response(status: 202, body: Talk.accepted(job: "job-2")) }
            if request.url.path.hasSuffix("/stream") {
                return index == 0
                    ? .stream(chunks: [Talk.opening, Talk.progress(job: "job-2", id: 7, progress: 0.5)], dropped: true)
                    : .stream(chunks: [Talk.completed(job: "job-2", id: 8), Talk.completed(job: "job-2", id: 9)])
            }
            return .response(status: 204, body: "")
        }
        let backend = harness.backend
        harness.start()
        let scan = try harness.queueScan()
        try await harness.eventually("the first stream dropped") {
            backend.requests(.get, pathSuffix: "/stream").count == 1
        }
        try await harness.advance("done", step: 0.01, upTo: 60) { try harness.scan(scan.id).state == .done }
        await harness.stop()
        let streams = backend.requests(.get, pathSuffix: "/stream")
        #expect(streams.count == 2)
        #expect(backend.header(streams[1], "Last-Event-ID") == "7")
        #expect(backend.header(streams[0], "Last-Event-ID") == nil)
        #expect(
            gaps(backend.times(.get, pathSuffix: "/stream")).allSatisfy { $0 >= 0.0099 }, "the server's retry: 10 ms")
        #expect(try harness.database.library.bookCount() == 2)
        #expect(harness.uploads().count == 1)
    }

    @Test(
        "a stream refused with 429 or a busy 503 is opened again after its Retry-After, not the 5 s default; a wait longer than a stream may take polls the status instead",
        arguments: [(429, "15", 2), (503, "15", 2), (429, "3600", 1)])
    func streamRefusedWaitsForRetryAfter(status: Int, retryAfter: String, streams: Int) async throws {
        let harness = try UplinkHarness { request, index in
            if request.method == .post { return .response(status: 202, body: Talk.accepted(job: "job-s")) }
            if request.url.path.hasSuffix("/stream") {
                return index == 0
                    ? .response(
                        status: status, headers: [HTTPHeader(name: "Retry-After", value: retryAfter)],
                        body: #"{"code":"STREAM_ALREADY_OPEN","retryable":true}"#)
                    : .stream(chunks: [Talk.completed(job: "job-s", id: 1, books: [Talk.book1])])
            }
            if let finished = Self.finishedJob(request) { return finished }
            return .response(status: 204, body: "")
        }
        harness.start()
        let scan = try harness.queueScan()
        try await harness.advance("done", step: 0.5, upTo: 120) { try harness.scan(scan.id).state == .done }
        await harness.stop()
        let times = harness.backend.times(.get, pathSuffix: "/stream")
        #expect(times.count == streams)
        if streams == 2 {
            #expect(gaps(times)[0] >= 15, "the second stream waited for Retry-After: \(gaps(times))")
            #expect(harness.backend.requests(.get, pathSuffix: "/job-s").isEmpty, "no status poll")
        } else {
            #expect(!harness.backend.requests(.get, pathSuffix: "/job-s").isEmpty, "polled instead")
        }
        #expect(try harness.database.library.bookCount() == 1)
    }

    @Test(
        "5xx and connection failures: three attempts 1 s and 2 s apart, then the scan waits for the next round, never failed"
    )
    func transientRound() async throws {
        let harness = try UplinkHarness { request, index in
            if request.method == .post {
                return index == 0
                    ? .response(status: 503, body: #"{"code":"PROVIDER_ERROR","title":"busy"}"#)
                    : .failure(.couldNotConnect(host: "127.0.0.1", detail: "refused"))
            }
            return .failure(.couldNotConnect(host: "127.0.0.1", detail: "refused"))
        }
        harness.start()
        let scan = try harness.queueScan()
        try await harness.advance("three attempts, then waiting for the next round", upTo: 1800) {
            let record = try harness.scan(scan.id)
            return harness.uploads().count == 3 && record.state == .queued
                && (record.nextAttemptAt ?? .distantPast) > harness.now.addingTimeInterval(600)
        }
        // A minute later (probes included) nothing more is sent: the next round is an hour away.
        try await harness.pass(60, step: 1)
        await harness.stop()
        let record = try harness.scan(scan.id)
        let times = harness.backend.times(.post, pathSuffix: "/v3/jobs/scans")
        #expect(times.count == 3)
        #expect(
            gaps(times).count == 2 && gaps(times)[0] >= 1 && gaps(times)[1] >= 2, "backoff 1 s, 2 s: \(gaps(times))")
        #expect(record.state == .queued)
        #expect(record.attempts == 3)
        #expect(record.retryable == true)
        #expect(record.lastError?.isEmpty == false)
        if case .offline = harness.connectivity {
        } else {
            Issue.record("expected offline, got \(harness.connectivity)")
        }
    }

    @Test(
        "429, or 503 with Retry-After (a busy recognizer), pauses every upload until Retry-After, then they go out",
        arguments: [(429, "RATE_LIMIT_EXCEEDED"), (503, "BUSY")])
    func rateLimited(status: Int, code: String) async throws {
        let harness = try UplinkHarness(tweak: { $0.concurrency = 1 }) { request, index in
            if request.method == .post {
                if index == 0 {
                    return .response(
                        status: status, headers: [HTTPHeader(name: "Retry-After", value: "2")],
                        body: #"{"code":"\#(code)","retryable":true}"#)
                }
                return .response(status: 202, body: Talk.accepted(job: "job-\(index)"))
            }
            if request.url.path.hasSuffix("/stream") {
                let job = request.url.pathComponents.dropLast().last ?? "?"
                return .stream(chunks: [Talk.completed(job: job, id: 1, books: [Talk.book1])])
            }
            return .response(status: 204, body: "")
        }
        harness.start()
        let first = try harness.queueScan()
        // The device says which: the backend limits its rate (429), or it is busy (503).
        try await harness.eventually(status == 503 ? "busy" : "rate limited") {
            switch harness.connectivity {
            case .rateLimited: status == 429
            case .busy: status == 503
            default: false
            }
        }
        let second = try harness.queueScan()
        #expect(harness.service.snapshot.rateLimitRemainingSeconds == 2)
        try await harness.settle()  // the clock stands still: the pause cannot end
        #expect(harness.uploads().count == 1, "no upload during the pause")
        harness.clock.advance(by: .seconds(1))
        #expect(harness.service.snapshot.rateLimitRemainingSeconds == 1)
        try await harness.advance("both done after the pause", upTo: 600) {
            try harness.scan(first.id).state == .done && harness.scan(second.id).state == .done
        }
        await harness.stop()
        let times = harness.backend.times(.post, pathSuffix: "/v3/jobs/scans")
        #expect(times.count == 3)
        #expect(gaps(times).first.map { $0 >= 2 } == true, "the second upload waited for Retry-After: \(gaps(times))")
        #expect(harness.connectivity == .online)
    }

    @Test(
        "three uploads in flight all answered 429: one rate-limited announcement, so the buzzer plays its pattern once")
    func oneAnnouncementForSimultaneous429s() async throws {
        let together = RequestBarrier(count: 3)
        let harness = try UplinkHarness(tweak: { $0.concurrency = 3 }) { request, _ in
            if request.method == .post {
                return .together(
                    together,
                    reply: .response(
                        status: 429, headers: [HTTPHeader(name: "Retry-After", value: "30")],
                        body: #"{"code":"RATE_LIMIT_EXCEEDED"}"#))
            }
            return .response(status: 204, body: "")
        }
        let scans = try (0..<3).map { _ in try harness.queueScan() }
        harness.start()
        try await harness.eventually("all three were refused and wait for the end of the pause") {
            try harness.uploads().count == 3
                && scans.allSatisfy { try harness.scan($0.id).lastError?.contains("rate limiting") == true }
        }
        await harness.stop()
        #expect(harness.uploads().count == 3)
        let announced = harness.events.connectivityChanges.filter { if case .rateLimited = $0 { true } else { false } }
        #expect(announced.count == 1, "\(harness.events.connectivityChanges)")
    }

    @Test("401 fails that scan with the server's reason, holds the others, and a new key in the file resumes them")
    func unauthorized() async throws {
        let harness = try UplinkHarness(apiKey: "bad-key", tweak: { $0.concurrency = 1 }) { request, _ in
            if request.method == .post {
                if request.headers.contains(where: { $0.value == "Bearer good-key" }) {
                    return .response(
                        status: 202, body: Talk.accepted(job: "job-\(UUID().uuidString.prefix(8))", stream: false))
                }
                return .response(status: 401, body: #"{"code":"UNAUTHORIZED","detail":"bad key"}"#)
            }
            if let finished = Self.finishedJob(request) { return finished }
            return .response(status: 204, body: "")
        }
        let refused = try harness.queueScan()
        let held = try harness.queueScan()
        harness.start()
        try await harness.eventually("the first scan failed") { try harness.scan(refused.id).state == .failed }
        #expect(try harness.scan(refused.id).lastError?.contains("bad key") == true)
        if case .unauthorized = harness.connectivity {
        } else {
            Issue.record("expected unauthorized, got \(harness.connectivity)")
        }
        try await harness.settle()
        #expect(try harness.scan(held.id).state == .queued, "held, not failed scan after scan")
        #expect(harness.uploads().count == 1)

        try Data("good-key\n".utf8).write(to: URL(fileURLWithPath: harness.keyFile))
        harness.service.wake()
        try await harness.eventually("the held scan went out (polling, no stream) and is done") {
            try harness.scan(held.id).state == .done
        }
        try await harness.service.retryFailed()
        try await harness.eventually("the retried scan is done") { try harness.scan(refused.id).state == .done }
        await harness.stop()
        #expect(!"\(harness.service.snapshot)".contains("good-key"))
    }

    @Test(
        "an empty key file (no key installed) holds uploads from the start and says why; a key put there resumes them")
    func missingKey() async throws {
        let harness = try UplinkHarness(apiKey: "", tweak: { $0.concurrency = 1 }) { request, _ in
            if request.method == .post {
                return .response(
                    status: 202, body: Talk.accepted(job: "job-\(UUID().uuidString.prefix(8))", stream: false))
            }
            if let finished = Self.finishedJob(request) { return finished }
            return .response(status: 204, body: "")
        }
        harness.start()
        try await harness.eventually("uploads are held before any press") {
            if case .unauthorized = harness.connectivity { return true }
            return false
        }
        #expect(harness.service.snapshot.lastProblem?.contains("no API key is installed") == true)
        #expect(harness.service.snapshot.lastProblem?.contains("systemd-creds encrypt") == true)
        #expect(harness.events.all.contains { if case .apiKeyMissing = $0 { true } else { false } })
        let waiting = try harness.queueScan()
        try await harness.settle()
        #expect(try harness.scan(waiting.id).state == .queued)
        #expect(harness.uploads().isEmpty)

        try Data("sk-installed\n".utf8).write(to: URL(fileURLWithPath: harness.keyFile))
        harness.service.wake()
        try await harness.eventually("the waiting scan went out with the new key and is done") {
            try harness.scan(waiting.id).state == .done
        }
        await harness.stop()
    }

    @Test("a retryable failed job is sent again as a new job under a new key; a final one fails and keeps the photo")
    func failedJobs() async throws {
        let harness = try UplinkHarness { request, index in
            if request.method == .post { return .response(status: 202, body: Talk.accepted(job: "job-\(index)")) }
            if request.url.path.hasSuffix("/job-0/stream") {
                return .stream(chunks: [
                    #"event: failed"# + "\n"
                        + #"data: {"error":{"code":"PROVIDER_TIMEOUT","message":"slow","retryable":true}}"# + "\n\n"
                ])
            }
            if request.url.path.hasSuffix("/job-1/stream") {
                return .stream(chunks: [
                    "event: error\ndata: {\"code\":\"INVALID_FILE\",\"message\":\"not a shelf\",\"retryable\":false}\n\n"
                ])
            }
            return .response(status: 204, body: "")
        }
        harness.start()
        let scan = try harness.queueScan()
        try await harness.advance("failed for good", upTo: 600) { try harness.scan(scan.id).state == .failed }
        await harness.stop()
        let uploads = harness.uploads()
        #expect(uploads.count == 2)
        let keys = uploads.compactMap { harness.backend.header($0, "Idempotency-Key") }
        #expect(keys.first == scan.idString)
        #expect(Set(keys).count == 2)
        #expect(
            gaps(harness.backend.times(.post, pathSuffix: "/v3/jobs/scans")).allSatisfy { $0 >= 1 },
            "sent again after 1 s")
        let record = try harness.scan(scan.id)
        #expect(record.lastError?.contains("not a shelf") == true)
        #expect(record.retryable == false)
        #expect(FileManager.default.fileExists(atPath: harness.spool.path(of: record.imagePath)))
    }

    @Test("a scan analyzing at start resumes its job (no second upload), after its persisted event id")
    func resumesAfterRestart() async throws {
        let harness = try UplinkHarness { request, _ in
            if request.method == .post { return .response(status: 500, body: "{}") }
            if request.url.path.hasSuffix("/stream") { return .stream(chunks: [Talk.completed(job: "job-r", id: 12)]) }
            return .response(status: 204, body: "")
        }
        let scan = try harness.queueScan()
        try harness.database.queue.recordJob(
            scan.id, jobID: "job-r", streamURL: "http://127.0.0.1:9/v3/jobs/scans/job-r/stream", statusURL: nil,
            jobToken: "t")
        try harness.database.queue.recordProgress(scan.id, progress: 0.3, lastEventID: "11")
        harness.start()
        try await harness.eventually("done") { try harness.scan(scan.id).state == .done }
        await harness.stop()
        #expect(harness.uploads().isEmpty)
        let stream = harness.backend.requests(.get, pathSuffix: "/stream").first
        #expect(stream.flatMap { harness.backend.header($0, "Last-Event-ID") } == "11")
    }

    @Test(
        "a job the backend no longer knows waits outside its slot: a new scan goes out meanwhile; lost after the setting"
    )
    func lostJobHoldsNoSlot() async throws {
        let harness = try UplinkHarness(tweak: {
            $0.concurrency = 1
            $0.jobLostAfter = 30
        }) { request, index in
            let path = request.url.path
            if request.method == .post {
                return .response(
                    status: 202, body: Talk.accepted(job: index == 0 ? "job-new" : "job-again", stream: false))
            }
            if path.hasSuffix("/job-lost") { return .response(status: 404, body: #"{"code":"NOT_FOUND"}"#) }
            if let finished = Self.finishedJob(request) { return finished }
            return .response(status: 204, body: "")
        }
        // A scan whose job was accepted before a restart of the backend, which forgot it.
        let lost = try harness.queueScan()
        try harness.database.queue.recordJob(
            lost.id, jobID: "job-lost", streamURL: nil, statusURL: "http://127.0.0.1:9/v3/jobs/scans/job-lost",
            jobToken: nil)
        harness.start()
        try await harness.eventually("the lost job was asked for") {
            !harness.backend.requests(.get, pathSuffix: "/job-lost").isEmpty
        }
        let pressed = try harness.queueScan()
        // The clock stands still: with the only slot held by the 404s, the new scan could not go out.
        try await harness.eventually("the new scan is done") { try harness.scan(pressed.id).state == .done }
        #expect(try harness.scan(lost.id).state == .analyzing)

        try await harness.advance("the lost scan was sent again as a new job and is done", upTo: 600) {
            try harness.scan(lost.id).state == .done
        }
        await harness.stop()
        let checks = harness.backend.times(.get, pathSuffix: "/job-lost")
        let resent = try #require(harness.backend.times(.post, pathSuffix: "/v3/jobs/scans").last)
        let waited = resent.timeIntervalSince(try #require(checks.first))
        // Not before the setting's 30 s; well before the default's 120 s (room for an uplink lagging the clock's steps).
        #expect(waited >= 30 && waited < 120, "sent again \(waited) s after the first 404 (job_lost_after 30 s)")
        #expect(gaps(checks).allSatisfy { $0 >= 2.9 }, "checks \(gaps(checks)) s apart: a tenth of the limit")
        #expect(harness.uploads().count == 2)
        #expect(Set(harness.uploads().compactMap { harness.backend.header($0, "Idempotency-Key") }).count == 2)
    }

    @Test("a photo gone before its upload, or not readable whole while sent, needs attention and is not sent again")
    func unreadablePhoto() async throws {
        let harness = try UplinkHarness { request, _ in
            if request.method == .post, case .file(let photo) = request.body {
                return .failure(.requestBodyUnreadable(path: photo.path, detail: "it ended at byte 3 while being sent"))
            }
            return .response(status: 204, body: "")
        }
        let gone = try harness.queueScan()
        try FileManager.default.removeItem(atPath: harness.spool.path(of: gone.imagePath))
        let shrunk = try harness.queueScan()
        harness.start()
        try await harness.eventually("both scans need attention") {
            try harness.scan(gone.id).state == .needsAttention && harness.scan(shrunk.id).state == .needsAttention
        }
        try await harness.pass(30, step: 1)
        await harness.stop()
        for scan in [gone, shrunk] {
            let reason = try harness.scan(scan.id).lastError ?? ""
            #expect(try harness.scan(scan.id).state == .needsAttention)
            #expect(reason.hasPrefix("its photo cannot be read ("), "\(reason)")
            #expect(reason.hasSuffix("; discard it with `swiftwing queue discard \(scan.idString)`"), "\(reason)")
        }
        #expect(try harness.scan(gone.id).lastError?.contains("No such file") == true)
        #expect(try harness.scan(shrunk.id).lastError?.contains("ended at byte 3") == true)
        #expect(harness.uploads().count == 1, "only the photo that was there went out, once")
    }

    /// A finished job's answers to the device's GETs: `completed` to a status poll, `Talk.book1` from its results.
    private static func finishedJob(_ request: HTTPRequest) -> ScriptedBackend.Reply? {
        if request.url.path.hasSuffix("/results") {
            return .response(
                status: 200, body: #"{"success":true,"data":{"status":"completed","results":[\#(Talk.book1)]}}"#)
        }
        if request.method == .get {
            return .response(status: 200, body: #"{"success":true,"data":{"status":"completed"}}"#)
        }
        return nil
    }

    /// A job without a stream, its status polls answered by `status` (given how many polls came before), followed
    /// until its book is in the library: the harness, stopped, and the times of the polls.
    private func followedByPolling(
        _ job: String, status: @escaping @Sendable (Int) -> ScriptedBackend.Reply
    ) async throws -> (harness: UplinkHarness, polls: [Date]) {
        let harness = try UplinkHarness { request, index in
            if request.method == .post {
                return .response(status: 202, body: Talk.accepted(job: job, stream: false))
            }
            if request.url.path.hasSuffix("/results") {
                return .response(
                    status: 200, body: #"{"success":true,"data":{"status":"completed","results":[\#(Talk.book2)]}}"#)
            }
            if request.method == .get { return status(index) }
            return .response(status: 204, body: "")
        }
        harness.start()
        let scan = try harness.queueScan()
        try await harness.advance("done", upTo: 600) { try harness.scan(scan.id).state == .done }
        await harness.stop()
        #expect(try harness.database.library.bookCount() == 1)
        return (harness, harness.backend.times(.get, pathSuffix: "/\(job)"))
    }

    @Test("a job without a stream is polled no faster than the poll interval until its results arrive")
    func pollingPace() async throws {
        let (harness, polls) = try await followedByPolling("job-p") { index in
            .response(
                status: 200,
                body: index < 3
                    ? #"{"success":true,"data":{"status":"processing","progress":50}}"#
                    : #"{"success":true,"data":{"status":"completed"}}"#)
        }
        #expect(polls.count == 4)
        #expect(gaps(polls).allSatisfy { $0 >= harness.service.settings.pollInterval }, "polls \(gaps(polls)) s apart")
    }

    @Test(
        "a status poll answered 429, or 503 with Retry-After (a busy backend), polls again only after Retry-After",
        arguments: [(429, "RATE_LIMIT_EXCEEDED"), (503, "BUSY")])
    func statusPollWaitsOutRetryAfter(status: Int, code: String) async throws {
        let (_, polls) = try await followedByPolling("job-w") { index in
            index == 0
                ? .response(
                    status: status, headers: [HTTPHeader(name: "Retry-After", value: "40")],
                    body: #"{"code":"\#(code)","title":"wait","retryable":true}"#)
                : .response(status: 200, body: #"{"success":true,"data":{"status":"completed"}}"#)
        }
        #expect(polls.count == 2)
        #expect(gaps(polls).allSatisfy { $0 >= 40 }, "polls \(gaps(polls)) s apart")
    }
}
