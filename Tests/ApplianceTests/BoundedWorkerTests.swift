import Foundation
import Logging
import SwiftWingCore
import Synchronization
import Testing

@testable import Appliance

@Suite struct BoundedWorkerTests {
    @Test func aFullWorkerRefusesAtOnceAndFreesSlotsWhenJobsEnd() async throws {
        let worker = BoundedWorker(name: "test-worker", capacity: 2)
        defer { worker.stop() }
        let first = try #require(worker.reserve())
        let second = try #require(worker.reserve())
        #expect(worker.reserve() == nil, "a third reservation must be refused, not queued")
        let result = try await first.run { 21 * 2 }
        #expect(result == 42)
        #expect(worker.busy == 1)
        second.release()
        #expect(worker.busy == 0)
        #expect(worker.reserve() != nil)
    }

    @Test func jobsRunOffTheCallersThread() async throws {
        let worker = BoundedWorker(name: "sw-test-thread", capacity: 1)
        defer { worker.stop() }
        let name = try await #require(worker.reserve()).run { DeviceThread.currentName }
        #expect(name == "sw-test-thread")
    }

    @Test func stoppingWaitsForTheJobInFlightWithoutPolling() async throws {
        let worker = BoundedWorker(name: "sw-test-drain", capacity: 1)
        let reservation = try #require(worker.reserve())
        final class Flag: Sendable { let raised = Atomic<Bool>(false) }
        let jobDone = Flag()
        let job = Task {
            try await reservation.run {
                usleep(100_000)  // blocking work on the worker's thread, as a JPEG encode is
                jobDone.raised.store(true, ordering: .releasing)
            }
        }
        while worker.busy == 0 { await Task.yield() }
        worker.stop()
        #expect(worker.reserve() == nil, "a stopped worker takes no new press")
        await worker.waitUntilFinished()
        let finishedFirst = jobDone.raised.load(ordering: .acquiring)
        #expect(finishedFirst, "the job past its capture finished before the worker did")
        try await job.value
        await worker.waitUntilFinished()  // a second wait returns at once
    }

    @Test func waitingForTheWorkerEndsWhenTheTaskIsCancelled() async throws {
        let worker = BoundedWorker(name: "sw-test-cancel", capacity: 1)
        let reservation = try #require(worker.reserve())  // held: the worker cannot finish
        worker.stop()
        let waiter = Task { await worker.waitUntilFinished() }
        waiter.cancel()
        await waiter.value
        reservation.release()
        await worker.waitUntilFinished()
    }

    @Test func errorsFromTheJobReachTheCaller() async throws {
        struct Boom: Error {}
        let worker = BoundedWorker(name: "test-worker", capacity: 1)
        defer { worker.stop() }
        await #expect(throws: Boom.self) { try await #require(worker.reserve()).run { throw Boom() } }
        #expect(worker.busy == 0)
    }
}
