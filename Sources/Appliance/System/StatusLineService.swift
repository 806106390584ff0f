import Logging
import ServiceLifecycle
import Store

/// Keeps systemd's `STATUS=` line (`systemctl status swiftwing`) current with ``StatusReport/headline``:
/// read every `interval`, sent only when the words change, so a busy scanner does not flood systemd.
struct StatusLineService: Service {
    let notifier: SystemdNotifier
    let stateDirectory: String
    let database: AppDatabase
    let daemonStatus: @Sendable () -> DaemonStatus
    var interval = Duration.seconds(2)
    /// Paces the reads: the daemon's `ContinuousClock`, in tests a clock they advance.
    var clock: any Clock<Duration> = ContinuousClock()

    /// The line as it reads now (also what READY=1 carries).
    func currentLine() -> String {
        var report = StatusReport(stateDirectory: stateDirectory, daemon: StatusReport.Daemon(daemonStatus()))
        report.readCounts(from: database)
        return report.headline
    }

    func run() async throws {
        guard notifier.isActive else {
            try? await gracefulShutdown()
            return
        }
        var sent: String?
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            let line = currentLine()
            if line != sent {
                notifier.status(line)
                sent = line
            }
            try? await cancelWhenGracefulShutdown { try await clock.sleep(for: interval) }
        }
        notifier.status("Stopping · \(sent ?? "")")
    }
}
