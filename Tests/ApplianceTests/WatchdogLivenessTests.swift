import Camera
import Foundation
import Logging
import SwiftWingCore
import SwiftWingTesting
import Synchronization
import Testing

@testable import Appliance

/// When the daemon pings systemd's watchdog: only while every part beats or is excused.
@Suite struct WatchdogLivenessTests {
    let clock = ManualClock()

    func monitor(_ parts: [LivenessMonitor.Part]) -> LivenessMonitor {
        LivenessMonitor(parts: parts, staleAfter: .seconds(20))
    }

    @Test func freshHeartbeatsAreAliveAndASilentOneIsStale() {
        let worker = Heartbeat(part: "the processing worker", clock: clock)
        let uplink = Heartbeat(part: "the uplink", clock: clock)
        let check = monitor([
            .init(name: worker.part) { worker.liveness }, .init(name: uplink.part) { uplink.liveness },
        ])
        worker.beat()
        uplink.beat()
        clock.advance(by: .seconds(19))
        uplink.beat()
        #expect(check.check() == .alive(excused: []), "19 s of silence is within the 20 s limit")

        clock.advance(by: .seconds(2))
        guard case .stale(let stale) = check.check() else {
            Issue.record("21 s of silence went unnoticed")
            return
        }
        #expect(stale.map(\.name) == ["the processing worker"], "only the silent part is named")
        #expect(stale.first?.silentFor == .seconds(21))

        worker.beat()
        #expect(check.check() == .alive(excused: []), "a beat brings it back")
    }

    @Test func aPartThatNeverBeatIsExcusedAsStartingNotStale() {
        let uplink = Heartbeat(part: "the uplink", clock: clock)
        clock.advance(by: .seconds(600))
        guard case .alive(let excused) = monitor([.init(name: "uplink") { uplink.liveness }]).check() else {
            Issue.record("a part that has not started yet counted as wedged")
            return
        }
        #expect(excused.count == 1 && excused[0].contains("not started"))
    }

    @Test func theGateLogsAStallOnceAndTheRecoveryOnce() {
        var gate = WatchdogGate()
        let stale = LivenessMonitor.Verdict.stale([.init(name: "the uplink", silentFor: .seconds(25))])
        #expect(gate.decide(.alive(excused: [])) == .init(ping: true, report: nil))
        let first = gate.decide(stale)
        #expect(first.ping == false)
        #expect(first.report == .stale("the uplink (no sign of life for 25 s)"))
        #expect(gate.decide(stale) == .init(ping: false, report: nil), "the same stall is not logged again")
        let worse = gate.decide(
            .stale([
                .init(name: "the uplink", silentFor: .seconds(30)),
                .init(name: "the processing worker", silentFor: .seconds(21)),
            ]))
        #expect(worse.ping == false && worse.report != nil, "another part going silent is news")
        #expect(gate.decide(.alive(excused: [])) == .init(ping: true, report: .recovered))
        #expect(gate.decide(.alive(excused: [])) == .init(ping: true, report: nil))
    }

    @Test func aMissingOrReopeningCameraIsExcusedAStreamingOneMustBeat() async throws {
        let missing = CameraSupervisor(device: "/dev/video7", logger: Logger(label: "test")) {
            throw CameraError.deviceNotFound(device: "/dev/video7")
        }
        let missingRun = Task { try? await missing.run() }
        try await waitUntil { missing.availability == "missing" }
        guard case .excused(let reason) = missing.liveness else {
            Issue.record("a missing camera counted as wedged")
            return
        }
        #expect(reason.contains("not available"))
        missingRun.cancel()
        _ = await missingRun.value

        let fake = FakeFrameSource()
        let supervisor = CameraSupervisor(device: "fake", logger: Logger(label: "test")) { fake }
        let running = Task { try? await supervisor.run() }
        try await waitUntil { supervisor.availability == "streaming" }
        // The loop's turns are stamped on the kernel's clock, as its frames: one 30 s ago is 30 s of silence.
        fake.emit(at: MonotonicInstant.now().advanced(byNanoseconds: -30_000_000_000))
        guard case .beating(let silence) = supervisor.liveness else {
            Issue.record("a streaming camera reported no loop turn")
            return
        }
        #expect(silence >= .seconds(30) && silence < .seconds(3600), "a streaming camera reports its loop's last turn")

        fake.disconnect()
        #expect(supervisor.availability == "reopening")
        guard case .excused = supervisor.liveness else {
            Issue.record("a reopening camera counted as wedged")
            return
        }
        running.cancel()
        _ = await running.value
    }

