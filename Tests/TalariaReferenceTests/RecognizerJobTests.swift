import Foundation
import Synchronization
import Testing

@testable import TalariaReferenceServer

/// A recognizer for tests of the job logic: runs `script` on each photo (the real one is the recognizer service's).
final class ScriptedRecognizer: PhotoRecognizing {
    let calls = Mutex(0)
    let script: @Sendable ([UInt8], @escaping @Sendable (Double, String) async -> Void) async throws -> PhotoRecognition

    init(
        _ script:
            @escaping @Sendable ([UInt8], @escaping @Sendable (Double, String) async -> Void) async throws ->
            PhotoRecognition
    ) {
        self.script = script
    }

    func recognize(photo: [UInt8], progress: @escaping @Sendable (Double, String) async -> Void) async throws
        -> PhotoRecognition
    {
        calls.withLock { $0 += 1 }
        return try await script(photo, progress)
    }
}

/// Holds a step until the test opens it (for a recognizer still reading, or one that hangs).
final class Gate: Sendable {
    private let waiters = Mutex<(open: Bool, continuations: [CheckedContinuation<Void, Never>])>((false, []))

    func wait() async {
        await withCheckedContinuation { continuation in
            let open = waiters.withLock { state in
                if !state.open { state.continuations.append(continuation) }
                return state.open
            }
            if open { continuation.resume() }
        }
    }

    func open() {
        let continuations = waiters.withLock { state in
            state.open = true
            defer { state.continuations = [] }
            return state.continuations
        }
        for continuation in continuations { continuation.resume() }
    }
}

/// A structurally valid baseline JPEG header of `width` x `height` (SOI, SOF0, SOS, a few scan bytes, EOI): enough
/// for the structure check, which decodes no pixel.
func jpegHeader(width: Int, height: Int, end: Bool = true) -> [UInt8] {
    var bytes: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10] + Array("JFIF".utf8) + [0, 1, 1, 0, 0, 1, 0, 1, 0, 0]
    bytes += [
        0xFF, 0xC0, 0x00, 0x11, 0x08, UInt8(height >> 8), UInt8(height & 0xFF), UInt8(width >> 8), UInt8(width & 0xFF),
        3,
    ]
    bytes += [1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1]
    bytes += [0xFF, 0xDA, 0x00, 0x0C, 3, 1, 0, 2, 0x11, 3, 0x11, 0, 0x3F, 0]
    bytes += [0x12, 0x34, 0x56, 0x78, 0x9A]
    if end { bytes += [0xFF, 0xD9] }
    return bytes
}

@Suite struct RecognizerJobTests {
    static let box = BoundingBox(x: 0.1, y: 0.05, width: 0.04, height: 0.8)
    static let hobbit = FoundBook(
        isbn: "9780547928227", title: "The Hobbit", authors: ["J. R. R. Tolkien"], confidence: 0.93, boundingBox: box,
        text: "THE HOBBIT TOLKIEN", source: "catalogue")

    func events(_ server: TestServer, _ job: (id: String, stream: String, token: String)) async throws -> [SSEEvent] {
        parseSSE(try await server.stream(job.stream, token: job.token).text).events
    }

