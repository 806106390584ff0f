import Foundation
import HTTPEngine
import Store
import SwiftWingTesting
import Talaria
import Testing

@testable import Uplink

/// The API key goes only to backend.url's origin; URLs and answers from the backend are checked before they
/// are followed or committed (docs/protocol.md §1–§4). The origin tests run the real engine against real
/// servers on two loopback ports.
@Suite("Credentials and a hostile backend")
struct CredentialAndTrustTests {
    static let book = #"{"isbn":"9780262033848","title":"Introduction to Algorithms","confidence":0.95}"#

    /// `backend` answers the upload with `accepted(foreign)`, status and results for job `job-x`, and cleanups;
    /// `foreign` (another port, so another origin) answers the stream and status requests it is sent.
    private static func run(
        accepted: @escaping @Sendable (String) -> String, step: TimeInterval = 0.25
    ) async throws -> (backend: LoopbackHTTPServer, foreign: LoopbackHTTPServer, scan: ScanRecord) {
        let foreign = try LoopbackHTTPServer { request in
            if request.target.hasSuffix("/stream") {
                return .init(
                    status: 200, contentType: "text/event-stream",
                    body: "id: 1\nevent: completed\ndata: {\"jobId\":\"job-x\",\"books\":[\(book)]}\n\n")
            }
            return .init(status: 200, body: #"{"success":true,"data":{"jobId":"job-x","status":"completed"}}"#)
        }
        let foreignURL = foreign.url
        let backend = try LoopbackHTTPServer { request in
            switch (request.method, request.target) {
            case ("POST", _): .init(status: 202, body: accepted(foreignURL))
            case ("GET", let target) where target.hasSuffix("/job-x/results"):
                .init(status: 200, body: #"{"success":true,"data":{"jobId":"job-x","results":[\#(book)]}}"#)
            case ("DELETE", _): .init(status: 204, body: "")
            default: .init(status: 404, body: "{}")
            }
        }
        let engine = CurlEngine()
        defer { engine.shutdown() }
        let harness = try UplinkHarness(
            base: URL(string: backend.url + "/")!, transport: engine,
            script: { _, _ in .response(status: 500, body: "") })
        harness.start()
        let queued = try harness.queueScan()
        try await harness.advance("the scan is done", step: step, upTo: 120) {
            let record = try harness.scan(queued.id)
            return record.state == .done && !record.cleanupPending
        }
        await harness.stop()
        #expect(try harness.database.library.books().map(\.isbn13) == ["9780262033848"])
        return (backend, foreign, try harness.scan(queued.id))
    }

    @Test("a stream URL on another origin without a job token gets no Authorization; the backend gets the key")
    func foreignStreamWithoutToken() async throws {
        let (backend, foreign, _) = try await Self.run { foreign in
            #"{"success":true,"data":{"jobId":"job-x","status":"queued","#
                + #""streamUrl":"\#(foreign)/v3/jobs/scans/job-x/stream","token":null}}"#
        }
        let stream = try #require(foreign.requests.first { $0.target.hasSuffix("/stream") })
        #expect(stream.header("Authorization") == nil)
        #expect(foreign.requests.allSatisfy { $0.header("Authorization") == nil })
        let upload = try #require(backend.requests.first { $0.method == "POST" })
        #expect(upload.header("Authorization") == "Bearer sk-test-key")
        let cleanup = try #require(backend.requests.first { $0.method == "DELETE" })
        #expect(cleanup.target == "/v3/jobs/scans/job-x/cleanup")
        #expect(cleanup.header("Authorization") == "Bearer sk-test-key")
    }

    @Test("a stream URL on another origin gets the job's token, never the key")
    func foreignStreamWithToken() async throws {
        let (_, foreign, _) = try await Self.run { foreign in
            #"{"success":true,"data":{"jobId":"job-x","#
                + #""sseUrl":"\#(foreign)/v3/jobs/scans/job-x/stream","authToken":"tok-x"}}"#
        }
        let stream = try #require(foreign.requests.first { $0.target.hasSuffix("/stream") })
        #expect(stream.header("Authorization") == "Bearer tok-x")
    }

    @Test("a status URL on another origin is polled without the key; the results come from the backend with it")
    func foreignStatusPolledWithoutKey() async throws {
        let (backend, foreign, _) = try await Self.run(accepted: { foreign in
            #"{"success":true,"data":{"jobId":"job-x","status":"queued","statusUrl":"\#(foreign)/jobs/job-x"}}"#
        })
        let poll = try #require(foreign.requests.first)
        #expect(poll.target == "/jobs/job-x")
        #expect(foreign.requests.allSatisfy { $0.header("Authorization") == nil })
        let results = try #require(backend.requests.first { $0.target.hasSuffix("/results") })
        #expect(results.header("Authorization") == "Bearer sk-test-key")
    }

    @Test("a stream URL that is plain http to another host fails the scan with the reason; the photo stays")
    func plainHTTPStreamRefused() async throws {
        let harness = try UplinkHarness { request, _ in
            if request.method == .post {
                return .response(
                    status: 202,
                    body: #"{"success":true,"data":{"jobId":"job-h","#
                        + #""streamUrl":"http://collector.example.org/s","token":"t"}}"#)
            }
            return .response(status: 404, body: "{}")
        }
        harness.start()
        let scan = try harness.queueScan()
        try await harness.eventually("the scan failed") { try harness.scan(scan.id).state == .failed }
        await harness.stop()
        let record = try harness.scan(scan.id)
        #expect(record.lastError?.contains("http://collector.example.org/s") == true)
        #expect(record.lastError?.contains("neither https nor http to a loopback address") == true)
        #expect(harness.backend.requests.allSatisfy { $0.url.host != "collector.example.org" })
        #expect(FileManager.default.fileExists(atPath: harness.spool.path(of: scan.imagePath)))
    }

    @Test("a job id that is not one path segment makes the answer malformed: nothing is requested at that path")
    func traversingJobID() async throws {
        let harness = try UplinkHarness { request, _ in
            if request.method == .post {
                return .response(
                    status: 202, body: #"{"success":true,"data":{"jobId":"..%2F..%2Fadmin","status":"queued"}}"#)
            }
            return .response(status: 404, body: "{}")
        }
        harness.start()
        let scan = try harness.queueScan()
        try await harness.eventually("the answer was refused and the upload waits to be sent again") {
            let record = try harness.scan(scan.id)
            return record.state == .queued && record.lastError != nil
        }
        await harness.stop()
        #expect(harness.backend.requests.allSatisfy { $0.method == .post })
        let record = try harness.scan(scan.id)
        #expect(record.jobID == nil)
        #expect(record.lastError?.contains("data.jobId") == true)
    }

    @Test("201 books in one job: the scan needs attention with the reason, nothing lands, the photo stays")
    func tooManyBooks() async throws {
        let books = (0..<201).map { #"{"title":"Book \#($0)","confidence":0.9}"# }
        let harness = try UplinkHarness { request, _ in
            if request.method == .post { return .response(status: 202, body: Talk.accepted(job: "job-many")) }
            if request.url.path.hasSuffix("/stream") {
                return .stream(chunks: [Talk.completed(job: "job-many", id: 1, books: books)])
            }
            return .response(status: 404, body: "{}")
        }
        harness.start()
        let scan = try harness.queueScan()
        try await harness.eventually("the scan needs attention") { try harness.scan(scan.id).state == .needsAttention }
        await harness.stop()
        #expect(try harness.scan(scan.id).lastError?.contains("201 books, more than the 200") == true)
        #expect(try harness.database.library.bookCount() == 0)
        #expect(FileManager.default.fileExists(atPath: harness.spool.path(of: scan.imagePath)))
    }

    @Test("a book of more than 64 KiB of JSON from the results endpoint: the scan needs attention, nothing lands")
    func oversizedBookFromResults() async throws {
        let huge = #"{"title":"Big","confidence":0.9,"notes":""# + String(repeating: "x", count: 70_000) + #""}"#
        let harness = try UplinkHarness { request, _ in
            if request.method == .post {
                return .response(status: 202, body: Talk.accepted(job: "job-big", stream: false))
            }
            if request.url.path.hasSuffix("/results") {
                return .response(status: 200, body: #"{"success":true,"data":{"results":[\#(huge)]}}"#)
            }
            return .response(status: 200, body: #"{"success":true,"data":{"status":"completed"}}"#)
        }
        harness.start()
        let scan = try harness.queueScan()
        try await harness.advance("the scan needs attention", upTo: 60) {
            try harness.scan(scan.id).state == .needsAttention
        }
        await harness.stop()
        #expect(try harness.scan(scan.id).lastError?.contains("more than 65536 (64 KiB)") == true)
        #expect(try harness.database.library.bookCount() == 0)
    }
}
