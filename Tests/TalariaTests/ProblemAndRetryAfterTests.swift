import Foundation
import Testing

@testable import Talaria

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
        let nested = ProblemDetails.decode(
            #"{"error":{"code":"PROVIDER_TIMEOUT","message":"slow","retryable":true}}"#.bytes)
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
        #expect(
            RetryAfter.resumeInstant(
                problem: problem, headers: ["Retry-After": "30", "X-RateLimit-Reset": resetMs], now: now) == now + 90)
        #expect(RetryAfter.resumeInstant(problem: nil, headers: [:], now: now) == now + 60)
        #expect(
            RetryAfter.resumeInstant(problem: ProblemDetails(), headers: ["Retry-After": "soon"], now: now) == now + 60)
        // Non-RFC details.retryAfter (seconds) counts too.
        #expect(
            RetryAfter.resumeInstant(problem: ProblemDetails(retryAfterSeconds: 42), headers: [:], now: now) == now + 42
        )
        // Epoch seconds and small delta values in X-RateLimit-Reset.
        #expect(
            RetryAfter.resumeInstant(problem: nil, headers: ["X-RateLimit-Reset": "1800000020"], now: now) == now + 20)
        #expect(RetryAfter.resumeInstant(problem: nil, headers: ["X-RateLimit-Reset": "15"], now: now) == now + 15)
        // A date in the past means "now"; an absurd one is capped at a day.
        #expect(
            RetryAfter.resumeInstant(problem: nil, headers: ["Retry-After": "Sun, 06 Nov 1994 08:49:37 GMT"], now: now)
                == now)
        #expect(RetryAfter.resumeInstant(problem: nil, headers: ["Retry-After": "99999999"], now: now) == now + 86_400)
    }
}
