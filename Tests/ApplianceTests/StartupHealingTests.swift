import Foundation
import Logging
import Panel
import Store
import SwiftWingCore
import SwiftWingTesting
import Synchronization
import Testing

@testable import Appliance

#if canImport(Glibc)
    import Glibc
#endif

/// A state directory that cannot be opened at start (a full, read-only or blocked card, a lock another
/// process holds, a database path SQLite cannot open) keeps the daemon waiting, saying why, and
/// retrying with a growing delay until the owner fixes it; nothing in the directory is deleted.
/// Real directories, a real SQLite file and real tmpfs mounts; time is a clock the test advances.
@Suite(.serialized) struct StartupHealingTests {
    @Test func theDelayDoublesFromTwoSecondsUpToFiveMinutes() {
        let backoff = StartupRetry.Backoff()
        let delays = (1...10).map { backoff.delay(afterFailures: $0).components.seconds }
        #expect(delays == [2, 4, 8, 16, 32, 64, 128, 256, 300, 300])
    }

    @Test func aStateDirectoryBlockedByAFileWaitsAndStartsOnceTheOwnerMovesIt() async throws {
        let scratch = Scratch()
        let state = StateDirectory(path: scratch.path + "/state")
        // A file where the state directory should be: mkdir fails, as on a card mounted wrong.
        #expect(FileManager.default.createFile(atPath: state.path, contents: Data("not a directory".utf8)))
        let run = Run(state: state)
        let first = try await run.nextWait()
        #expect(first.attempt == 1 && first.retryIn == .seconds(2))
        #expect(first.problem.title == "STATE DIRECTORY BLOCKED", "\(first.problem)")
        #expect(first.problem.message.contains("move it away"), "the journal has the fix")
        #expect(run.notices.panelNotice?.title == first.problem.title, "the panel shows the problem")
        #expect(run.notices.panelNotice?.detail.contains("Trying again by itself") == true)
        #expect(!run.finished)

        run.clock.advance(by: .seconds(2))
        let second = try await run.nextWait()
        #expect(second.attempt == 2 && second.retryIn == .seconds(4), "the delay grows")

        try FileManager.default.removeItem(atPath: state.path)  // the owner's fix
        run.clock.advance(by: .seconds(4))
        let opened = try await run.result()
        #expect(FileManager.default.fileExists(atPath: state.databasePath))
        #expect(run.events.contains(.recovered(failures: 2)))
        opened.lock.release()
    }

    @Test func aLockHeldByAnotherHolderIsWaitedForWithTheWatchdogFed() async throws {
        let scratch = Scratch()
        let state = StateDirectory(path: scratch.path)
        try state.create()
        let other = try StateDirectoryLock.acquire(stateDirectory: state)
        let run = Run(state: state, watchdogInterval: .seconds(1))
        let wait = try await run.nextWait()
        #expect(wait.problem.title == "DATA IN USE")
        #expect(wait.problem.advice.contains("process \(getpid())"), "the holder is named: \(wait.problem.advice)")
        try await run.advance(by: .seconds(1))
        try await run.advance(by: .seconds(1))
        _ = try await run.nextWait()
        #expect(run.pings == 2, "pinged every second of the 2 s wait, so systemd does not take the wait for a hang")

        other.release()
        run.clock.advance(by: .seconds(4))
        let opened = try await run.result()
        opened.lock.release()
    }

