import Testing

@testable import SwiftWingCore

@Suite struct CompletionSignalTests {
    @Test func waitersResumeWhenItCompletesAndLaterWaitsReturnAtOnce() async {
        let signal = CompletionSignal()
        let waiter = Task { await signal.wait() }
        #expect(!signal.isComplete)
        signal.complete()
        await waiter.value
        await signal.wait()
        #expect(
            await signal.wait(until: .now - .seconds(1), on: ContinuousClock()),
            "complete already: the deadline does not matter")
    }

    @Test func aDeadlineEndsTheWaitWithoutCompletion() async {
        let signal = CompletionSignal()
        let deadline = ContinuousClock.now + .milliseconds(30)
        #expect(await signal.wait(until: deadline, on: ContinuousClock()) == false)
        #expect(ContinuousClock.now >= deadline)
    }

    @Test func cancellingTheWaitingTaskEndsItsWait() async {
        let signal = CompletionSignal()
        let waiter = Task { await signal.wait() }
        waiter.cancel()
        await waiter.value
        #expect(!signal.isComplete)
    }
}
