import Foundation
import SwiftWingTesting
import Testing

/// SIGKILL at random moments while presses keep coming and the reference backend injects
/// transient faults; afterwards nothing acknowledged is lost, nothing is done twice.
/// `SWIFTWING_KILLS` sets the number of kills (scripts/kill-storm.sh runs 200), `SWIFTWING_KILL_SEED`
/// replays the random choices of a printed run.
@Suite(.serialized) struct KillStormTests {
    /// Faults that delay or break one request but never fail a scan for good, and leave the books alone.
    static let transientFaults = [
        "upload:slow:800", "upload:500", "upload:503", "upload:drop", "upload:html",
        "stream:drop-after:1", "stream:drop-after:3", "stream:slow:300", "stream:duplicate-terminal",
        "status:500", "results:500", "cleanup:slow:1500", "cleanup:500",
    ]

    @Test func everyAcknowledgedPressEndsAsOneDoneScanWithOneJobAcrossAKillStorm() throws {
        let environment = ProcessInfo.processInfo.environment
        let kills = environment["SWIFTWING_KILLS"].flatMap(Int.init) ?? 30
        let seed = environment["SWIFTWING_KILL_SEED"].flatMap(UInt64.init) ?? UInt64.random(in: 1...UInt64.max)
        print("kill storm: \(kills) kills, seed \(seed) (replay with SWIFTWING_KILL_SEED=\(seed))")
        var random = SeededGenerator(seed: seed)
        let started = Date()

        // Given the real daemon on the synthetic camera and the real backend, faults on
        let backend = try BackendHarness(arguments: ["--recognition-delay-ms", "1200"])
        try backend.start()
        let harness = try DaemonHarness.forBackend(backend)
        try harness.startDaemon(width: 640, height: 480)
        let presser = Presser(harness: harness, seed: random.next())
        presser.start()

        // When the daemon is killed at random moments, presses and uploads in flight
        var landed: [String: Int] = [:]
        for _ in 1...kills {
            if random.unit() < 0.6 {
                try backend.queueFaults([Self.transientFaults[Int(random.next() % UInt64(Self.transientFaults.count))]])
            }
            Thread.sleep(forTimeInterval: 0.05 + 2.0 * random.unit())
            let pressInFlight = presser.isPressing
            harness.killDaemon(signal: SIGKILL)
            let stages = try Self.stagesAtKill(
                queue: harness.queue(), backend: backend.stats(), pressInFlight: pressInFlight)
            for stage in stages { landed[stage, default: 0] += 1 }
            try harness.startDaemon(width: 640, height: 480)
        }
        presser.stop()

        // Then, the backend healthy and the daemon left running, the queue drains
        let scanCount = try harness.queue().count
        try harness.waitForQueue("every scan done, its cleanup sent", within: 60 + Double(scanCount)) { queue in
            queue.allSatisfy { $0.state == "done" && $0.cleanupPending == false }
        }
        let queue = try harness.queue()
        let ids = queue.map(\.id)
        let acknowledged = presser.acknowledged.ids
        #expect(acknowledged.count > kills / 2, "too few presses were acknowledged to prove anything")
        #expect(Set(ids).count == ids.count, "a scan appears twice")
        #expect(acknowledged.isSubset(of: Set(ids)), "acknowledged presses lost: \(acknowledged.subtracting(ids))")
        #expect(ids.count <= presser.attempts, "more scans (\(ids.count)) than presses (\(presser.attempts))")

        // One backend job per scan, never two, and each book once in the library
        let stats = try backend.stats()
        let jobs = stats["jobByIdempotencyKey"] as? [String: String] ?? [:]
        #expect(Set(jobs.keys) == Set(ids), "scans without a job: \(Set(ids).subtracting(jobs.keys))")
        let jobsCreated = stats["jobsCreated"] as? Int
        #expect(jobsCreated == ids.count, "one job per scan: \(jobsCreated ?? -1) jobs, \(ids.count) scans")
        let library = try harness.library()
        #expect(library.count == Set(library.map { $0.isbn13 ?? "title:" + $0.title }).count, "a book appears twice")
        #expect(UplinkEndToEndTests.backendISBNs(stats).isSubset(of: Set(library.compactMap(\.isbn13))), "books lost")
        #expect(!harness.spoolFiles().contains { $0.hasSuffix(".jpg") || $0.contains(".tmp") }, "photos left behind")

        let landedSummary = landed.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
        print(
            """
            kill storm figures: kills \(kills), presses \(presser.attempts), acknowledged \(acknowledged.count), \
            scans \(ids.count), jobs \(jobs.count), books \(library.count), \
            time \(Int(Date().timeIntervalSince(started))) s, seed \(seed); kills landed during: \(landedSummary)
            """)
    }

    /// What was in flight when the daemon died, read back from its database and the backend:
    /// a press (capture and spool), an upload, an open stream, a finished job not yet committed,
    /// a cleanup owed, or nothing.
    static func stagesAtKill(
        queue: [DaemonHarness.QueueEntry], backend stats: [String: Any], pressInFlight: Bool
    ) -> [String] {
        let jobStatus = stats["jobStatus"] as? [String: String] ?? [:]
        var stages: [String] = []
        if pressInFlight { stages.append("capture/spool") }
        if queue.contains(where: { $0.state == "queued" }) { stages.append("queued") }
        if queue.contains(where: { $0.state == "uploading" }) { stages.append("upload") }
        let analyzing = queue.filter { $0.state == "analyzing" }
        let finishedOnBackend = analyzing.filter { $0.jobId.flatMap { jobStatus[$0] } == "completed" }
        if analyzing.count > finishedOnBackend.count { stages.append("stream") }
        if !finishedOnBackend.isEmpty { stages.append("commit") }
        if queue.contains(where: { $0.state == "done" && $0.cleanupPending == true }) { stages.append("cleanup") }
        return stages.isEmpty ? ["idle"] : stages
    }
}

/// A person pressing the shutter every 0.2–1 s on a thread of its own, whether the daemon is up or not.
final class Presser: @unchecked Sendable {
    let harness: DaemonHarness
    let acknowledged = AcknowledgedScans()
    private let lock = NSLock()
    private var random: SeededGenerator
    private var running = true
    private var pressing = false
    private var pressCount = 0
    private let finished = DispatchSemaphore(value: 0)

    init(harness: DaemonHarness, seed: UInt64) {
        self.harness = harness
        random = SeededGenerator(seed: seed)
    }

    var isPressing: Bool { lock.withLock { pressing } }
    var attempts: Int { lock.withLock { pressCount } }

    func start() {
        Thread.detachNewThread { [self] in
            while lock.withLock({ running }) {
                lock.withLock {
                    pressing = true
                    pressCount += 1
                }
                if let id = harness.press().id { acknowledged.add(id) }
                let pause = lock.withLock {
                    pressing = false
                    return 0.2 + 0.8 * random.unit()
                }
                Thread.sleep(forTimeInterval: pause)
            }
            finished.signal()
        }
    }

    func stop() {
        lock.withLock { running = false }
        finished.wait()
    }
}
