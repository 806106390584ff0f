import Foundation
import Logging
import Panel
import Store
import SwiftWingCore
import Synchronization

/// Why the daemon cannot start yet, in words for the panel and the journal: what is wrong and the fix.
struct StartupProblem: Equatable, Sendable {
    /// The panel's heading, in capitals.
    var title: String
    /// The panel's line: what is wrong and what to do, short enough for the kiosk's screen.
    var advice: String
    /// The journal's message: the whole error, with its fix.
    var message: String

    init(title: String, advice: String, message: String) {
        self.title = title
        self.advice = advice
        self.message = message
    }

    init(_ error: any Error) {
        if let error = error as? StoreError {
            self = Self.store(error)
        } else {
            let text = String(describing: error)
            self.init(title: "CANNOT START", advice: text, message: text)
        }
    }

    /// SQLite's result codes the start meets that ``StoreError`` words only as a number.
    private static let cantOpen: Int32 = 14
    private static let ioError: Int32 = 10

    private static func store(_ error: StoreError) -> StartupProblem {
        let text = error.description
        switch error {
        case .noSpace(let directory, _), .lowSpace(let directory, _, _):
            return .init(
                title: "DISK FULL", advice: "The card holding \(directory) is full. Free space on it.", message: text)
        case .readOnlyFileSystem(let directory, _):
            return .init(
                title: "CARD READ-ONLY",
                advice: "\(directory) is read-only (the kernel does that after card errors). Check dmesg; remount it.",
                message: text)
        case .permissionDenied(let path, _):
            return .init(
                title: "NO ACCESS TO DATA",
                advice: "The swiftwing user may not write \(path). Run: chown -R swiftwing: /var/lib/swiftwing",
                message: text)
        case .stateDirectoryLocked(let directory, let pid):
            let holder = pid.map { "process \($0)" } ?? "another program"
            return .init(
                title: "DATA IN USE", advice: "\(holder) holds \(directory). Stop it (another swiftwing daemon?).",
                message: text)
        case .databaseBusy:
            return .init(
                title: "DATABASE LOCKED",
                advice: "Another program keeps the database locked (a sqlite3 shell?). Close it.", message: text)
        case .databaseTooNew:
            return .init(
                title: "DATABASE TOO NEW", advice: "A newer SwiftWing wrote the database. Install that version again.",
                message: text)
        case .databaseCorrupt(let path, _):
            return .init(
                title: "DATABASE DAMAGED", advice: "\(path) is damaged and could not be moved aside. See the journal.",
                message: text)
        case .database(let path, let code, _) where code & 0xff == cantOpen:
            let advice =
                "\(path) cannot be opened: check that the card is mounted and that the path is a file "
                + "the swiftwing user may write"
            return .init(title: "CANNOT OPEN DATABASE", advice: advice + ".", message: "\(text): \(advice)")
        case .database(let path, let code, _) where code & 0xff == ioError:
            // Mostly a failing card; also a -wal, -shm or -journal beside the database that is not a
            // file the daemon may write (seen in the VM rig: a directory named swiftwing.sqlite-journal).
            let advice =
                "reading or writing the database failed: check `dmesg` for card errors, and that "
                + "\(path)-wal, -shm and -journal, when there, are files the swiftwing user may write; "
                + "replace the card if it happens again"
            return .init(
                title: "STORAGE ERROR",
                advice: "Reading or writing the database failed. Check dmesg and the files beside it.",
                message: "\(text): \(advice)")
        case .systemCall(let call, _) where call.errno == EIO:
            let advice = "the card failed a read or write: check `dmesg`, and replace the card if it happens again"
            return .init(
                title: "STORAGE ERROR", advice: "The card failed a read or write. Check dmesg.",
                message: "\(text): \(advice)")
        case .systemCall(let call, _) where call.errno == EEXIST || call.errno == ENOTDIR:
            let advice = "\(call.subject) is in the way of the state directory (a file, not a directory): move it away"
            return .init(
                title: "STATE DIRECTORY BLOCKED", advice: "\(call.subject) is a file, not a directory. Move it away.",
                message: "\(text): \(advice)")
        case .stateDirectoryOwnedByAnotherUser:
            return .init(title: "WRONG USER", advice: "Run swiftwing as the state directory's owner.", message: text)
        case .deviceIdentityUnreadable(let path, _):
            return .init(
                title: "DEVICE ID UNREADABLE", advice: "\(path) cannot be read. Restore it or check the card.",
                message: text)
        default:
            return .init(title: "CANNOT START", advice: text, message: text)
        }
    }
}

/// A start-up step that touches the disk (the state directory, its lock, the database, the device id),
/// tried again with a growing delay until it succeeds, instead of the process exiting: systemd would
/// restart it every `RestartSec=` and give up after `StartLimitBurst=`, and a card that is remounted,
/// freed or unlocked a minute later would then need a person at a shell. While it waits, systemd's
/// watchdog is fed (the wait is the daemon working as meant, not stuck) and ``Event``s tell the panel,
/// the journal and `systemctl status` what is wrong.
struct StartupRetry: Sendable {
    /// The delay before each new try: doubling from `first` up to `maximum`.
    struct Backoff: Sendable, Equatable {
        /// 2 s: a lock held by a daemon that is stopping is free by then.
        var first: Duration = .seconds(2)
        /// 5 min: a card fixed by a person is picked up within that, and the journal gets at most 12 lines an hour.
        var maximum: Duration = .seconds(300)

        /// The wait after the `failures`-th failure in a row (1-based): 2, 4, 8 … 256, 300, 300 s.
        func delay(afterFailures failures: Int) -> Duration {
            var delay = first
            for _ in 1..<max(1, failures) {
                delay = delay * 2
                if delay >= maximum { return maximum }
            }
            return min(delay, maximum)
        }
    }

