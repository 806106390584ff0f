import Foundation
import Logging
import Panel
import SwiftWingCore
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A start that cannot go on for a reason a retry in this process cannot fix (a configuration file that
/// does not load, a setting the camera or the uplink refuses): instead of exiting at once, which under
/// `Restart=` is a restart every few seconds that says nothing on the kiosk, the process stays up saying
/// what is wrong (panel, journal, `STATUS=`), feeds the watchdog, and ends, for systemd to start it
/// again with everything read afresh, as soon as the configuration file changes, or after ``longest``.
struct StartupHold: Sendable {
    enum Ending: Equatable, Sendable {
        /// The configuration file was written, made or removed: the fix may be in.
        case configurationChanged
        /// ``longest`` passed with no change: try again anyway (the cause may be outside the file).
        case timeUp
    }

    /// 5 min: the longest a fix outside the file (a camera folder, a credential) waits to be tried.
    static let longest = Duration.seconds(300)
    /// How often the configuration file is looked at (and the watchdog fed): 2 s.
    static let pollInterval = Duration.seconds(2)

    let clock: ErasedClock
    /// The configuration file to watch.
    let configurationPath: String
    /// Called at every look, to feed systemd's watchdog.
    let ping: @Sendable () -> Void

    init(clock: any Clock<Duration>, configurationPath: String, ping: @escaping @Sendable () -> Void) {
        self.clock = ErasedClock(clock)
        self.configurationPath = configurationPath
        self.ping = ping
    }

    /// What identifies the file's contents without reading it: its inode, size and change time
    /// (an editor's save is a new inode or a new time; a removal is nil).
    static func signature(_ path: String) -> [Int64]? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return [
            Int64(info.st_ino), Int64(info.st_size), Int64(info.st_mtim.tv_sec), Int64(info.st_mtim.tv_nsec),
            Int64(info.st_ctim.tv_sec), Int64(info.st_ctim.tv_nsec),
        ]
    }

    /// Waits until the configuration file changes or ``longest`` passes. Cancellation ends it early.
    func wait() async -> Ending {
        let before = Self.signature(configurationPath)
        let deadline = clock.now + Self.longest
        while clock.now < deadline {
            do {
                try await clock.sleep(for: min(Self.pollInterval, deadline - clock.now))
            } catch {
                return .timeUp
            }
            ping()
            if Self.signature(configurationPath) != before { return .configurationChanged }
        }
        return .timeUp
    }
}

/// Whether the daemon got as far as `READY=1` (after it, a failure is not a start-up's).
final class ReadyFlag: Sendable {
    private let ready = Mutex(false)
    var isReady: Bool { ready.withLock { $0 } }
    func set() { ready.withLock { $0 = true } }
}

/// swift-log takes one bootstrap per process: the hold of a configuration that did not load makes it
/// before the daemon would.
private let loggingBootstrapped = Mutex(false)

extension ApplianceDaemon {
    static func bootstrapLogging(level: Logger.Level) {
        let first = loggingBootstrapped.withLock { done in
            defer { done = true }
            return !done
        }
        if first { LoggingSystem.bootstrap { JournalLogHandler(label: $0, logLevel: level) } }
    }

    /// The start failed with `problem` before the daemon was ready: hold it up on `panel` (a full-screen
    /// notice), in the journal and in `systemctl status`, feeding the watchdog, until the configuration
    /// file changes or ``StartupHold/longest`` passes; the caller then exits non-zero and systemd starts
    /// the daemon again.
    static func holdFailedStart(
        title: String, problem: String, configurationPath: String, panel: StatusPanel?,
        clock: any Clock<Duration> = ContinuousClock(), notifier: SystemdNotifier = SystemdNotifier(), logger: Logger
    ) async -> StartupHold.Ending {
        let minutes = StartupHold.longest.components.seconds / 60
        // The messages end in a full stop of their own; the hold's words follow it.
        let problem = problem.hasSuffix(".") ? String(problem.dropLast()) : problem
        logger.critical(
            "\(problem); waiting for \(configurationPath) to change (or \(minutes) min), then starting again",
            metadata: ["configuration": "\(configurationPath)"])
        let shown = problem.count > 240 ? String(problem.prefix(239)) + "…" : problem
        panel?.start()
        panel?.update {
            $0.notice = .message(
                title: title, detail: "\(shown). Fix \(configurationPath): the kiosk starts again when it changes.")
        }
        notifier.ready(status: "Not scanning: \(title.lowercased())")
        notifier.status("Not scanning: \(problem) (starting again when \(configurationPath) changes)")
        let hold = StartupHold(clock: clock, configurationPath: configurationPath) { notifier.watchdog() }
        let ending = await hold.wait()
        logger.notice(
            ending == .configurationChanged
                ? "\(configurationPath) changed: starting again" : "no change in \(minutes) min: starting again")
        panel?.stop()
        return ending
    }

    /// `swiftwing run` with a configuration that did not load: held as ``holdFailedStart(title:problem:configurationPath:panel:clock:notifier:logger:)``,
    /// on `panel` when the command line named one, else on `/dev/fb0` when the device has it. Only under
    /// systemd: run by hand, the error is for the person at the terminal, at once.
    public static func holdUnloadableConfiguration(
        _ problem: String, configurationPath: String?, panel: String?
    ) async {
        guard SystemdNotifier().isActive else { return }
        bootstrapLogging(level: .info)
        var fallback = ApplianceConfiguration()
        if let panel, let output = try? PanelOutput(parsing: panel) {
            fallback.panel = output
        } else if FileManager.default.fileExists(atPath: "/dev/fb0") {
            fallback.panel = .framebuffer(path: "/dev/fb0")
        }
        let logger = Logger(label: "appliance")
        _ = await holdFailedStart(
            title: "SETTINGS PROBLEM", problem: problem,
            configurationPath: configurationPath ?? ApplianceConfiguration.defaultPath,
            panel: ApplianceDaemon(configuration: fallback).makePanel(logger: logger), logger: logger)
    }
}
