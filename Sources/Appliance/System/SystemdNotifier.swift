import CSystemd
import Foundation

/// Tells systemd how the daemon is doing (`Type=notify`): ready, status text, watchdog pings and
/// stopping. Outside systemd (`$NOTIFY_SOCKET` unset) every call does nothing.
public struct SystemdNotifier: Sendable {
    public init() {}

    /// Whether systemd is listening.
    public var isActive: Bool { ProcessInfo.processInfo.environment["NOTIFY_SOCKET"] != nil }

    public func ready(status: String) { notify("READY=1\nSTATUS=\(status)") }
    public func status(_ text: String) { notify("STATUS=\(text)") }
    public func stopping() { notify("STOPPING=1") }
    public func watchdog() { notify("WATCHDOG=1") }

    /// Half the watchdog interval systemd asked for (`WatchdogSec=`), or `nil` when it asked for none.
    /// The corresponding C function is `sd_watchdog_enabled`.
    public var watchdogPingInterval: Duration? {
        var microseconds: UInt64 = 0
        guard sd_watchdog_enabled(0, &microseconds) > 0, microseconds > 0 else { return nil }
        return .microseconds(Int64(microseconds / 2))
    }

    /// The corresponding C function is `sd_notify`.
    private func notify(_ state: String) {
        guard isActive else { return }
        _ = sd_notify(0, state)
    }
}
