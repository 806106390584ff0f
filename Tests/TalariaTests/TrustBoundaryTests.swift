import Foundation
import Testing

@testable import Talaria

/// What the device takes from a backend it does not control (docs/protocol.md §1–§4): where the API key may
/// go, which URLs it follows, what a job id may hold, how much one job may bring.
@Suite("Trust boundaries of the backend's answers")
struct TrustBoundaryTests {
    private let endpoints = TalariaEndpoints(base: URL(string: "https://api.example.org/talaria")!)
    private let base = URL(string: "https://api.example.org/")!
    private let t0 = Date(timeIntervalSince1970: 1_800_000_000)

    @Test("the backend's origin: scheme, host and port, default ports normalised, host case ignored")
    func origin() {
        let same = [
            "https://api.example.org/v3/jobs/scans/j/stream", "https://API.example.org:443/other",
            "https://api.example.org:443/talaria/x",
        ]
        for text in same { #expect(endpoints.isBackendOrigin(URL(string: text)!), "\(text)") }
        let other = [
            "http://api.example.org/v3/jobs/scans/j/stream", "https://api.example.org:8443/x",
            "https://stream.example.org/x", "https://api.example.org.evil.test/x", "https://evil.test/api.example.org",
        ]
        for text in other { #expect(!endpoints.isBackendOrigin(URL(string: text)!), "\(text)") }
        let loopback = TalariaEndpoints(base: URL(string: "http://127.0.0.1:8080/")!)
        #expect(loopback.isBackendOrigin(URL(string: "http://127.0.0.1:8080/s")!))
        #expect(!loopback.isBackendOrigin(URL(string: "http://127.0.0.1:8081/s")!))
        #expect(!loopback.isBackendOrigin(URL(string: "http://localhost:8080/s")!))
        let plain = TalariaEndpoints(base: URL(string: "http://localhost/")!)
        #expect(plain.isBackendOrigin(URL(string: "http://localhost:80/x")!))
    }

    @Test("the API key only to the backend's origin; elsewhere the job's token or no Authorization")
    func bearer() {
        let home = URL(string: "https://api.example.org/v3/jobs/scans/j")!
        let away = URL(string: "https://stream.example.org/j")!
        #expect(endpoints.bearer(for: home, apiKey: "key", jobToken: "tok", preferJobToken: false) == "key")
        #expect(endpoints.bearer(for: home, apiKey: "key", jobToken: "tok", preferJobToken: true) == "tok")
        #expect(endpoints.bearer(for: home, apiKey: "key", jobToken: nil, preferJobToken: true) == "key")
        #expect(endpoints.bearer(for: home, apiKey: nil, jobToken: "tok", preferJobToken: false) == "tok")
        #expect(endpoints.bearer(for: away, apiKey: "key", jobToken: "tok", preferJobToken: false) == "tok")
        #expect(endpoints.bearer(for: away, apiKey: "key", jobToken: nil, preferJobToken: true) == nil)
        #expect(endpoints.bearer(for: away, apiKey: "key", jobToken: "", preferJobToken: true) == nil)
    }

    @Test("server URLs: https anywhere, http to loopback; another scheme or plain http elsewhere is refused")
    func serverURLs() {
        #expect(
            ServerURL("/v3/jobs/scans/j/stream", field: "f", base: base).url?.absoluteString
                == "https://api.example.org/v3/jobs/scans/j/stream")
        #expect(ServerURL("https://cdn.example.net/s", field: "f", base: base).url != nil)
        #expect(ServerURL("http://127.0.0.1:9000/s", field: "f", base: base).url != nil)
        #expect(ServerURL("http://[::1]:9000/s", field: "f", base: base).url != nil)
        #expect(ServerURL("", field: "f", base: base) == .absent)
        #expect(ServerURL(nil, field: "f", base: base) == .absent)
        for refused in [
            "http://collector.example.org/s", "ftp://api.example.org/s", "file:///etc/passwd",
            "gopher://127.0.0.1/x", "http://127.0.0.1.evil.test/s",
        ] {
            let url = ServerURL(refused, field: "data.streamUrl", base: base)
            #expect(url.url == nil, "\(refused)")
            #expect(url.refusal?.contains("data.streamUrl") == true, "\(refused)")
        }
        // Relative to a plain-http loopback base, a scheme-relative URL to another host is plain http there.
        let loopback = URL(string: "http://127.0.0.1:8080/")!
        #expect(ServerURL("//evil.test/s", field: "f", base: loopback).refusal != nil)
    }

    @Test("an upload answer naming a URL the device does not follow carries the refusal; one that is fine does not")
    func uploadRefusal() throws {
        let stream = try UploadAccepted.decode(
            #"{"data":{"jobId":"j","streamUrl":"http://collector.example.org/s","token":"t"}}"#.bytes, base: base)
        #expect(stream.streamURL == nil)
        #expect(stream.refusal?.contains("data.streamUrl \"http://collector.example.org/s\"") == true)
        let status = try UploadAccepted.decode(
            #"{"data":{"jobId":"j","statusUrl":"ftp://x.example/j"}}"#.bytes, base: base)
        #expect(status.refusal?.contains("data.statusUrl") == true)
        #expect(status.statusURL.absoluteString == "https://api.example.org/v3/jobs/scans/j")
        let link = try UploadAccepted.decode(
            #"{"data":{"jobId":"j"},"_links":{"stream":{"href":"http://10.0.0.5/s"}}}"#.bytes, base: base)
        #expect(link.refusal?.contains("_links.stream") == true)
        let fine = try UploadAccepted.decode(
            #"{"data":{"jobId":"j","sseUrl":"https://stream.example.net/j","statusUrl":"/v3/jobs/scans/j"}}"#.bytes,
            base: base)
        #expect(fine.refusal == nil)
        #expect(fine.streamURL?.absoluteString == "https://stream.example.net/j")
    }

    @Test("a job id is one path segment: separators, dots, their percent-encodings and control characters are refused")
    func jobIDs() throws {
        for good in ["j-1", "4f6c0a4e-7a2b-4c55-9d1e-1b2c3d4e5f60", "job.v2", "a..b", "100%", "%41bc"] {
            #expect(jobIDProblem(good) == nil, "\(good)")
            #expect(try UploadAccepted.decode(#"{"data":{"jobId":"\#(good)"}}"#.bytes, base: base).jobID == good)
        }
        let bad = [
            "../admin", "a/b", #"a\\b"#, ".", "..", "%2e%2e", "%2E%2E%2Fadmin", "a%2Fb", "a%5cb", "%252F",
            #"a\u0000b"#, #"a\nb"#, #"a\u007fb"#, "%0a",
        ]
        for id in bad {
            #expect(throws: TalariaDecodingError.self, "\(id)") {
                try UploadAccepted.decode(#"{"data":{"jobId":"\#(id)"}}"#.bytes, base: base)
            }
        }
        do {
            _ = try UploadAccepted.decode(#"{"data":{"jobId":"../../admin"}}"#.bytes, base: base)
            Issue.record("accepted")
        } catch {
            #expect("\(error)".contains("\"data.jobId\": it holds a path separator"))
        }
    }

    @Test("the library's limits: 200 books per job, 64 KiB of JSON per book")
    func limits() {
        let book = TalariaBook(title: "A", rawJSON: #"{"title":"A"}"#)
        #expect(TalariaLimits.violation(in: Array(repeating: book, count: 200)) == nil)
        #expect(TalariaLimits.violation(in: Array(repeating: book, count: 201))?.contains("201 books") == true)
        let big = TalariaBook(title: "B", rawJSON: "\"" + String(repeating: "x", count: 65_535) + "\"")
        #expect(TalariaLimits.violation(in: [big])?.contains("65537 bytes") == true)
        let edge = TalariaBook(title: "C", rawJSON: "\"" + String(repeating: "x", count: 65_534) + "\"")
        #expect(TalariaLimits.violation(in: [edge]) == nil)
    }

    @Test("a stream with 201 books in result events stops at the limit: over the limit, no completion")
    func streamOverLimit() {
        var stream = JobStream(jobID: "j", base: base)
        stream.connected(now: t0)
        var events = ""
        for index in 0..<201 {
            events += "id: \(index)\nevent: result\ndata: {\"title\":\"Book \(index)\",\"confidence\":0.9}\n\n"
        }
        events += "id: 999\nevent: completed\ndata: {\"jobId\":\"j\",\"status\":\"completed\"}\n\n"
        let actions = stream.receive(events.bytes, now: t0)
        #expect(
            actions.contains {
                if case .overLimit(let reason) = $0 { reason.contains("201 books") } else { false }
            })
        #expect(!actions.contains { if case .complete = $0 { true } else { false } })
        #expect(stream.finished)
    }

    @Test("a completed event whose resultsUrl is refused: the job is refused, its results are not fetched there")
    func completedWithRefusedResultsURL() {
        var stream = JobStream(jobID: "j", base: base)
        stream.connected(now: t0)
        let event = "event: completed\ndata: {\"jobId\":\"j\",\"resultsUrl\":\"http://collector.example.org/r\"}\n\n"
        let actions = stream.receive(event.bytes, now: t0)
        #expect(
            actions.contains {
                if case .refusedURL(let reason) = $0 { reason.contains("resultsUrl") } else { false }
            })
        #expect(!actions.contains { if case .fetchResults = $0 { true } else { false } })
    }
}
