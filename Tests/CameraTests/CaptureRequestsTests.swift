import Camera
import SwiftWingCore
import Testing

@Suite struct CaptureRequestsTests {
    func instant(_ milliseconds: UInt64) -> MonotonicInstant {
        MonotonicInstant(nanoseconds: 1_000_000_000_000 + milliseconds * 1_000_000)
    }

    @Test func aStaleFrameNeverSatisfiesAPress() {
        // Given a press at t=100 ms
        var requests = CaptureRequests<String>()
        requests.add(id: 1, after: instant(100), deadline: instant(5_000), waiter: "press")
        // When frames taken before the press arrive (queued before it), then they are not wanted
        #expect(!requests.wantsFrame(at: instant(33)))
        #expect(requests.takeSatisfied(by: instant(99)).isEmpty)
        #expect(requests.count == 1)
        // Then the first frame at or after the press is
        #expect(requests.wantsFrame(at: instant(100)))
        #expect(requests.takeSatisfied(by: instant(100)) == ["press"])
        #expect(requests.isEmpty)
        // And a later frame finds nobody waiting
        #expect(requests.takeSatisfied(by: instant(133)).isEmpty)
    }

    @Test func eachRequestGetsTheFirstFrameAtOrAfterItsOwnPress() {
        var requests = CaptureRequests<String>()
        requests.add(id: 1, after: instant(100), deadline: instant(5_000), waiter: "early")
        requests.add(id: 2, after: instant(150), deadline: instant(5_000), waiter: "late")
        requests.add(id: 3, after: instant(120), deadline: instant(5_000), waiter: "middle")
        #expect(requests.takeSatisfied(by: instant(90)).isEmpty)
        #expect(requests.takeSatisfied(by: instant(125)) == ["early", "middle"])
        #expect(!requests.wantsFrame(at: instant(149)))
        #expect(requests.takeSatisfied(by: instant(160)) == ["late"])
        #expect(requests.isEmpty)
    }

    @Test func deadlinesExpireAndCancellationRemoves() {
        var requests = CaptureRequests<Int>()
        requests.add(id: 1, after: instant(0), deadline: instant(1_000), waiter: 1)
        requests.add(id: 2, after: instant(0), deadline: instant(500), waiter: 2)
        requests.add(id: 3, after: instant(0), deadline: instant(2_000), waiter: 3)
        #expect(requests.nextDeadline == instant(500))
        #expect(requests.takeExpired(at: instant(499)).isEmpty)
        #expect(requests.takeExpired(at: instant(1_000)) == [1, 2])
        #expect(requests.remove(id: 3) == 3)
        #expect(requests.remove(id: 3) == nil)
        #expect(requests.nextDeadline == nil)
    }

    @Test func takeAllEmpties() {
        var requests = CaptureRequests<Int>()
        requests.add(id: 1, after: instant(10), deadline: instant(20), waiter: 7)
        requests.add(id: 2, after: instant(10), deadline: instant(20), waiter: 8)
        #expect(requests.takeAll() == [7, 8])
        #expect(requests.isEmpty)
    }
}
