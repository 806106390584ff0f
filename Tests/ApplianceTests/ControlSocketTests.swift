import Foundation
import Logging
import SwiftWingCore
import Synchronization
import Testing
@testable import Appliance

/// Runs a blocking call (a socket client) on a thread of its own, never on the cooperative pool:
/// the server's handler needs a pool thread to answer, so blocking one here could starve it.
func offThePool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread.detachNewThread { continuation.resume(with: Result { try body() }) }
    }
}

@Suite struct ControlSocketTests {
    private func socketPath() -> String { NSTemporaryDirectory() + "sw-\(UUID().uuidString.prefix(8)).sock" }

    @Test func aRequestIsAnsweredOverARealUnixSocketWithMode0660() async throws {
        let path = socketPath()
        let server = try ControlSocketServer(path: path, logger: Logger(label: "test")) { request in
            #expect(request.command == .shutter)
            return ControlReply(ok: true, scanId: "abc")
        }
        let thread = Thread { server.serve() }
        thread.start()
        defer { server.stop() }
        var status = stat()
        #expect(stat(path, &status) == 0)
        #expect(status.st_mode & 0o777 == 0o660)
        let reply = try await offThePool { try ControlClient.send(ControlRequest(command: .shutter), to: path) }
        #expect(reply == ControlReply(ok: true, scanId: "abc"))
    }

    @Test func aSecondServerOnALiveSocketIsRefused() throws {
        let path = socketPath()
        let server = try ControlSocketServer(path: path, logger: Logger(label: "test")) { _ in ControlReply(ok: true) }
        let thread = Thread { server.serve() }
        thread.start()
        defer { server.stop() }
        #expect(throws: ControlSocketError.self) {
            _ = try ControlSocketServer(path: path, logger: Logger(label: "test")) { _ in ControlReply(ok: true) }
        }
    }

    @Test func aStaleSocketFileIsReplaced() async throws {
        let path = socketPath()
        _ = FileManager.default.createFile(atPath: path, contents: nil)
        let server = try ControlSocketServer(path: path, logger: Logger(label: "test")) { _ in ControlReply(ok: true) }
        let thread = Thread { server.serve() }
        thread.start()
        defer { server.stop() }
        #expect(try await offThePool { try ControlClient.send(ControlRequest(command: .status), to: path) }.ok)
    }

    @Test func noDaemonGivesAdviceNamingTheSocket() {
        let path = socketPath()
        do {
            _ = try ControlClient.send(ControlRequest(command: .shutter), to: path)
            Issue.record("expected an error")
        } catch {
            #expect(error.description.contains(path))
            #expect(error.description.contains("swiftwing run"))
        }
    }
}

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
                usleep(100_000)
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

@Suite struct JournalFieldTests {
    @Test func metadataKeysBecomeValidJournalFieldNames() {
        #expect(JournalLogHandler.journalFieldName("scan_id") == "SCAN_ID")
        #expect(JournalLogHandler.journalFieldName("press-to-frame.ms") == "PRESS_TO_FRAME_MS")
        #expect(JournalLogHandler.journalFieldName("_private") == "PRIVATE")
        #expect(JournalLogHandler.journalFieldName("9lives") == "F9LIVES")
        #expect(JournalLogHandler.syslogPriority(.error) == 3)
    }
}