    @Test func aDatabasePathSQLiteCannotOpenIsLeftAsItIsAndRetried() async throws {
        let scratch = Scratch()
        let state = StateDirectory(path: scratch.path)
        try state.create()
        // A directory where the database file should be, holding a file of the owner's: CANTOPEN, not damage.
        try FileManager.default.createDirectory(atPath: state.databasePath, withIntermediateDirectories: false)
        let keep = state.databasePath + "/keep.txt"
        #expect(FileManager.default.createFile(atPath: keep, contents: Data("mine".utf8)))
        let run = Run(state: state)
        let wait = try await run.nextWait()
        #expect(wait.problem.title == "CANNOT OPEN DATABASE", "\(wait.problem)")
        #expect(wait.problem.message.contains("check that the card is mounted"), "the journal has the fix")
        #expect(FileManager.default.contents(atPath: keep) == Data("mine".utf8), "nothing was moved or deleted")
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: state.path).filter { $0.contains("damaged") }.isEmpty)

        try FileManager.default.moveItem(atPath: state.databasePath, toPath: scratch.path + "/moved-by-owner")
        run.clock.advance(by: .seconds(2))
        let opened = try await run.result()
        #expect(opened.started.recovery == nil)
        opened.lock.release()
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/sqlite3"), "needs the sqlite3 shell"))
    func aDatabaseAnotherProcessLocksIsWaitedForAndOpenedOnceItLetsGo() async throws {
        let scratch = Scratch()
        let state = StateDirectory(path: scratch.path)
        try state.create()
        do { _ = try AppDatabase.open(state) }  // a device that ran before
        // A sqlite3 shell in another process holding the database exclusively (as a person exploring it might).
        let shell = Process()
        shell.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
        shell.arguments = [state.databasePath]
        let input = Pipe()
        let output = Pipe()
        shell.standardInput = input
        shell.standardOutput = output
        try shell.run()
        input.fileHandleForWriting.write(
            Data(
                "PRAGMA locking_mode = EXCLUSIVE;\nBEGIN EXCLUSIVE;\nSELECT count(*) FROM scan;\nSELECT 'locked';\n"
                    .utf8))
        var said = ""
        while !said.contains("locked") {
            let chunk = output.fileHandleForReading.availableData
            try #require(!chunk.isEmpty, "the sqlite3 shell ended: \(said)")
            said += String(decoding: chunk, as: UTF8.self)
        }

        let run = Run(state: state)
        let wait = try await run.nextWait()  // after SQLite's busy timeout (5 s, real time: SQLite's own wait)
        #expect(wait.problem.title == "DATABASE LOCKED", "\(wait.problem)")
        #expect(wait.problem.advice.contains("sqlite3 shell"))

        try input.fileHandleForWriting.close()  // the shell ends and lets go
        shell.waitUntilExit()
        run.clock.advance(by: .seconds(2))
        let opened = try await run.result()
        #expect(opened.started.recovery == nil, "a locked database is not taken for a damaged one")
        opened.lock.release()
    }

    @Test func aReadOnlyCardWaitsUntilItIsWritableAgainAndKeepsTheSpool() async throws {
        let scratch = Scratch()
        try #require(scratch.mountTmpfs(kilobytes: 2048), "tmpfs mounts are needed (root)")
        let state = StateDirectory(path: scratch.path)
        // A device that ran before: a database with a scan's photo in the spool.
        try state.create()
        let photo = state.spoolPath + "/\(UUID().uuidString.lowercased()).jpg"
        #expect(FileManager.default.createFile(atPath: photo, contents: Data([0xFF, 0xD8, 0xFF, 0xD9])))
        try #require(scratch.mount(["-o", "remount,ro", scratch.path]))
        let run = Run(state: state)
        let wait = try await run.nextWait()
        #expect(wait.problem.title == "CARD READ-ONLY", "\(wait.problem)")
        #expect(FileManager.default.fileExists(atPath: photo))

        try #require(scratch.mount(["-o", "remount,rw", scratch.path]))
        run.clock.advance(by: .seconds(2))
        let opened = try await run.result()
        #expect(
            FileManager.default.fileExists(atPath: photo)
                || (try? FileManager.default.contentsOfDirectory(
                    atPath: state.quarantinePath))?.isEmpty == false,
            "the photo is kept, in the spool or its quarantine")
        opened.lock.release()
    }

    @Test func aFullCardWaitsUntilSpaceIsFreed() async throws {
        let scratch = Scratch()
        try #require(scratch.mountTmpfs(kilobytes: 4096), "tmpfs mounts are needed (root)")
        let state = StateDirectory(path: scratch.path)
        try state.create()
        // Fill the card: the database cannot be made.
        let filler = scratch.path + "/filler"
        #expect(FileManager.default.createFile(atPath: filler, contents: nil))
        let handle = try #require(FileHandle(forWritingAtPath: filler))
        let chunk = Data(repeating: 0x55, count: 4096)
        while (try? handle.write(contentsOf: chunk)) != nil {}
        try? handle.close()
        let run = Run(state: state)
        let wait = try await run.nextWait()
        #expect(wait.problem.title == "DISK FULL", "\(wait.problem)")
        #expect(run.notices.panelNotice?.title == "DISK FULL")

        try FileManager.default.removeItem(atPath: filler)  // the owner frees space
        run.clock.advance(by: .seconds(2))
        let opened = try await run.result()
        #expect(throws: Never.self) { try opened.started.database.queue.counts() }
        opened.lock.release()
    }

    @Test func errorsAreWordedForTheOwner() {
        let readOnly = StartupProblem(StoreError.readOnlyFileSystem(directory: "/var/lib/swiftwing", consequence: "x"))
        #expect(readOnly.title == "CARD READ-ONLY" && readOnly.advice.contains("/var/lib/swiftwing"))
        let denied = StartupProblem(StoreError.permissionDenied(path: "/var/lib/swiftwing/spool", consequence: "x"))
        #expect(denied.advice.contains("chown -R swiftwing:"))
        let io = StartupProblem(StoreError.database(path: "/d.sqlite", code: 266, message: "disk I/O error"))
        #expect(io.title == "STORAGE ERROR" && io.message.contains("dmesg"), "an extended IOERR code is still I/O")
        let busy = StartupProblem(StoreError.databaseBusy(path: "/d.sqlite"))
        #expect(busy.title == "DATABASE LOCKED")
    }
}