    @Test func theWorkerBeatsWhileIdleAndFallsSilentWhileAJobIsStuck() async throws {
        let worker = BoundedWorker(name: "test-liveness", capacity: 2, idleWake: .milliseconds(20))
        defer { worker.stop() }
        try await waitUntil { worker.heartbeat.lastBeat != nil }
        let idleBeat = try #require(worker.heartbeat.lastBeat)
        try await waitUntil { (worker.heartbeat.lastBeat ?? idleBeat) > idleBeat }

        let release = DispatchSemaphore(value: 0)
        let started = Mutex(false)
        let slot = try #require(worker.reserve())
        let job = Task {
            try await slot.run {
                started.withLock { $0 = true }
                release.wait()
            }
        }
        // Read the beat only once the job runs: on a loaded machine it may start well after 100 ms.
        try await waitUntil { started.withLock { $0 } }
        let stuckAt = try #require(worker.heartbeat.lastBeat)
        // Ten idle wakes' worth: the worker's thread wakes on a real timeout, so real time must pass.
        try await Task.sleep(for: .milliseconds(200))
        #expect(worker.heartbeat.lastBeat == stuckAt, "no beat while the job blocks the worker's thread")
        release.signal()
        try await job.value
        try await waitUntil { (worker.heartbeat.lastBeat ?? stuckAt) > stuckAt }
    }

    @Test func theWedgeHookIsRefusedUnlessTheDaemonWasStartedWithIt() async throws {
        let worker = BoundedWorker(name: "test-hooks", capacity: 2, idleWake: .milliseconds(20))
        let off = TestHooks(worker: worker, logger: Logger(label: "test"), environment: [:])
        let reply = off.handle(ControlRequest(command: .testWedgeWorker))
        #expect(reply.ok == false)
        #expect(reply.error?.contains("SWIFTWING_TEST_HOOKS=1") == true, "the refusal says how it is turned on")
        #expect(worker.busy == 0, "nothing was wedged")
        try await waitUntil { worker.heartbeat.lastBeat != nil }
        let beat = try #require(worker.heartbeat.lastBeat)
        try await waitUntil { (worker.heartbeat.lastBeat ?? beat) > beat }
        worker.stop()

        // With the hook on, the worker stops beating: this thread is given up for the rest of the run.
        let victim = BoundedWorker(name: "test-wedged", capacity: 2, idleWake: .milliseconds(20))
        let on = TestHooks(worker: victim, logger: Logger(label: "test"), environment: ["SWIFTWING_TEST_HOOKS": "1"])
        #expect(on.handle(ControlRequest(command: .testWedgeWorker)).ok)
        #expect(victim.busy == 1)
        // The wedge starts when the worker's thread gets to it (late on a loaded machine); an idle
        // worker beats every 20 ms, so a beat unchanged over 200 ms means the thread is held.
        var silent = false
        for _ in 0..<20 where !silent {
            let before = victim.heartbeat.lastBeat
            try await Task.sleep(for: .milliseconds(200))  // a real thread's idle wakes: real time must pass
            silent = before != nil && victim.heartbeat.lastBeat == before
        }
        #expect(silent, "the wedged worker kept beating")
    }

    private func waitUntil(_ condition: () -> Bool) async throws {
        // Polls parts that run on threads of their own: there is nothing to await.
        for _ in 0..<500 where !condition() { try await Task.sleep(for: .milliseconds(10)) }
        try #require(condition())
    }
}
