import Foundation
import HTTPEngine
import Logging
import SwiftWingTesting
import Synchronization
import TalariaReferenceServer
import Testing
import swiftwing_recognizer

/// Reads a photo only once the test releases it: a recognizer still busy for as long as the test wants.
final class HeldRecognizer: PhotoRecognizing {
    private struct State {
        var released: Set<[UInt8]> = []
        var all = false
        var waiting: [[UInt8]: [CheckedContinuation<Void, Never>]] = [:]
    }
    private let state = Mutex(State())

    func recognize(photo: [UInt8], progress: @escaping @Sendable (Double, String) async -> Void) async throws
        -> PhotoRecognition
    {
        await withCheckedContinuation { continuation in
            let go = state.withLock { state in
                if state.all || state.released.contains(photo) { return true }
                state.waiting[photo, default: []].append(continuation)
                return false
            }
            if go { continuation.resume() }
        }
        return PhotoRecognition(books: [])
    }

    func release(_ photo: [UInt8]) {
        let waiting = state.withLock { state in
            state.released.insert(photo)
            return state.waiting.removeValue(forKey: photo) ?? []
        }
        for continuation in waiting { continuation.resume() }
    }

    func releaseAll() {
        let waiting = state.withLock { state in
            state.all = true
            defer { state.waiting = [:] }
            return state.waiting.values.flatMap { $0 }
        }
        for continuation in waiting { continuation.resume() }
    }
}

/// What a recognizer on a network holds back from a flood of uploads or a curious neighbour.
@Suite struct ServiceTrustTests {
    static let logger: Logger = {
        var logger = Logger(label: "service-trust-test")
        logger.logLevel = .critical
        return logger
    }()
    static let settings: RecognitionService.Settings = {
        var settings = RecognitionService.Settings(catalogue: "/etc/swiftwing/catalogue.csv", books: 3)
        settings.port = 0
        return settings
    }()

    func withService(
        _ settings: RecognitionService.Settings, recognizer: any PhotoRecognizing, clock: ManualClock = ManualClock(),
        _ body: (URL) async throws -> Void
    ) async throws {
        try await withRunning({ onRunning in
            RecognitionService.makeApplication(
                settings: settings, recognizer: recognizer, clock: clock, logger: Self.logger, onRunning: onRunning)
        }) { port in
            try await body(URL(string: "http://127.0.0.1:\(port)")!)
        }
    }