    enum Event: Equatable, Sendable {
        /// The `attempt`-th try failed with `problem`; the next is in `retryIn`.
        case waiting(StartupProblem, attempt: Int, retryIn: Duration)
        /// Time to tell systemd's watchdog the process is alive.
        case watchdogPing
        /// The step succeeded after `failures` failed tries.
        case recovered(failures: Int)
    }

    var backoff = Backoff()
    /// Paces the waits: the daemon's `ContinuousClock`, in tests a clock they advance.
    let clock: ErasedClock
    /// How often systemd's watchdog is pinged while waiting (half of `WatchdogSec=`), or nil for never.
    let watchdogInterval: Duration?
    let events: @Sendable (Event) -> Void

    init(
        clock: any Clock<Duration>, watchdogInterval: Duration?, backoff: Backoff = Backoff(),
        events: @escaping @Sendable (Event) -> Void
    ) {
        self.clock = ErasedClock(clock)
        self.watchdogInterval = watchdogInterval
        self.backoff = backoff
        self.events = events
    }

    /// Runs `step` until it returns. Throws only `CancellationError`, when the task is cancelled while waiting.
    func run<T>(_ step: () throws -> T) async throws -> T {
        var failures = 0
        while true {
            do {
                let value = try step()
                if failures > 0 { events(.recovered(failures: failures)) }
                return value
            } catch {
                failures += 1
                let delay = backoff.delay(afterFailures: failures)
                events(.waiting(StartupProblem(error), attempt: failures, retryIn: delay))
                try await wait(delay)
            }
        }
    }

    /// Sleeps `delay` in slices no longer than the watchdog interval, pinging after each.
    private func wait(_ delay: Duration) async throws {
        let deadline = clock.now + delay
        while clock.now < deadline {
            let left = deadline - clock.now
            try await clock.sleep(for: watchdogInterval.map { min($0, left) } ?? left)
            if watchdogInterval != nil { events(.watchdogPing) }
        }
    }
}

/// What the start-up's waits show: a full-screen notice on the panel (opened for the wait and closed
/// before the daemon's own panel takes over), a line in the journal, and `STATUS=` for `systemctl status`.
/// systemd hears `READY=1` at the first wait, so a wait longer than `TimeoutStartSec=` is not taken for
/// a start that hangs: the unit is active, its status says why nothing scans.
final class StartupNotices: Sendable {
    private let makePanel: @Sendable () -> StatusPanel?
    private let notifier: SystemdNotifier
    private let logger: Logger
    private struct State {
        var panel: StatusPanel?
        var panelOpened = false
        var lastProblem: StartupProblem?
    }
    private let state = Mutex(State())

    init(makePanel: @escaping @Sendable () -> StatusPanel?, notifier: SystemdNotifier, logger: Logger) {
        self.makePanel = makePanel
        self.notifier = notifier
        self.logger = logger
    }

    /// The notice on the panel now, if a panel is open.
    var panelNotice: PanelNotice? { state.withLock { $0.panel?.model.notice } }

    func handle(_ event: StartupRetry.Event) {
        switch event {
        case .waiting(let problem, let attempt, let retryIn):
            let seconds = retryIn.components.seconds
            let (panel, repeated) = state.withLock { state -> (StatusPanel?, Bool) in
                if !state.panelOpened {
                    state.panelOpened = true
                    state.panel = makePanel()
                    state.panel?.start()
                }
                defer { state.lastProblem = problem }
                return (state.panel, state.lastProblem == problem)
            }
            let metadata: Logger.Metadata = ["attempt": "\(attempt)", "retry_in_s": "\(seconds)"]
            let line = "not scanning yet: \(problem.message); trying again in \(seconds) s"
            // The first failure, or a new one, is an error; the same one again is a warning.
            if repeated {
                logger.warning("\(line)", metadata: metadata)
            } else {
                logger.error("\(line)", metadata: metadata)
            }
            panel?.update {
                $0.notice = .message(
                    title: problem.title, detail: problem.advice + " Trying again by itself (next in \(seconds) s).")
            }
            if attempt == 1 { notifier.ready(status: "Not scanning: \(problem.title.lowercased())") }
            notifier.status("Not scanning: \(problem.message) (try \(attempt), next in \(seconds) s)")
        case .watchdogPing:
            notifier.watchdog()
        case .recovered(let failures):
            logger.notice(
                "started after \(failures) failed tr\(failures == 1 ? "y" : "ies"): the problem is gone",
                metadata: ["last_problem": "\(state.withLock { $0.lastProblem?.title ?? "" })"])
        }
    }

    /// Stops the wait's panel (the daemon's own panel is opened after it, on the same output).
    func close() {
        let panel = state.withLock { state -> StatusPanel? in
            defer { state.panel = nil }
            return state.panel
        }
        panel?.stop()
    }
}

/// What the daemon holds once its state directory is open.
struct OpenedState: Sendable {
    var lock: StateDirectoryLock
    var started: StartedDatabase
    var identity: DeviceIdentity.Loaded
}

extension ApplianceDaemon {
    /// The state directory's start-up, one try: create it, take its lock, open (and heal) the database,
    /// load the device id. Whatever fails leaves nothing held (the lock is released with its value) and
    /// nothing lost: a damaged database or device id is moved aside by the Store, never deleted.
    static func openState(_ state: StateDirectory, now: Date = Date()) throws(StoreError) -> OpenedState {
        try state.create()
        let lock = try StateDirectoryLock.acquire(stateDirectory: state)
        let started = try AppDatabase.openForDaemon(state, now: now)
        let identity = try DeviceIdentity.loadOrReplace(stateDirectory: state, now: now)
        return OpenedState(lock: lock, started: started, identity: identity)
    }
}
