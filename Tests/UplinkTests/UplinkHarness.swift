import Foundation
import HTTPEngine
import Logging
import Store
import SwiftWingTesting
import Synchronization
import Talaria
import Testing

@testable import Uplink

/// A state directory with a real SQLite file and spool, and an uplink over a scripted backend on a
/// manual clock: time moves only when a test advances it.
final class UplinkHarness: Sendable {
    let directory: String
    let database: AppDatabase
    let spool: SpoolDirectory
    let keyFile: String
    let clock: ManualClock
    /// Wall time that moves with `clock`: what the uplink stores and compares.
    let wallClock: WallClock
    let backend: ScriptedBackend
    let service: UplinkService
    let events: UplinkEventRecorder
    private let running = ServiceTask()
    /// The scheduler's turns so far (counted by its heartbeat).
    private let turns = TurnCounter()

    /// `script` answers each request and how many of the same method+path came before it; `transport`
    /// (a real engine to a server at `base`) replaces the scripted backend when given.
    init(
        apiKey: String? = "sk-test-key", base: URL = URL(string: "http://127.0.0.1:9/")!,
        transport: (any HTTPTransport)? = nil, tweak: (inout UplinkSettings) -> Void = { _ in },
        script: @escaping @Sendable (HTTPRequest, Int) -> ScriptedBackend.Reply
    ) throws {
        directory = NSTemporaryDirectory() + "swiftwing-uplink-" + UUID().uuidString
        let state = StateDirectory(path: directory)
        try state.create()
        database = try AppDatabase.open(state)
        spool = SpoolDirectory(state)
        keyFile = directory + "/api-key"
        if let apiKey { try Data((apiKey + "\n").utf8).write(to: URL(fileURLWithPath: keyFile)) }
        var settings = UplinkSettings(
            endpoints: TalariaEndpoints(base: base), deviceID: UUID(),
            apiKey: APIKeySource(path: apiKey == nil ? nil : keyFile), version: "test")
        settings.retry = RetryPolicy(roundInterval: 3600, random: { 0.5 })
        tweak(&settings)
        let clock = ManualClock()
        let wallClock = clock.wallClock()
        self.clock = clock
        self.wallClock = wallClock
        backend = ScriptedBackend(now: { wallClock.now }, script)
        let events = UplinkEventRecorder()
        self.events = events
        service = UplinkService(
            settings: settings, transport: transport ?? (backend as any HTTPTransport), database: database,
            spool: spool, logger: Logger(label: "test"), clock: clock, wallClock: wallClock,
            events: { events.record($0) }, heartbeat: { [turns] in turns.add() })
    }

    /// Now on the wall clock.
    var now: Date { wallClock.now }

    func start() {
        let service = self.service
        running.start { try await service.run() }
    }

    func stop() async { await running.stop() }

    @discardableResult
    func queueScan(bytes: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0, 1, 2, 3, 0xFF, 0xD9]) throws -> ScanRecord {
        let id = UUID()
        let image = try spool.write(jpeg: bytes, for: id)
        let record = try database.queue.enqueue(
            NewScan(id: id, pressedAt: .now(), pressedWallAt: now, frameAt: nil, image: image, width: 64, height: 48),
            now: now)
        service.wake()
        return record
    }

    func scan(_ id: UUID) throws -> ScanRecord { try #require(try database.queue.scan(id: id)) }

    func uploads() -> [HTTPRequest] { backend.requests(.post, pathSuffix: "/v3/jobs/scans") }

    var connectivity: UplinkConnectivity { service.snapshot.connectivity }

    /// How often a wait looks before it gives up, each look after a 5 ms sleep: a minute or more. The
    /// looks are counted, not the seconds: while the synchronous suites of the same process hold the
    /// cooperative pool, the uplink's tasks stand still and so does the count.
    private static let looks = 12_000

    /// Waits, without moving the clock, until `condition` holds. The limit only bounds a hang: the
    /// uplink's progress here needs no time to pass, so a busy machine makes it slower, never wrong.
    func eventually(
        _ what: String, sourceLocation: SourceLocation = #_sourceLocation, _ condition: () throws -> Bool
    ) async throws {
        for _ in 0..<Self.looks {
            if try condition() { return }
            try await Task.sleep(for: .milliseconds(5))  // polls tasks and threads of the uplink: nothing to await
        }
        if try condition() { return }
        Issue.record("never happened: \(what)", sourceLocation: sourceLocation)
    }

    /// Waits until the scheduler has finished a turn begun after this call: what the uplink does about
    /// a change (a scan queued, a key installed) without time passing, it has done by then, and with
    /// the clock standing still nothing else can happen. (A turn after a second wake begins only
    /// when the first one has ended.)
    func settle(sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let before = turns.count
        service.wake()
        try await eventually("the scheduler took a turn", sourceLocation: sourceLocation) { turns.count > before }
        service.wake()
        try await eventually("the scheduler ended that turn", sourceLocation: sourceLocation) {
            turns.count > before + 1
        }
    }

    /// Moves the clock forward `step` at a time, letting the uplink's tasks run between steps,
    /// until `condition` holds; records an issue when `limit` seconds of clock time pass first.
    /// On a busy machine the uplink may lag behind the steps, so `limit` is chosen far beyond what
    /// the goal needs, and short of whatever the test says must not happen (the next round…).
    func advance(
        _ what: String, step: TimeInterval = 0.25, upTo limit: TimeInterval,
        sourceLocation: SourceLocation = #_sourceLocation,
        until condition: () throws -> Bool
    ) async throws {
        let started = now
        var looks = 0
        while now.timeIntervalSince(started) < limit, looks < Self.looks {
            if try condition() { return }
            try await Task.sleep(for: .milliseconds(5))  // the uplink's tasks run between steps of the clock
            clock.advance(bySeconds: step)
            looks += 1
        }
        if try condition() { return }
        Issue.record("not reached within \(limit) s on the clock: \(what)", sourceLocation: sourceLocation)
    }

    /// Lets `seconds` of clock time pass, `step` at a time, the uplink's tasks running between steps.
    func pass(_ seconds: TimeInterval, step: TimeInterval = 0.25) async throws {
        let end = now.addingTimeInterval(seconds)
        while now < end {
            try await Task.sleep(for: .milliseconds(5))  // the uplink's tasks run between steps of the clock
            clock.advance(bySeconds: min(step, end.timeIntervalSince(now)))
        }
    }

    deinit { try? FileManager.default.removeItem(atPath: directory) }
}

/// Counts calls from any task.
final class TurnCounter: Sendable {
    private let value = Mutex(0)
    var count: Int { value.withLock { $0 } }
    func add() { value.withLock { $0 += 1 } }
}

/// A service's `run()` in a task of its own, stopped by cancelling it.
final class ServiceTask: Sendable {
    private let task = Mutex<Task<Void, any Error>?>(nil)

    func start(_ run: @escaping @Sendable () async throws -> Void) {
        task.withLock { $0 = Task { try await run() } }
    }

    func stop() async {
        let running = task.withLock { $0 }
        running?.cancel()
        _ = await running?.result
    }
}
