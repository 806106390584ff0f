import Foundation
import Testing

@testable import Talaria

private let base = URL(string: "https://api.example.org/")!

@Suite("Tolerant JSON and upload envelopes (docs/protocol.md §1)")
struct UploadEnvelopeTests {
    @Test("JSONValue tells booleans from numbers and reads numbers written as strings")
    func jsonValue() throws {
        let json = try JSONValue.parse(#"{"a":true,"b":1,"c":0,"d":"0.5","e":null,"f":9780441013593}"#, what: "test")
        #expect(json["a"] == .bool(true))
        #expect(json["b"] == .number(1))
        #expect(json["c"]?.boolValue == nil)  // 0 is not false
        #expect(json["d"]?.doubleValue == 0.5)
        #expect(json["e"]?.isNull == true)
        #expect(json["f"]?.stringValue == "9780441013593")  // an ISBN sent as a number
        #expect(json.jsonText == #"{"a":true,"b":1,"c":0,"d":"0.5","e":null,"f":9780441013593}"#)
    }

    @Test("shape 1: jobId, sseUrl, authToken, statusUrl — relative URLs resolved against the base")
    func shapeOne() throws {
        let body = #"""
            {"success":true,"data":{"jobId":"j-1","sseUrl":"/v3/jobs/scans/j-1/stream","authToken":"tok",
            "statusUrl":"https://other.example.org/v3/jobs/scans/j-1"},
            "metadata":{"timestamp":"2026-11-21T13:00:00Z","requestId":"req-9"},
            "_links":{"self":"/v3/jobs/scans/j-1","stream":"/ignored","cancel":"/v3/jobs/scans/j-1"}}
            """#
        let accepted = try UploadAccepted.decode(body.bytes, base: base)
        #expect(accepted.jobID == "j-1")
        #expect(accepted.streamURL?.absoluteString == "https://api.example.org/v3/jobs/scans/j-1/stream")
        #expect(accepted.streamToken == "tok")
        #expect(accepted.statusURL.absoluteString == "https://other.example.org/v3/jobs/scans/j-1")
        #expect(accepted.resultsURL.absoluteString == "https://api.example.org/v3/jobs/scans/j-1/results")
        #expect(accepted.cancelURL?.absoluteString == "https://api.example.org/v3/jobs/scans/j-1")
        #expect(accepted.requestID == "req-9")
        #expect(!accepted.needsPolling)
    }

    @Test("shape 2: jobId, status, streamUrl, token (null) — base with a path prefix")
    func shapeTwo() throws {
        let prefixed = URL(string: "https://api.example.org/talaria/")!
        let body = #"{"success":true,"data":{"jobId":"j-2","status":"initialized","streamUrl":"v3/jobs/scans/j-2/events","token":null}}"#
        let accepted = try UploadAccepted.decode(body.bytes, base: prefixed)
        #expect(accepted.status == .queued)
        #expect(accepted.streamURL?.absoluteString == "https://api.example.org/talaria/v3/jobs/scans/j-2/events")
        #expect(accepted.streamToken == nil)
        #expect(accepted.statusURL.absoluteString == "https://api.example.org/talaria/v3/jobs/scans/j-2")
    }

    @Test("shape 3: jobId and status only → polling; _links.stream used when data has no stream")
    func shapeThree() throws {
        let polling = try UploadAccepted.decode(#"{"success":true,"data":{"jobId":"j-3","status":"queued"}}"#.bytes, base: base)
        #expect(polling.needsPolling)
        #expect(polling.statusURL.absoluteString == "https://api.example.org/v3/jobs/scans/j-3")
        let linked = try UploadAccepted.decode(
            #"{"data":{"jobId":"j-4"},"_links":{"stream":{"href":"/v3/jobs/scans/j-4/stream"}}}"#.bytes, base: base)
        #expect(linked.streamURL?.absoluteString == "https://api.example.org/v3/jobs/scans/j-4/stream")
        // No envelope at all, and a numeric job id.
        let bare = try UploadAccepted.decode(#"{"jobId":12345,"status":"processing"}"#.bytes, base: base)
        #expect(bare.jobID == "12345")
        #expect(bare.status == .processing)
    }

    @Test("a stream URL with a non-HTTP scheme is not followed")
    func schemeGuard() throws {
        let accepted = try UploadAccepted.decode(#"{"data":{"jobId":"j","sseUrl":"file:///etc/passwd"}}"#.bytes, base: base)
        #expect(accepted.streamURL == nil)
        #expect(accepted.needsPolling)
    }

    @Test("HTML instead of JSON is a typed error quoting the start of the page, with advice")
    func htmlInsteadOfJSON() {
        let html = "<!DOCTYPE html>\n<html><head><title>Wi-Fi login</title></head><body>Please sign in to continue…</body></html>"
        #expect {
            try UploadAccepted.decode(html.bytes, base: base)
        } throws: { error in
            guard case TalariaDecodingError.notJSON(_, let prefix) = error else { return false }
            let text = "\(error)"
            return prefix.hasPrefix("\"<!DOCTYPE html> <html>") && text.contains("captive portal")
                && text.contains("the upload response is not JSON")
        }
        #expect(throws: TalariaDecodingError.notJSON(what: "the upload response", prefix: "nothing (an empty body)")) {
            try UploadAccepted.decode([UInt8](), base: base)
        }
    }

    @Test("JSON without a job id is a typed error naming the field")
    func missingJobID() {
        #expect {
            try UploadAccepted.decode(#"{"success":true,"data":{"status":"queued"}}"#.bytes, base: base)
        } throws: { error in
            guard case TalariaDecodingError.missingField(_, let field, _) = error else { return false }
            return field == "data.jobId"
        }
    }
}

@Suite("Error bodies and Retry-After (docs/protocol.md §1)")
struct ProblemAndRetryAfterTests {
    private let now = Date(timeIntervalSince1970: 1_800_000_000)

    @Test("RFC 9457 problem details, every field")
    func fullProblem() {
        let body = #"""
            {"type":"https://api.example.org/problems/invalid-file","title":"Invalid file","status":400,
             "detail":"photos[0] is not a JPEG","instance":"/v3/jobs/scans","code":"INVALID_FILE","retryable":false,
             "errors":[{"field":"photos[]","message":"unsupported type"},"second"]}
            """#
        let problem = ProblemDetails.decode(body.bytes)
        #expect(problem.status == 400)
        #expect(problem.code == "INVALID_FILE")
        #expect(problem.retryable == false)
        #expect(problem.errors == ["photos[]: unsupported type", "second"])
        #expect(problem.reason == "INVALID_FILE: photos[0] is not a JPEG (photos[]: unsupported type; second)")
    }

    @Test("partial and plain JSON error bodies, and the non-RFC 429 body")
    func tolerantProblems() {
        #expect(ProblemDetails.decode(#"{"code":"CIRCUIT_OPEN"}"#.bytes).reason == "CIRCUIT_OPEN")
        #expect(ProblemDetails.decode(#"{"message":"boom"}"#.bytes).reason == "boom")
        #expect(ProblemDetails.decode(#"{}"#.bytes).reason == "no reason given")
        let nonRFC = ProblemDetails.decode(
            #"{"error":"Too many requests","code":"RATE_LIMIT_EXCEEDED","details":{"retryAfter":42}}"#.bytes)
        #expect(nonRFC.code == "RATE_LIMIT_EXCEEDED")
        #expect(nonRFC.title == "Too many requests")
        #expect(nonRFC.retryAfterSeconds == 42)
        let nested = ProblemDetails.decode(#"{"error":{"code":"PROVIDER_TIMEOUT","message":"slow","retryable":true}}"#.bytes)
        #expect(nested.code == "PROVIDER_TIMEOUT")
        #expect(nested.retryable == true)
        #expect(nested.detail == "slow")
        let html = ProblemDetails.decode("<html><body>502 Bad Gateway</body></html>".bytes)
        #expect(html.reason.contains("not JSON"))
        #expect(html.reason.contains("502 Bad Gateway"))
    }

    @Test("Retry-After: the longest of body ms, header seconds or date, X-RateLimit-Reset; 60 s by default")
    func retryAfter() {
        let problem = ProblemDetails(retryAfterMilliseconds: 5_000)
        #expect(RetryAfter.resumeInstant(problem: problem, headers: [:], now: now) == now + 5)
        #expect(RetryAfter.resumeInstant(problem: problem, headers: ["retry-after": "30"], now: now) == now + 30)
        let date = "Fri, 15 Jan 2027 08:00:00 GMT"  // 1_800_000_000 is 2027-01-15T08:00:00Z
        #expect(RetryAfter.resumeInstant(problem: nil, headers: ["Retry-After": date], now: now - 100) == now)
        let resetMs = String(Int64((now.timeIntervalSince1970 + 90) * 1000))
        #expect(RetryAfter.resumeInstant(
            problem: problem, headers: ["Retry-After": "30", "X-RateLimit-Reset": resetMs], now: now) == now + 90)
        #expect(RetryAfter.resumeInstant(problem: nil, headers: [:], now: now) == now + 60)
        #expect(RetryAfter.resumeInstant(problem: ProblemDetails(), headers: ["Retry-After": "soon"], now: now) == now + 60)
        // Non-RFC details.retryAfter (seconds) counts too.
        #expect(RetryAfter.resumeInstant(problem: ProblemDetails(retryAfterSeconds: 42), headers: [:], now: now) == now + 42)
        // Epoch seconds and small delta values in X-RateLimit-Reset.
        #expect(RetryAfter.resumeInstant(problem: nil, headers: ["X-RateLimit-Reset": "1800000020"], now: now) == now + 20)
        #expect(RetryAfter.resumeInstant(problem: nil, headers: ["X-RateLimit-Reset": "15"], now: now) == now + 15)
        // A date in the past means "now"; an absurd one is capped at a day.
        #expect(RetryAfter.resumeInstant(problem: nil, headers: ["Retry-After": "Sun, 06 Nov 1994 08:49:37 GMT"], now: now) == now)
        #expect(RetryAfter.resumeInstant(problem: nil, headers: ["Retry-After": "99999999"], now: now) == now + 86_400)
    }
}

@Suite("Status and results responses (docs/protocol.md §4)")
struct StatusAndResultsTests {
    @Test("status: aliases folded, progress in either scale, error read")
    func status() throws {
        let running = try JobStatusResponse.decode(#"{"success":true,"data":{"jobId":"j","status":"processing","progress":45}}"#.bytes)
        #expect(running.status == .processing)
        #expect(running.progress == 0.45)
        #expect(!running.status.isTerminal)
        let canceled = try JobStatusResponse.decode(#"{"data":{"status":"cancelled","error":{"code":"CANCELED"}}}"#.bytes)
        #expect(canceled.status == .canceled)
        #expect(canceled.status.isTerminal)
        #expect(canceled.error?.code == "CANCELED")
        #expect(JobStatus(tolerating: "Complete") == .completed)
        #expect(JobStatus(tolerating: "mystery") == .other("mystery"))
        #expect(throws: TalariaDecodingError.self) { try JobStatusResponse.decode("<html>".bytes) }
    }

    @Test("results: books under results or books, bad ones skipped with a warning")
    func results() throws {
        let body = #"""
            {"success":true,"data":{"jobId":"j","status":"completed","results":[
              {"isbn":"9780441013593","title":"Dune","authors":["Frank Herbert"],"confidence":0.97},
              42,
              {"title":"  ","isbn":""}
            ]}}
            """#
        let response = try JobResultsResponse.decode(body.bytes)
        #expect(response.status == .completed)
        #expect(response.books.map(\.title) == ["Dune"])
        #expect(response.warnings.count == 2)
        let books = try JobResultsResponse.decode(#"{"data":{"books":[{"title":"Emma","author":"Jane Austen"}]}}"#.bytes)
        #expect(books.books.first?.authors == ["Jane Austen"])
    }
}

@Suite("Endpoints and the upload request (docs/protocol.md §1, §4)")
struct RequestTests {
    @Test("endpoints under a base with or without a trailing slash or path prefix")
    func endpoints() {
        let plain = TalariaEndpoints(base: URL(string: "https://api.example.org")!)
        #expect(plain.upload.absoluteString == "https://api.example.org/v3/jobs/scans")
        let prefixed = TalariaEndpoints(base: URL(string: "https://example.org/talaria")!)
        #expect(prefixed.job("j 1").absoluteString == "https://example.org/talaria/v3/jobs/scans/j%201")
        #expect(prefixed.results("j").absoluteString == "https://example.org/talaria/v3/jobs/scans/j/results")
        #expect(prefixed.cleanup("j").absoluteString == "https://example.org/talaria/v3/jobs/scans/j/cleanup")
        #expect(TalariaEndpoints.allowsPlainHTTP(URL(string: "http://127.0.0.1:8080/")!))
        #expect(TalariaEndpoints.allowsPlainHTTP(URL(string: "http://[::1]:8080/")!))
        #expect(TalariaEndpoints.allowsPlainHTTP(URL(string: "http://localhost/")!))
        #expect(!TalariaEndpoints.allowsPlainHTTP(URL(string: "http://api.example.org/")!))
        #expect(!TalariaEndpoints.allowsPlainHTTP(URL(string: "http://127.0.0.1.evil.example/")!))
        #expect(TalariaEndpoints.allowsPlainHTTP(URL(string: "https://api.example.org/")!))
    }

    @Test("multipart body: one photos[] part named spine.jpg; headers carry ids and the key, redacted for logs")
    func uploadRequest() throws {
        let scan = UUID(uuidString: "5E1F0C4A-0000-4000-8000-000000000001")!
        let device = UUID(uuidString: "D0D0D0D0-0000-4000-8000-000000000002")!
        let jpeg: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0, 0x0D, 0x0A, 0xFF, 0xD9]
        let request = ScanUploadRequest(
            endpoints: TalariaEndpoints(base: URL(string: "https://api.example.org/")!), idempotencyKey: scan.uuidString.lowercased(), deviceID: device,
            jpeg: jpeg, apiKey: "sk-secret", version: "0.1.0", boundary: "BOUNDARY")
        let expected = Array("--BOUNDARY\r\nContent-Disposition: form-data; name=\"photos[]\"; filename=\"spine.jpg\"\r\n".utf8)
            + Array("Content-Type: image/jpeg\r\n\r\n".utf8) + jpeg + Array("\r\n--BOUNDARY--\r\n".utf8)
        #expect(request.body == expected)
        let headers = Dictionary(uniqueKeysWithValues: request.headers.map { ($0.name, $0.value) })
        #expect(headers["Idempotency-Key"] == "5e1f0c4a-0000-4000-8000-000000000001")
        #expect(headers["X-Device-ID"] == "d0d0d0d0-0000-4000-8000-000000000002")
        #expect(headers["Authorization"] == "Bearer sk-secret")
        #expect(headers["Content-Type"] == "multipart/form-data; boundary=BOUNDARY")
        #expect(headers["User-Agent"] == "swiftwing/0.1.0")
        #expect(!request.redactedHeaders.map(\.value).joined().contains("sk-secret"))
        let anonymous = ScanUploadRequest(
            endpoints: TalariaEndpoints(base: URL(string: "https://api.example.org/")!), idempotencyKey: scan.uuidString.lowercased(), deviceID: device,
            jpeg: jpeg, apiKey: nil, version: "0.1.0")
        #expect(!anonymous.headers.contains { $0.name == "Authorization" })
    }
}

@Suite("JSON reader")
struct JSONReaderTests {
    private func read(_ text: String) -> JSONValue? { try? JSONValue.parse(text, what: "test") }

    @Test("values, nesting, whitespace, numbers")
    func values() {
        #expect(read(#" { "a" : [1, -2.5, 3e2, 0, -0.0, 1E-2, true, false, null, "x"] , "b":{}, "c":[] } "#)
            == .object([
                "a": .array([.number(1), .number(-2.5), .number(300), .number(0), .number(-0.0), .number(0.01),
                             .bool(true), .bool(false), .null, .string("x")]),
                "b": .object([:]), "c": .array([]),
            ]))
        #expect(read("123456789012345678901234567890") == .number(1.2345678901234568e29))
        #expect(read("9007199254740993")?.doubleValue == 9007199254740992)  // beyond 2^53: Double rounding
        #expect(read(#"{"a":1,"a":2}"#) == .object(["a": .number(2)]))
    }

    @Test("string escapes, surrogate pairs, lone surrogates, UTF-8")
    func strings() {
        #expect(read(#""a\"b\\c\/d\b\f\n\r\t""#) == .string("a\"b\\c/d\u{8}\u{C}\n\r\t"))
        #expect(read(#""\u00e9\u20AC\ud83d\ude00""#) == .string("é€😀"))
        #expect(read(#""\ud83d x""#) == .string("\u{FFFD} x"))
        #expect(read(#""\ude00""#) == .string("\u{FFFD}"))
        #expect(read(#""\ud83d\u0041""#) == .string("\u{FFFD}A"))
        #expect(read("\"ノルウェイの森 📚\"") == .string("ノルウェイの森 📚"))
    }

    @Test("jsonText writes what the reader reads back, escapes included")
    func roundTrip() throws {
        let value = JSONValue.object([
            "s": .string("quote \" backslash \\ nl \n tab \t bell \u{7} é 😀"), "n": .number(-1.25), "i": .number(42),
            "a": .array([.null, .bool(false)]),
        ])
        #expect(value.jsonText.contains(#"\u0007"#))
        #expect(try JSONValue.parse(value.jsonText, what: "round trip") == value)
    }

    @Test("what is not JSON is refused")
    func invalid() {
        for text in [
            "", " ", "<html>", "{", "[1,]", "{\"a\":}", "{\"a\" 1}", "01", "1.", ".5", "-", "1e", "tru", "nul",
            "\"abc", "\"\\x\"", "\"\\u12\"", "{} {}", "[1] x", "{a:1}", "'a'", "NaN", "+1",
            String(repeating: "[", count: 300) + String(repeating: "]", count: 300),
        ] {
            #expect(read(text) == nil, "\(text.prefix(20)) should be refused")
        }
        #expect(read(String(repeating: "[", count: 200) + String(repeating: "]", count: 200)) != nil)
    }

    @Test("agrees with JSONSerialization on the recorded stream's events")
    func agreesWithFoundation() throws {
        for event in parse(Fixtures.jobStream).events {
            let ours = try? JSONValue.parse(event.data, what: "event")
            let foundation = try? JSONSerialization.jsonObject(with: Data(event.data.utf8), options: [.fragmentsAllowed])
            #expect((ours == nil) == (foundation == nil), "\(event)")
            if let ours, let foundation {
                let reencoded = try JSONSerialization.data(withJSONObject: foundation, options: [.sortedKeys, .fragmentsAllowed])
                let roundTrip = try JSONValue.parse(Array(reencoded), what: "re-encoded")
                #expect(ours == roundTrip, "\(event)")
            }
        }
    }
}