/// The daemon's start-up step under ``StartupRetry``, on a clock the test advances, with a PNG panel.
private final class Run: Sendable {
    let clock = ManualClock()
    let notices: StartupNotices
    private let recorded = EventLog()
    private let task: Task<OpenedState, any Error>
    private let seenWaits = Mutex(0)

    init(state: StateDirectory, watchdogInterval: Duration? = nil) {
        let png = NSTemporaryDirectory() + "swiftwing-startup-\(UUID().uuidString).png"
        let logger = Logger(label: "startup-test")
        let notices = StartupNotices(
            makePanel: { try? StatusPanel(sink: PNGSink(path: png), logger: logger) }, notifier: SystemdNotifier(),
            logger: logger)
        self.notices = notices
        let recorded = recorded
        let retry = StartupRetry(clock: clock, watchdogInterval: watchdogInterval) { event in
            recorded.events.withLock { $0.append(event) }
            notices.handle(event)
        }
        task = Task { try await retry.run { try ApplianceDaemon.openState(state) } }
    }

    deinit {
        task.cancel()
        notices.close()
    }

    var events: [StartupRetry.Event] { recorded.events.withLock { $0 } }
    var pings: Int { events.filter { $0 == .watchdogPing }.count }
    var finished: Bool { events.contains { if case .recovered = $0 { true } else { false } } }

    /// The next failed try, once the retry sleeps after it.
    func nextWait() async throws -> (problem: StartupProblem, attempt: Int, retryIn: Duration) {
        let wanted = seenWaits.withLock {
            $0 += 1
            return $0
        }
        // The step runs blocking I/O on the task; poll until it has failed and sleeps (nothing to await).
        for _ in 0..<2000 {
            let waits = events.compactMap { event -> (StartupProblem, Int, Duration)? in
                if case .waiting(let problem, let attempt, let retryIn) = event { return (problem, attempt, retryIn) }
                return nil
            }
            if waits.count >= wanted, clock.sleeperCount > 0 {
                let wait = waits[wanted - 1]
                return (wait.0, wait.1, wait.2)
            }
            try await Task.sleep(for: .milliseconds(10))
        }
        throw CancellationError()
    }

    /// Advances the clock once the retry sleeps (it sleeps again after each watchdog slice).
    func advance(by duration: Duration) async throws {
        for _ in 0..<2000 where clock.sleeperCount == 0 { try await Task.sleep(for: .milliseconds(10)) }
        clock.advance(by: duration)
    }

    func result() async throws -> OpenedState { try await task.value }
}

private final class EventLog: Sendable {
    let events = Mutex<[StartupRetry.Event]>([])
}

/// A fresh directory under /tmp, unmounted and removed at deinit.
private final class Scratch: Sendable {
    let path: String
    private let mounted = Mutex(false)

    init() {
        var template = Array("/tmp/swiftwing-startup-test-XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        precondition(made != nil, "mkdtemp failed: \(errno)")
        path = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    func mountTmpfs(kilobytes: Int) -> Bool {
        let ok = mount(["-t", "tmpfs", "-o", "size=\(kilobytes)k,mode=0755", "tmpfs", path])
        if ok { mounted.withLock { $0 = true } }
        return ok
    }

    func mount(_ arguments: [String], program: String = "/bin/mount") -> Bool {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: program)
        process.arguments = arguments
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return false }
        process.waitUntilExit()
        return process.terminationStatus == 0
    }

    deinit {
        if mounted.withLock({ $0 }) { _ = mount(["-l", path], program: "/bin/umount") }
        try? FileManager.default.removeItem(atPath: path)
    }
}
