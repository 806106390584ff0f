import Foundation
import Testing

@testable import Talaria

@Suite("Retry and backoff policy")
struct RetryPolicyTests {
    private let now = Date(timeIntervalSince1970: 1_800_000_000)

    private func response(_ status: Int, _ body: String = "", headers: HTTPFields = [:]) -> TransferOutcome {
        .response(status: status, headers: headers, body: Array(body.utf8))
    }

    @Test("transient: connect errors, timeouts, drops, 5xx, 408, retryable:true, 404, 409")
    func transient() {
        let outcomes: [TransferOutcome] = [
            .connectFailed(detail: "Could not resolve host"), .timedOut(detail: "after 30 s"),
            .connectionLost(detail: "reset by peer"), response(500), response(502, "<html>Bad Gateway</html>"),
            response(503, #"{"code":"CIRCUIT_OPEN"}"#), response(408),
            response(400, #"{"code":"PROVIDER_TIMEOUT","retryable":true}"#), response(404), response(409),
        ]
        for outcome in outcomes {
            guard case .transient = RetryPolicy.classify(outcome, now: now) else {
                Issue.record("\(outcome) should be transient, is \(RetryPolicy.classify(outcome, now: now))")
                continue
            }
        }
        #expect(RetryPolicy.classify(response(202), now: now) == .success)
    }

    @Test("permanent with the server's reason: 400 invalid file, 413; 401 and 403 are unauthorized")
    func permanent() {
        let invalid = RetryPolicy.classify(
            response(400, #"{"code":"INVALID_FILE","detail":"not a JPEG","retryable":false}"#), now: now)
        guard case .permanent(let reason) = invalid else {
            Issue.record("\(invalid)")
            return
        }
        #expect(reason.contains("INVALID_FILE: not a JPEG"))
        #expect(reason.contains("swiftwing queue retry"))
        let tooLarge = RetryPolicy.classify(
            response(413, #"{"code":"FILE_TOO_LARGE","title":"Image exceeds 10 MB"}"#), now: now)
        guard case .permanent(let large) = tooLarge else {
            Issue.record("\(tooLarge)")
            return
        }
        #expect(large.contains("FILE_TOO_LARGE: Image exceeds 10 MB"))
        #expect(large.contains("JPEG quality"))
        let unauthorized = RetryPolicy.classify(response(401, #"{"code":"UNAUTHORIZED"}"#), now: now)
        guard case .unauthorized(let why) = unauthorized else {
            Issue.record("\(unauthorized)")
            return
        }
        #expect(why.contains("api-key"))
        #expect(!why.contains("Bearer"))
        guard case .unauthorized = RetryPolicy.classify(response(403), now: now) else {
            Issue.record("403")
            return
        }
    }

    @Test("429 → rate limited until the computed instant, from body, headers or the 60 s default")
    func rateLimited() {
        let limited = RetryPolicy.classify(
            response(
                429, #"{"error":"Too many","code":"RATE_LIMIT_EXCEEDED","details":{"retryAfter":10}}"#,
                headers: ["Retry-After": "20"]), now: now)
        #expect(limited == .rateLimited(until: now + 20, reason: limited.reason!, busy: false))
        #expect(limited.reason!.contains("20 s"))
        guard case .rateLimited(let until, _, _) = RetryPolicy.classify(response(429), now: now) else {
            Issue.record("429 without hints")
            return
        }
        #expect(until == now + 60)
    }

    @Test("503 with Retry-After → every upload waits that long (a busy recognizer); without it → transient")
    func busyWithRetryAfter() {
        let busy = RetryPolicy.classify(
            response(
                503, #"{"title":"Service unavailable","code":"BUSY","retryable":true}"#, headers: ["Retry-After": "10"]),
            now: now)
        #expect(busy == .rateLimited(until: now + 10, reason: busy.reason!, busy: true))
        #expect(busy.reason!.contains("busy") && busy.reason!.contains("10 s"))
        guard case .transient = RetryPolicy.classify(response(503), now: now) else {
            Issue.record("503 without Retry-After")
            return
        }
        guard case .transient = RetryPolicy.classify(response(500, headers: ["Retry-After": "10"]), now: now) else {
            Issue.record("500 with Retry-After")
            return
        }
    }

    @Test("a pause's reason names what waits: uploads (and presses keep queueing), or catalogue lookups")
    func pauseReasonNamesWhatWaits() {
        let limited = response(429, headers: ["Retry-After": "30"])
        let upload = RetryPolicy.classify(limited, operation: "the upload", now: now).reason ?? ""
        let lookup = RetryPolicy.classify(limited, operation: "the catalogue lookup", now: now).reason ?? ""
        #expect(upload.hasSuffix("; uploads pause for 30 s, presses keep queueing"), "\(upload)")
        #expect(lookup.hasSuffix("; catalogue lookups pause for 30 s"), "\(lookup)")
        #expect(!lookup.contains("upload") && !lookup.contains("presses"), "\(lookup)")
    }

    @Test("backoff 1 s, 2 s, 4 s with ±20 % jitter; three attempts, then the next round")
    func backoffSequence() {
        let low = RetryPolicy(random: { 0 })
        let high = RetryPolicy(random: { 0.999_999_9 })
        let middle = RetryPolicy(random: { 0.5 })
        let failure = OutcomeClass.transient(reason: "offline")
        #expect(middle.decide(after: failure, attemptInRound: 1, now: now) == .retry(at: now + 1, attemptInRound: 2))
        #expect(middle.decide(after: failure, attemptInRound: 2, now: now) == .retry(at: now + 2, attemptInRound: 3))
        #expect(
            middle.decide(after: failure, attemptInRound: 3, now: now)
                == .nextRound(notBefore: now + 4, reason: "offline"))
        #expect(low.delay(afterFailure: 1) == 0.8)
        #expect(abs(high.delay(afterFailure: 3) - 4.8) < 0.001)
        #expect(low.delay(afterFailure: 9) == 3.2)  // beyond the table: the last step
        #expect(middle.nextRoundStart(after: now) == now + 180)
        #expect(low.nextRoundStart(after: now) == now + 144)
    }

    @Test("jitter spreads waits over the whole ±20 % band")
    func jitterSpread() {
        let counter = Counter()
        let policy = RetryPolicy(random: { counter.next() })
        let delays = (0..<100).map { _ in policy.delay(afterFailure: 2) }
        #expect(delays.allSatisfy { $0 >= 1.6 && $0 < 2.4 })
        #expect(delays.min()! < 1.65 && delays.max()! > 2.35)
    }

    @Test("decisions: permanent fails, unauthorized flagged, 429 pauses all without counting an attempt")
    func decisions() {
        let policy = RetryPolicy(random: { 0.5 })
        #expect(policy.decide(after: .success, attemptInRound: 2, now: now) == .done)
        #expect(
            policy.decide(after: .permanent(reason: "bad"), attemptInRound: 1, now: now)
                == .fail(reason: "bad", unauthorized: false))
        #expect(
            policy.decide(after: .unauthorized(reason: "key"), attemptInRound: 1, now: now)
                == .fail(reason: "key", unauthorized: true))
        #expect(
            policy.decide(after: .rateLimited(until: now + 30, reason: "r", busy: true), attemptInRound: 3, now: now)
                == .pauseAll(until: now + 30, reason: "r", busy: true))
    }

    @Test("the rate-limit gate keeps the longest pause and counts down")
    func gate() {
        var gate = RateLimitGate()
        #expect(!gate.isPaused(at: now))
        gate.pause(until: now + 30)
        gate.pause(until: now + 10)  // a shorter pause does not shorten it
        #expect(gate.pausedUntil == now + 30)
        #expect(gate.remaining(at: now + 0.5) == 30)
        #expect(gate.isPaused(at: now + 29))
        #expect(!gate.isPaused(at: now + 30))
        #expect(gate.remaining(at: now + 31) == 0)
    }
}

/// 0, 0.01, 0.02, … 0.99, 0, … — a deterministic spread for the jitter test.
private final class Counter: @unchecked Sendable {
    private var value = 0
    private let lock = NSLock()

    func next() -> Double {
        lock.lock()
        defer { lock.unlock() }
        defer { value = (value + 1) % 100 }
        return Double(value) / 100
    }
}
