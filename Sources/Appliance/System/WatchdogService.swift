import Logging
import ServiceLifecycle
import SwiftWingCore

/// Pings systemd's watchdog (`WATCHDOG=1`) at half the interval it asked for, but only while every
/// part of the daemon shows a fresh heartbeat: a wedged capture loop, processing worker or uplink
/// scheduler stops the pings, and systemd restarts the service after `WatchdogSec=`.
struct WatchdogService: Service {
    let notifier: SystemdNotifier
    let monitor: LivenessMonitor
    let logger: Logger
    /// Paces the checks: the daemon's `ContinuousClock`, in tests a clock they advance.
    var clock: any Clock<Duration> = ContinuousClock()

    func run() async throws {
        guard let interval = notifier.watchdogPingInterval else {
            try? await gracefulShutdown()
            return
        }
        logger.info(
            "watchdog armed",
            metadata: [
                "ping_every_s": "\(interval.components.seconds)",
                "stale_after_s": "\(monitor.staleAfter.components.seconds)",
                "parts": "\(monitor.parts.map(\.name).joined(separator: ", "))",
            ])
        var gate = WatchdogGate()
        while !Task.isShuttingDownGracefully {
            let decision = gate.decide(monitor.check())
            if decision.ping { notifier.watchdog() }
            switch decision.report {
            case .stale(let parts)?:
                logger.critical(
                    "watchdog: not pinging systemd, a part of the daemon is stuck; systemd restarts the service",
                    metadata: ["stale": "\(parts)"])
            case .recovered?:
                logger.notice("watchdog: every part is alive again; pinging systemd")
            case nil:
                break
            }
            try? await cancelWhenGracefulShutdown { try await clock.sleep(for: interval) }
        }
    }

    /// How long a part may go without a heartbeat: longer than any part's idle turn (the worker wakes
    /// every second, the uplink scheduler every 5 s, a camera polls at least every stall timeout).
    static let staleAfter = Duration.seconds(20)
}

/// Turns liveness verdicts into pings, and says what went stale once (not on every check) and
/// when everything is alive again.
struct WatchdogGate: Sendable {
    enum Report: Equatable, Sendable {
        /// The parts that stopped beating, in words.
        case stale(String)
        case recovered
    }

    struct Decision: Equatable, Sendable {
        var ping: Bool
        var report: Report?
    }

    /// The names of the parts last reported stale; `nil` while everything is alive.
    private var reportedStale: [String]?

    mutating func decide(_ verdict: LivenessMonitor.Verdict) -> Decision {
        switch verdict {
        case .alive:
            defer { reportedStale = nil }
            return Decision(ping: true, report: reportedStale == nil ? nil : .recovered)
        case .stale(let parts):
            let names = parts.map(\.name)
            guard names != reportedStale else { return Decision(ping: false, report: nil) }
            reportedStale = names
            return Decision(ping: false, report: .stale(parts.map(\.description).joined(separator: "; ")))
        }
    }
}