    @Test func progressWhileReadingThenBooksAndUnmatchedSpines() async throws {
        let gate = Gate()
        let recognizer = ScriptedRecognizer { _, progress in
            await progress(0.4, "reading")
            await gate.wait()
            await progress(1, "matching")
            return PhotoRecognition(
                books: [Self.hobbit], unmatched: [UnmatchedSpine(text: "GUIA DE LA MUSCULACION", boundingBox: Self.box)]
            )
        }
        try await withServer(recognizer: recognizer) { server in
            let job = try await server.createJob(image: jpeg("shelf"))
            // While the recognizer reads, the job is processing at its reported progress, with no books yet.
            var status: [String: Any] = [:]
            for _ in 0..<500 {
                status = try #require(
                    try await server.request("GET", "/v3/jobs/scans/\(job.id)").json()["data"] as? [String: Any])
                if status["status"] as? String == "processing" { break }
                try await Task.sleep(for: .milliseconds(5))
            }
            #expect(status["status"] as? String == "processing")
            #expect(status["progress"] as? Double == 0.39)
            #expect(try await server.request("GET", "/v3/jobs/scans/\(job.id)/results").status == 404)
            gate.open()
            #expect(try await server.waitFinished(job.id) == "completed")

            let events = try await events(server, job)
            let names = events.compactMap(\.event)
            #expect(names.first == "progress" && names.last == "completed", "\(names)")
            let reading = try #require(events.firstIndex { $0.json?["message"] as? String == "reading" })
            let result = try #require(events.firstIndex { $0.event == "result" })
            #expect(reading < result, "progress of the reading comes before the books")
            let book = try #require(events[result].json?["book"] as? [String: Any])
            #expect(book["isbn"] as? String == "9780547928227")
            #expect(book["authors"] as? [String] == ["J. R. R. Tolkien"])
            #expect(book["confidence"] as? Double == 0.93)
            #expect(book["text"] as? String == "THE HOBBIT TOLKIEN")
            #expect(book["enrichmentStatus"] as? String == "success")
            let box = try #require(book["boundingBox"] as? [String: Double])
            #expect(box == ["x": 0.1, "y": 0.05, "width": 0.04, "height": 0.8])

            let completed = try #require(events.last?.json)
            #expect((completed["books"] as? [[String: Any]])?.count == 1)
            let unmatched = try #require(completed["unmatched"] as? [[String: Any]])
            #expect(unmatched.first?["text"] as? String == "GUIA DE LA MUSCULACION")
            #expect((unmatched.first?["boundingBox"] as? [String: Double])?["height"] == 0.8)
            #expect((completed["summary"] as? [String: Any])?["unmatchedSpines"] as? Int == 1)

            let results = try #require(
                try await server.request("GET", "/v3/jobs/scans/\(job.id)/results").json()["data"] as? [String: Any])
            #expect((results["results"] as? [[String: Any]])?.first?["title"] as? String == "The Hobbit")
            #expect((results["unmatched"] as? [[String: Any]])?.count == 1)
        }
    }

    @Test func aCrashingRecognizerFailsTheJobRetryableAndTheServerLivesOn() async throws {
        struct WorkerCrashed: Error {}
        let recognizer = ScriptedRecognizer { photo, _ in
            if photo == jpeg("crash") { throw WorkerCrashed() }
            return PhotoRecognition(books: [Self.hobbit])
        }
        try await withServer(recognizer: recognizer) { server in
            let crashed = try await server.createJob(key: "crash", image: jpeg("crash"))
            #expect(try await server.waitFinished(crashed.id) == "failed")
            let failed = try #require(try await events(server, crashed).last)
            #expect(failed.event == "failed")
            let error = try #require(failed.json?["error"] as? [String: Any])
            #expect(error["retryable"] as? Bool == true)
            #expect(error["code"] as? String == "RECOGNIZER_ERROR")
            #expect((error["message"] as? String)?.contains("WorkerCrashed") == true)

            let next = try await server.createJob(key: "next", image: jpeg("fine"))
            #expect(try await server.waitFinished(next.id) == "completed")
            #expect(try await server.stats()["recognitionsFailed"] as? Int == 1)
        }
    }

    @Test func aRecognizerThatRefusesAPhotoSaysWhetherToRetry() async throws {
        let recognizer = ScriptedRecognizer { _, _ in
            throw JobFailure(code: "UNREADABLE_IMAGE", message: "the JPEG data is corrupt", retryable: false)
        }
        try await withServer(recognizer: recognizer) { server in
            let job = try await server.createJob()
            #expect(try await server.waitFinished(job.id) == "failed")
            let error = try #require(try await events(server, job).last?.json?["error"] as? [String: Any])
            #expect(error["retryable"] as? Bool == false && error["code"] as? String == "UNREADABLE_IMAGE")
        }
    }

    @Test func aHungRecognizerFailsItsJobRetryableWhenTheTimeLimitPasses() async throws {
        let clock = TestClock()
        let hang = Gate()
        let recognizer = ScriptedRecognizer { photo, _ in
            // Ignores cancellation, as a step blocked in a read would.
            if photo == jpeg("hang") { await hang.wait() }
            return PhotoRecognition(books: [Self.hobbit])
        }
        defer { hang.open() }
        try await withServer(recognizer: recognizer, clock: clock, { $0.recognitionTimeout = .seconds(90) }) { server in
            let hung = try await server.createJob(key: "hang", image: jpeg("hang"))
            await clock.waitForSleepers(1)
            clock.advance(by: .seconds(89))
            let before = try #require(
                try await server.request("GET", "/v3/jobs/scans/\(hung.id)").json()["data"] as? [String: Any])
            #expect(before["status"] as? String != "failed")
            clock.advance(by: .seconds(1))
            #expect(try await server.waitFinished(hung.id) == "failed")
            let error = try #require(try await events(server, hung).last?.json?["error"] as? [String: Any])
            #expect(error["retryable"] as? Bool == true && error["code"] as? String == "RECOGNIZER_TIMEOUT")

            let next = try await server.createJob(key: "next", image: jpeg("fine"))
            #expect(try await server.waitFinished(next.id) == "completed")
        }
    }

    @Test func aPhotoWithNoTextCompletesWithNoBooks() async throws {
        let recognizer = ScriptedRecognizer { _, progress in
            await progress(1, "reading")
            return PhotoRecognition(books: [])
        }
        try await withServer(recognizer: recognizer) { server in
            let job = try await server.createJob(image: jpeg("blank wall"))
            #expect(try await server.waitFinished(job.id) == "completed")
            let events = try await events(server, job)
            #expect(!events.contains { $0.event == "result" })
            let completed = try #require(events.last)
            #expect(completed.event == "completed")
            #expect((completed.json?["books"] as? [Any])?.isEmpty == true)
            #expect(completed.json?["unmatched"] == nil)
            let results = try #require(
                try await server.request("GET", "/v3/jobs/scans/\(job.id)/results").json()["data"] as? [String: Any])
            #expect(
                (results["results"] as? [Any])?.isEmpty == true && (results["unmatched"] as? [Any])?.isEmpty == true)
        }
    }

    @Test func uploadsAreCheckedBeforeAnyRecognizerSeesThem() async throws {
        let recognizer = ScriptedRecognizer { _, _ in PhotoRecognition(books: []) }
        try await withServer(recognizer: recognizer, { $0.imageCheck = .structure(maxPixels: 40_000_000) }) { server in
            let text = try await server.upload(key: "text", image: Array("not a photo at all".utf8))
            #expect(text.status == 400)
            #expect(text.object?["code"] as? String == "INVALID_FILE")
            #expect((text.object?["detail"] as? String)?.contains("not a JPEG") == true)

            let truncated = try await server.upload(
                key: "cut", image: Array(jpegHeader(width: 4000, height: 3000).prefix(30)))
            #expect(truncated.status == 400)
            #expect((truncated.object?["detail"] as? String)?.contains("truncated") == true, "\(truncated.text)")
            let noEnd = try await server.upload(key: "no-end", image: jpegHeader(width: 4000, height: 3000, end: false))
            #expect(noEnd.status == 400 && noEnd.text.contains("FF D9"))

            // 60 MP: refused from the header, no pixel decoded, and not worth retrying (413 is permanent).
            let huge = try await server.upload(key: "huge", image: jpegHeader(width: 9504, height: 6336))
            #expect(huge.status == 413)
            #expect(huge.object?["code"] as? String == "IMAGE_TOO_LARGE")
            #expect((huge.object?["detail"] as? String)?.contains("9504x6336 (60 MP)") == true, "\(huge.text)")
            #expect(recognizer.calls.withLock { $0 } == 0)
            #expect(try await server.stats()["jobsCreated"] as? Int == 0)

            let fine = try await server.upload(key: "fine", image: jpegHeader(width: 4000, height: 3000))
            #expect(fine.status == 202)
        }
    }

    @Test func theShelfPhotosHeadersAreRead() throws {
        let shelves = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Fixtures/shelves")
        for name in ["one_shelf.jpg", "two_shelves.jpg"] {
            let bytes = try [UInt8](Data(contentsOf: shelves.appendingPathComponent(name)))
            let header = try JPEGHeader.check(bytes, maxPixels: 40_000_000)
            #expect(header.pixels > 1_000_000, "\(name): \(header)")
            #expect(throws: JPEGHeader.Problem.self) { try JPEGHeader.read(bytes.prefix(bytes.count / 2)) }
        }
    }
}
