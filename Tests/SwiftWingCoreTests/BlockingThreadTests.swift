import Dispatch
import Synchronization
import Testing

@testable import SwiftWingCore

/// Holds the thread in a job until the test opens it, so the jobs behind it stay queued.
private final class Gate: Sendable {
    private let entered = DispatchSemaphore(value: 0)
    private let opened = DispatchSemaphore(value: 0)

    /// The job: says it started, then waits to be let through.
    func hold() {
        entered.signal()
        opened.wait()
    }

    /// Blocks until the job is inside; off the cooperative pool.
    func waitUntilHeld() async {
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                self.entered.wait()
                continuation.resume()
            }
        }
    }

    func open() { opened.signal() }
}

@Suite struct BlockingThreadTests {
    @Test func jobsRunOnTheNamedThreadInTheOrderSubmitted() async throws {
        let thread = BlockingThread(name: "sw-test-order")
        defer { thread.shutdown() }
        let order = Mutex<[Int]>([])
        let gate = Gate()
        thread.submit { _ in gate.hold() }
        await gate.waitUntilHeld()
        for index in 0..<20 {
            thread.submit { state in
                if state == .active { order.withLock { $0.append(index) } }
            }
        }
        gate.open()
        let name = try await thread.runIfActive { DeviceThread.currentName }
        #expect(name == "sw-test-order")
        #expect(order.withLock { $0 } == Array(0..<20))
    }

    @Test func aJobsErrorReachesTheCaller() async throws {
        struct Broken: Error {}
        let thread = BlockingThread(name: "sw-test-error")
        defer { thread.shutdown() }
        await #expect(throws: Broken.self) { try await thread.runIfActive { throw Broken() } }
        #expect(try await thread.runIfActive { 6 * 7 } == 42, "the thread runs on after a failed job")
    }

    @Test func shutdownRunsTheQueuedJobsThenRefusesNewOnesAndEnds() async throws {
        let thread = BlockingThread(name: "sw-test-drain")
        let gate = Gate()
        thread.submit { _ in gate.hold() }
        await gate.waitUntilHeld()
        let queued = Task { try await thread.run { "ran" } }
        // The queued job is in before the shutdown: wait until the thread has it.
        while !thread.hasQueuedJobs { await Task.yield() }
        thread.shutdown()
        #expect(thread.isShutDown)
        await #expect(throws: BlockingThread.Inactive.self) { try await thread.run { "too late" } }
        await #expect(throws: BlockingThread.Inactive.self) { try await thread.runIfActive { "too late" } }
        let refused = Mutex<BlockingThread.JobState?>(nil)
        thread.submit { state in refused.withLock { $0 = state } }
        #expect(refused.withLock { $0 } == .cancelled, "told at once, on the caller's thread")
        gate.open()
        #expect(try await queued.value == "ran", "a job submitted before the shutdown still runs")
        await thread.waitUntilFinished()
        thread.join()
    }

    @Test func aTaskCancelledWhileItsJobWaitsGetsCancellationAndTheJobNeverRuns() async throws {
        let thread = BlockingThread(name: "sw-test-cancel")
        defer { thread.shutdown() }
        let gate = Gate()
        thread.submit { _ in gate.hold() }
        await gate.waitUntilHeld()
        let ran = Atomic<Bool>(false)
        let waiting = Task { try await thread.runIfActive { ran.store(true, ordering: .relaxed) } }
        while !thread.hasQueuedJobs { await Task.yield() }
        waiting.cancel()
        await #expect(throws: CancellationError.self) { try await waiting.value }
        #expect(!thread.hasQueuedJobs, "the cancelled job left the queue at once, while the thread is still held")
        gate.open()
        _ = try await thread.runIfActive { () }
        let didRun = ran.load(ordering: .relaxed)
        #expect(!didRun)
    }

    @Test func aStartedJobRunsToItsEndAndRunIgnoresCancellation() async throws {
        let thread = BlockingThread(name: "sw-test-finish")
        defer { thread.shutdown() }
        let gate = Gate()
        let started = Task {
            try await thread.runIfActive {
                gate.hold()
                return "finished"
            }
        }
        await gate.waitUntilHeld()
        started.cancel()
        let committed = Task { try await thread.run { "committed" } }
        while !thread.hasQueuedJobs { await Task.yield() }
        committed.cancel()
        gate.open()
        #expect(try await started.value == "finished", "cancelled after it began: its result stands")
        #expect(try await committed.value == "committed", "run(_:) is not skipped by a cancellation")
    }

    @Test func anAlreadyCancelledTaskIsRefusedWithoutQueueing() async throws {
        let thread = BlockingThread(name: "sw-test-early")
        defer { thread.shutdown() }
        let ran = Atomic<Bool>(false)
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await thread.runIfActive { ran.store(true, ordering: .relaxed) }
        }
        await #expect(throws: CancellationError.self) { try await task.value }
        _ = try await thread.runIfActive { () }
        let didRun = ran.load(ordering: .relaxed)
        #expect(!didRun)
    }

    @Test func theBeatRunsBeforeEveryJobAndOnIdleWakes() async throws {
        let beats = Atomic<Int>(0)
        let thread = BlockingThread(name: "sw-test-beat", idleWake: .milliseconds(5)) {
            _ = beats.add(1, ordering: .relaxed)
        }
        defer { thread.shutdown() }
        let before = try await thread.run { beats.load(ordering: .relaxed) }
        #expect(before >= 1, "a beat before the job")
        // No job: only the idle wake can beat. Waits for it (a real thread's timer), no fixed sleep.
        while beats.load(ordering: .relaxed) < before + 3 { await Task.yield() }
    }

    @Test func droppingTheLastReferenceEndsTheThread() async {
        var thread: BlockingThread? = BlockingThread(name: "sw-test-drop")
        let finished = thread!.finishedSignal
        thread = nil
        await finished.wait()
        #expect(finished.isComplete)
    }

    @Test func synchronousCodeWaitsForATasksResult() async throws {
        struct Refused: Error, Equatable {}
        let thread = BlockingThread(name: "sw-test-bridge")
        defer { thread.shutdown() }
        // From a thread of its own, never the cooperative pool.
        let answers = try await thread.runIfActive {
            (
                BlockingThread.waitForTask { () async -> Int in
                    await Task.yield()
                    return 42
                },
                BlockingThread.waitForTask { () async throws(Refused) -> Int in throw Refused() }
            )
        }
        #expect(answers.0.get() == 42)
        #expect(throws: Refused.self) { try answers.1.get() }
    }
}
