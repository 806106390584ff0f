import Foundation
import Talaria
import Testing

@testable import Uplink

@Suite("Connectivity tracker: states, the rate-limit gate, the unauthorized hold (pure, no clock)")
struct ConnectivityTrackerTests {
    private let t0 = Date(timeIntervalSince1970: 1_800_000_000)
    private let refused = TransferOutcome.connectFailed(detail: "connection refused")
    private let busy = TransferOutcome.response(status: 503, headers: HTTPFields([]), body: [])

    @Test("unknown until the first answer, then online; the return from unknown or offline is announced once")
    func onlineAndOffline() {
        var tracker = ConnectivityTracker()
        #expect(tracker.connectivity(at: t0) == .unknown)
        #expect(tracker.answered(at: t0) == .init(connectivity: .online, problem: nil, cameBack: true))
        #expect(tracker.answered(at: t0) == nil, "no change, no announcement")

        let offline = tracker.note(refused, verdict: .transient(reason: "cannot connect"), at: t0)
        #expect(
            offline
                == .init(connectivity: .offline(reason: "cannot connect"), problem: "cannot connect", cameBack: false))
        #expect(tracker.lastProblem == "cannot connect")
        #expect(!tracker.uploadsHeld(at: t0), "offline is no hold: the retry policy paces the uploads")
        #expect(tracker.answered(at: t0 + 5)?.cameBack == true)
        #expect(tracker.connectivity(at: t0 + 5) == .online)
    }

    @Test("a transient HTTP answer is a problem worth showing but the backend is reachable")
    func transientAnswer() {
        var tracker = ConnectivityTracker()
        let change = tracker.note(busy, verdict: .transient(reason: "HTTP 503 busy"), at: t0)
        #expect(change?.connectivity == .online)
        #expect(tracker.lastProblem == "HTTP 503 busy")
    }

    @Test("429: rate-limited until the deadline, uploads held, countdown rounded up; online after, without a new input")
    func rateLimitGate() {
        var tracker = ConnectivityTracker()
        _ = tracker.answered(at: t0)
        let until = t0 + 30
        let change = tracker.pause(until: until, busy: false, reason: "HTTP 429", at: t0)
        #expect(change == .init(connectivity: .rateLimited(until: until), problem: "HTTP 429", cameBack: false))
        #expect(tracker.lastProblem == "HTTP 429")
        #expect(tracker.uploadsHeld(at: t0 + 29.9))
        #expect(tracker.pausedUntil(at: t0 + 10) == until)
        #expect(tracker.gate.remaining(at: t0 + 0.5) == 30)
        #expect(tracker.gate.remaining(at: t0 + 29.5) == 1)
        #expect(tracker.connectivity(at: t0 + 29.9) == .rateLimited(until: until))

        #expect(!tracker.uploadsHeld(at: until))
        #expect(tracker.pausedUntil(at: until) == nil)
        #expect(tracker.gate.remaining(at: until) == 0)
        #expect(tracker.connectivity(at: until) == .online)
    }

    @Test("one announcement per pause: more 429s while paused extend it silently; a 429 after it is a new one")
    func oneAnnouncementPerPause() {
        var tracker = ConnectivityTracker()
        _ = tracker.answered(at: t0)
        #expect(
            tracker.pause(until: t0 + 2, busy: false, reason: "first", at: t0)?.connectivity
                == .rateLimited(until: t0 + 2))
        #expect(tracker.pause(until: t0 + 2, busy: false, reason: "same", at: t0) == nil)
        #expect(tracker.pause(until: t0 + 5, busy: false, reason: "later", at: t0 + 1) == nil)
        #expect(tracker.pausedUntil(at: t0 + 3) == t0 + 5, "extended all the same")
        #expect(tracker.answered(at: t0 + 4) == nil)
        #expect(tracker.connectivity(at: t0 + 5) == .online)
        #expect(
            tracker.pause(until: t0 + 9, busy: false, reason: "again", at: t0 + 6)?.connectivity
                == .rateLimited(until: t0 + 9)
        )
    }

    @Test("a shorter pause never shortens a longer one; a network failure during the pause shows after it")
    func overlappingPauses() {
        var tracker = ConnectivityTracker()
        _ = tracker.pause(until: t0 + 60, busy: false, reason: "first", at: t0)
        _ = tracker.pause(until: t0 + 10, busy: false, reason: "second", at: t0 + 1)
        #expect(tracker.pausedUntil(at: t0 + 30) == t0 + 60)
        _ = tracker.note(refused, verdict: .transient(reason: "cannot connect"), at: t0 + 30)
        #expect(
            tracker.connectivity(at: t0 + 30) == .rateLimited(until: t0 + 60), "the pause is what the panel counts down"
        )
        #expect(tracker.connectivity(at: t0 + 60) == .offline(reason: "cannot connect"))
    }

    @Test("a busy backend's pause reads busy, not rate-limited; the longer of two pauses says which it is")
    func busyPause() {
        var tracker = ConnectivityTracker()
        _ = tracker.answered(at: t0)
        let change = tracker.pause(until: t0 + 10, busy: true, reason: "HTTP 503 busy", at: t0)
        #expect(change == .init(connectivity: .busy(until: t0 + 10), problem: "HTTP 503 busy", cameBack: false))
        #expect(tracker.uploadsHeld(at: t0 + 9.9))
        #expect(tracker.connectivity(at: t0 + 10) == .online)

        _ = tracker.pause(until: t0 + 60, busy: false, reason: "HTTP 429", at: t0 + 20)
        #expect(tracker.pause(until: t0 + 30, busy: true, reason: "HTTP 503", at: t0 + 21) == nil, "one announcement")
        #expect(tracker.connectivity(at: t0 + 40) == .rateLimited(until: t0 + 60), "the 429's pause is the longer")
        #expect(tracker.pause(until: t0 + 90, busy: true, reason: "HTTP 503", at: t0 + 41) == nil)
        #expect(tracker.connectivity(at: t0 + 50) == .busy(until: t0 + 90), "now the 503's is")
        #expect(UplinkConnectivity.busy(until: t0).description == "busy")
    }

    @Test("a refused key holds uploads past any answer until another key or a person lifts it")
    func unauthorizedHold() {
        var tracker = ConnectivityTracker()
        _ = tracker.answered(at: t0)
        let change = tracker.refuse(key: "bad-key", reason: "HTTP 401 bad key", at: t0)
        #expect(change?.connectivity == .unauthorized(reason: "HTTP 401 bad key"))
        #expect(tracker.holdsForKey)
        #expect(tracker.uploadsHeld(at: t0 + 86_400), "a hold has no deadline")
        #expect(tracker.answered(at: t0 + 1) == nil, "an answer does not lift it")
        _ = tracker.pause(until: t0 + 30, busy: false, reason: "HTTP 429", at: t0 + 2)
        #expect(tracker.uploadsHeld(at: t0 + 60), "the hold outlasts a pause")

        #expect(!tracker.keyReplaced(by: "bad-key"))
        #expect(tracker.keyReplaced(by: "good-key"))
        #expect(tracker.liftKeyHold(at: t0 + 40) == .init(connectivity: .unknown, problem: nil, cameBack: false))
        #expect(!tracker.holdsForKey)
        #expect(!tracker.uploadsHeld(at: t0 + 40))
        #expect(tracker.liftKeyHold(at: t0 + 41) == nil, "nothing to lift")
        #expect(!tracker.keyReplaced(by: "good-key"), "no hold, nothing replaced")
        #expect(tracker.answered(at: t0 + 42)?.cameBack == true)
    }

    @Test("an unreadable key file holds uploads until the file holds a key")
    func unreadableKey() {
        var tracker = ConnectivityTracker()
        _ = tracker.refuse(key: nil, reason: "the API key file cannot be used", at: t0)
        #expect(tracker.uploadsHeld(at: t0))
        #expect(tracker.keyReplaced(by: "any-key"))
    }
}