    /// The job's id and token from an accepted upload.
    func job(_ accepted: (status: Int, body: Data, head: HTTPResponseHead)) throws -> (id: String, token: String) {
        #expect(accepted.status == 202, "\(String(decoding: accepted.body, as: UTF8.self))")
        let data = try #require(try json(accepted.body)["data"] as? [String: Any])
        return (try #require(data["jobId"] as? String), try #require(data["authToken"] as? String))
    }

    /// Follows the job's stream to its end (the terminal event).
    func finish(_ base: URL, _ job: (id: String, token: String)) async throws {
        let events = try await fetch(
            base.appendingPathComponent("v3/jobs/scans/\(job.id)/stream"),
            headers: ["Accept": "text/event-stream", "Authorization": "Bearer \(job.token)"])
        #expect(String(decoding: events.body, as: UTF8.self).contains("event: completed"))
    }

    /// The service with `maxWaitingPhotos` places and a recognizer that reads each photo only once `body` releases it.
    func withHeldPhotos(maxWaitingPhotos: Int, _ body: (URL, HeldRecognizer) async throws -> Void) async throws {
        let recognizer = HeldRecognizer()
        defer { recognizer.releaseAll() }
        var settings = Self.settings
        settings.maxWaitingPhotos = maxWaitingPhotos
        try await withService(settings, recognizer: recognizer) { base in try await body(base, recognizer) }
    }

    @Test func uploadsPastTheWaitingPhotosAreRefusedBusyUntilASlotIsFree() async throws {
        try await withHeldPhotos(maxWaitingPhotos: 2) { base, recognizer in
            let a = try job(try await upload(base, photo: tinyJPEG("a"), key: "a"))
            let b = try job(try await upload(base, photo: tinyJPEG("b"), key: "b"))

            let busy = try await upload(base, photo: tinyJPEG("c"), key: "c")
            #expect(busy.status == 503)
            #expect(busy.head.header("Retry-After") == "10")
            #expect(busy.head.header("Content-Type") == "application/problem+json")
            let problem = try json(busy.body)
            #expect(problem["code"] as? String == "BUSY" && problem["retryable"] as? Bool == true)
            #expect(problem["retryAfterMs"] as? Int == 10000)
            // A repeated key is no new photo: it gets its job back.
            let again = try job(try await upload(base, photo: tinyJPEG("a"), key: "a"))
            #expect(again.id == a.id)

            // A photo read frees its slot.
            recognizer.release(tinyJPEG("a"))
            try await finish(base, a)
            let c = try job(try await upload(base, photo: tinyJPEG("c"), key: "c"))
            #expect(try await upload(base, photo: tinyJPEG("d"), key: "d").status == 503)

            // So does a job cleaned up (or cancelled) before its photo was read.
            let cleanup = try await fetch(
                base.appendingPathComponent("v3/jobs/scans/\(b.id)/cleanup"), method: "DELETE")
            #expect(cleanup.status == 204)
            _ = try job(try await upload(base, photo: tinyJPEG("d"), key: "d"))
            let cancel = try await fetch(base.appendingPathComponent("v3/jobs/scans/\(c.id)"), method: "DELETE")
            #expect(cancel.status == 200)
            _ = try job(try await upload(base, photo: tinyJPEG("e"), key: "e"))
            #expect(try await upload(base, photo: tinyJPEG("f"), key: "f").status == 503)
        }
    }

    @Test func theBusyRetryAfterIsTheOnesGiven() async throws {
        let recognizer = HeldRecognizer()
        defer { recognizer.releaseAll() }
        var settings = Self.settings
        settings.maxWaitingPhotos = 1
        settings.busyRetryAfterSeconds = 3
        try await withService(settings, recognizer: recognizer) { base in
            _ = try job(try await upload(base, photo: tinyJPEG("a"), key: "a"))
            let busy = try await upload(base, photo: tinyJPEG("b"), key: "b")
            #expect(busy.status == 503 && busy.head.header("Retry-After") == "3")
            let problem = try json(busy.body)
            #expect(problem["retryAfterMs"] as? Int == 3000)
            #expect((problem["detail"] as? String)?.hasSuffix("send the photo again in 3 s") == true, "\(problem)")
        }
    }

    @Test func anUploadStillSendingItsPhotoHoldsItsPlaceUntilItMakesAJobOrGoesAway() async throws {
        try await withHeldPhotos(maxWaitingPhotos: 1) { base, recognizer in
            let stats = base.appendingPathComponent("_stats")
            /// Waits until the service counts `receiving` uploads reading their photo (the server's own time).
            func receiving(_ count: Int) async throws {
                for _ in 0..<2000 {
                    if try json(try await fetch(stats).body)["photosReceiving"] as? Int == count { return }
                    try await Task.sleep(for: .milliseconds(5))
                }
                Issue.record("the service never counted \(count) uploads reading their photo")
            }
            let port = try #require(base.port)

            // Half a photo sent: its place is taken, so another upload is refused before its body is read.
            let (head, rest) = halfUpload(photo: tinyJPEG("slow"), key: "slow")
            var slow = try LoopbackSocket.connect(port: port)
            try LoopbackSocket.send(head, to: slow)
            try await receiving(1)
            #expect(try await upload(base, photo: tinyJPEG("b"), key: "b").status == 503)

            // The sender goes away: the place is free again.
            close(slow)
            try await receiving(0)
            let b = try job(try await upload(base, photo: tinyJPEG("b"), key: "b"))
            recognizer.release(tinyJPEG("b"))
            try await finish(base, b)

            // A slow upload that ends makes its job; its place passes to the job.
            slow = try LoopbackSocket.connect(port: port)
            defer { close(slow) }
            try LoopbackSocket.send(head, to: slow)
            try await receiving(1)
            #expect(try await upload(base, photo: tinyJPEG("c"), key: "c").status == 503)
            try LoopbackSocket.send(rest, to: slow)
            let answer = String(decoding: await readToEnd(slow), as: UTF8.self)
            #expect(answer.hasPrefix("HTTP/1.1 202"), "\(answer)")
            let counts = try json(try await fetch(stats).body)
            #expect(counts["photosReceiving"] as? Int == 0 && counts["photosHeld"] as? Int == 1)
            #expect(try await upload(base, photo: tinyJPEG("c"), key: "c").status == 503)
        }
    }

    /// An upload's bytes in two parts: the request head with the first half of its body, and the rest.
    func halfUpload(photo: [UInt8], key: String) -> (head: [UInt8], rest: [UInt8]) {
        let boundary = "swiftwing-test-slow"
        let body =
            Array("--\(boundary)\r\nContent-Disposition: form-data; name=\"photos[]\"; filename=\"spine.jpg\"\r\n".utf8)
            + Array("Content-Type: image/jpeg\r\n\r\n".utf8) + photo + Array("\r\n--\(boundary)--\r\n".utf8)
        let head = Array(
            ("POST /v3/jobs/scans HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
                + "Content-Type: multipart/form-data; boundary=\(boundary)\r\nIdempotency-Key: \(key)\r\n"
                + "X-Device-ID: device-test\r\nContent-Length: \(body.count)\r\n\r\n").utf8)
        return (head + body[..<(body.count / 2)], Array(body[(body.count / 2)...]))
    }

    /// `LoopbackSocket.readToEnd` off the concurrency threads.
    func readToEnd(_ fd: Int32) async -> [UInt8] {
        await offConcurrencyThreads { LoopbackSocket.readToEnd(fd) }
    }

    /// `read`, a blocking socket call, on a thread of its own: the service under test runs on the concurrency
    /// threads too, and a read blocking one of them could hold up the very answer it waits for.
    func offConcurrencyThreads<T: Sendable>(_ read: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(returning: read()) }
        }
    }

    @Test func finishedJobsAreForgottenOnCleanupOrAfterTheRetention() async throws {
        let clock = ManualClock()
        let recognizer = HeldRecognizer()
        recognizer.releaseAll()
        try await withService(Self.settings, recognizer: recognizer, clock: clock) { base in
            let stats = base.appendingPathComponent("_stats")
            let kept = try job(try await upload(base, photo: tinyJPEG("kept"), key: "kept"))
            try await finish(base, kept)
            let cleaned = try job(try await upload(base, photo: tinyJPEG("cleaned"), key: "cleaned"))
            try await finish(base, cleaned)
            let cleanup = base.appendingPathComponent("v3/jobs/scans/\(cleaned.id)/cleanup")
            #expect(try await fetch(cleanup, method: "DELETE").status == 204)

            var counts = try json(try await fetch(stats).body)
            #expect((counts["jobStatus"] as? [String: String]) == [kept.id: "completed"])
            #expect((counts["jobByIdempotencyKey"] as? [String: String]) == ["kept": kept.id])
            #expect((counts["uploadsByIdempotencyKey"] as? [String: Int]) == ["kept": 1])
            #expect(counts["jobsForgotten"] as? Int == 1 && counts["jobsCompleted"] as? Int == 2)
            #expect(try await fetch(base.appendingPathComponent("v3/jobs/scans/\(cleaned.id)")).status == 404)
            #expect(try await fetch(cleanup, method: "DELETE").status == 404)

            // Never cleaned up: kept for the retention, then forgotten.
            clock.advance(by: .seconds(24 * 3600 - 1))
            counts = try json(try await fetch(stats).body)
            #expect((counts["jobStatus"] as? [String: String]) == [kept.id: "completed"])
            clock.advance(by: .seconds(1))
            counts = try json(try await fetch(stats).body)
            #expect((counts["jobStatus"] as? [String: String]) == [:])
            #expect((counts["jobByIdempotencyKey"] as? [String: String]) == [:])
            #expect(counts["jobsForgotten"] as? Int == 2 && counts["jobsCreated"] as? Int == 2)
            #expect(try await fetch(base.appendingPathComponent("v3/jobs/scans/\(kept.id)")).status == 404)
            let again = try job(try await upload(base, photo: tinyJPEG("kept"), key: "kept"))
            #expect(again.id != kept.id)

            // Lists anyone can add to keep their latest entries only, each cut short.
            let long = String(repeating: "x", count: 500)
            for id in (1...21).map({ "job_\($0)" }) + [long] {
                _ = try await fetch(base.appendingPathComponent("v3/jobs/scans/\(id)/cleanup"), method: "DELETE")
            }
            counts = try json(try await fetch(stats).body)
            let notFound = try #require(counts["cleanupsNotFound"] as? [String])
            #expect(notFound.count == 20 && notFound.first == "job_3" && notFound.last == String(long.prefix(100)))
            #expect((counts["cleanups"] as? [String]) == [cleaned.id])
        }
    }

    @Test func statsNeedTheKeyWhenTheServiceHasOne() async throws {
        var settings = Self.settings
        settings.apiKey = "sekret"
        try await withService(settings, recognizer: HeldRecognizer()) { base in
            let stats = base.appendingPathComponent("_stats")
            let none = try await fetch(stats)
            #expect(none.status == 401 && String(decoding: none.body, as: UTF8.self).contains("UNAUTHORIZED"))
            #expect(try await fetch(stats, headers: ["Authorization": "Bearer sekre"]).status == 401)
            let right = try await fetch(stats, headers: ["Authorization": "Bearer sekret"])
            #expect(right.status == 200)
            let counts = try json(right.body)
            #expect(counts["jobsCreated"] as? Int == 0)
            #expect(try await fetch(base.appendingPathComponent("health")).status == 200)
            // The reference backend's fake catalogue is not the service's to answer.
            #expect(try await fetch(URL(string: "\(base)/search.json?q=hobbit")!).status == 404)
        }
        try await withService(Self.settings, recognizer: HeldRecognizer()) { base in
            let open = try await fetch(base.appendingPathComponent("_stats"))
            #expect(open.status == 200)
        }
    }

    @Test func aBindBeyondLoopbackWithNoKeyIsWarnedOf() {
        for host in ["127.0.0.1", "127.4.5.6", "localhost", "::1"] {
            #expect(RecognitionService.openAccessWarning(host: host, apiKey: nil) == nil, "\(host)")
        }
        for host in ["0.0.0.0", "192.168.1.20", "::", "recognizer.home.lan"] {
            let warning = RecognitionService.openAccessWarning(host: host, apiKey: nil)
            #expect(warning?.contains("anyone on that network can upload photos") == true, "\(host)")
            #expect(RecognitionService.openAccessWarning(host: host, apiKey: "k") == nil)
        }
    }
}
