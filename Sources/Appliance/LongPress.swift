import Controls
import Foundation
import Logging
import Panel
import Store
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// One address of this device on one interface.
struct NetworkAddress: Sendable, Equatable, CustomStringConvertible {
    enum Family: Sendable, Equatable {
        case ipv4, ipv6
    }

    var interface: String
    var family: Family
    /// Numeric form: `192.168.1.20`, `2001:db8::20`, `fe80::1%eth0`.
    var address: String

    /// `192.168.1.20 (eth0)`.
    var description: String { "\(address) (\(interface))" }
}

/// This device's IPv4 and IPv6 addresses (not loopback), for the long press's "show the address".
enum NetworkAddresses {
    /// What the panel and the log say when the device has no address at all.
    static let none = "no network"

    /// Every non-loopback IPv4 and IPv6 address, in ``ordered(_:)`` order.
    /// The corresponding C functions are `getifaddrs` and `getnameinfo(NI_NUMERICHOST)`.
    static func current() -> [NetworkAddress] {
        var head: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&head) == 0, let first = head else { return [] }
        defer { freeifaddrs(head) }
        var addresses: [NetworkAddress] = []
        var cursor: UnsafeMutablePointer<ifaddrs>? = first
        while let entry = cursor {
            defer { cursor = entry.pointee.ifa_next }
            guard let address = entry.pointee.ifa_addr, entry.pointee.ifa_flags & UInt32(IFF_LOOPBACK) == 0 else {
                continue
            }
            let family = Int32(address.pointee.sa_family)
            guard family == AF_INET || family == AF_INET6 else { continue }
            var host = [CChar](repeating: 0, count: Int(NI_MAXHOST))
            let length = socklen_t(family == AF_INET ? MemoryLayout<sockaddr_in>.size : MemoryLayout<sockaddr_in6>.size)
            guard getnameinfo(address, length, &host, socklen_t(host.count), nil, 0, NI_NUMERICHOST) == 0 else {
                continue
            }
            addresses.append(
                NetworkAddress(
                    interface: String(cString: entry.pointee.ifa_name), family: family == AF_INET ? .ipv4 : .ipv6,
                    address: String(decoding: host.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)))
        }
        return ordered(addresses)
    }

    /// The order an operator reads them in: IPv4 first (what a browser on the same network takes),
    /// then global IPv6, then link-local IPv6 (`fe80::`, usable only with its interface); loopback
    /// is dropped should it be passed in. Within each group, by interface name, then as found.
    static func ordered(_ addresses: [NetworkAddress]) -> [NetworkAddress] {
        func rank(_ address: NetworkAddress) -> Int {
            switch address.family {
            case .ipv4: 0
            case .ipv6: address.address.lowercased().hasPrefix("fe80:") ? 2 : 1
            }
        }
        let isLoopback = { (address: NetworkAddress) in
            address.interface == "lo" || address.address.hasPrefix("127.") || address.address == "::1"
        }
        return addresses.enumerated().filter { !isLoopback($0.element) }.sorted { a, b in
            (rank(a.element), a.element.interface, a.offset) < (rank(b.element), b.element.interface, b.offset)
        }.map(\.element)
    }

    /// The kernel's hostname, without a DNS lookup (Foundation's `hostName` may resolve it, which
    /// waits for the network). The corresponding C function is `gethostname`.
    static func hostname() -> String {
        var name = [CChar](repeating: 0, count: 256)
        guard gethostname(&name, name.count - 1) == 0 else { return "unknown host" }
        return String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// `192.168.1.20 (eth0), 2001:db8::20 (eth0)`, or `no network` when there is none.
    static func formatted(_ addresses: [NetworkAddress]) -> String {
        addresses.isEmpty ? none : addresses.map(\.description).joined(separator: ", ")
    }
}

/// What a long press shows: who this device is on the network and how its queue stands.
struct DeviceSummary: Sendable, Equatable {
    var hostname: String
    var addresses: [NetworkAddress]
    /// Scans per state; nil when the store could not be read.
    var queue: [ScanState: Int]?
    /// Failed scans the long press sent back to the queue.
    var retried: Int

    /// `14 queued, 2 failed, 1 needs attention` (states with scans only; `queue empty`; `queue unreadable`).
    var queueDescription: String {
        guard let queue else { return "queue unreadable" }
        let waiting = (queue[.queued] ?? 0) + (queue[.uploading] ?? 0) + (queue[.analyzing] ?? 0)
        var parts: [String] = []
        if waiting > 0 { parts.append("\(waiting) queued") }
        if let failed = queue[.failed], failed > 0 { parts.append("\(failed) failed") }
        if let attention = queue[.needsAttention], attention > 0 {
            parts.append("\(attention) \(attention == 1 ? "needs" : "need") attention")
        }
        if let done = queue[.done], done > 0 { parts.append("\(done) done") }
        return parts.isEmpty ? "queue empty" : parts.joined(separator: ", ")
    }

    /// The full-screen notice: the hostname, every address (or "no network"), the queue, and how many
    /// failed scans were retried. (The panel wraps the detail on spaces, so the parts are joined with " · ".)
    var notice: PanelNotice {
        var parts = [hostname, NetworkAddresses.formatted(addresses), queueDescription]
        if retried > 0 { parts.append("\(retried) failed \(retried == 1 ? "scan" : "scans") retried") }
        return .message(title: "THIS DEVICE", detail: parts.joined(separator: " · "))
    }
}

/// The long press's second action: retry failed scans, then show the device's address and state on
/// the panel (a full-screen notice for ``noticeDuration``) and in the log.
///
/// Runs in a task of its own, after the long-press buzzer pattern already sounded on the input's thread.
final class LongPressAction: Sendable {
    /// Sends failed scans back to the upload queue; returns how many. The network uplink supplies it
    /// (through ``ApplianceDaemon/init(configuration:retryFailedScans:)``); the daemon's default only logs.
    typealias RetryFailedScans = @Sendable () async -> Int

    /// How long the notice stays up: 10 s.
    static let noticeDuration = Duration.seconds(10)

    private let retryFailedScans: RetryFailedScans
    private let queueCounts: @Sendable () throws -> [ScanState: Int]
    private let addresses: @Sendable () -> [NetworkAddress]
    private let hostname: @Sendable () -> String
    private let show: @Sendable (PanelNotice, Duration) -> Void
    private let logger: Logger

    init(
        retryFailedScans: @escaping RetryFailedScans, queueCounts: @escaping @Sendable () throws -> [ScanState: Int],
        addresses: @escaping @Sendable () -> [NetworkAddress] = NetworkAddresses.current,
        hostname: @escaping @Sendable () -> String = NetworkAddresses.hostname,
        show: @escaping @Sendable (PanelNotice, Duration) -> Void, logger: Logger
    ) {
        self.retryFailedScans = retryFailedScans
        self.queueCounts = queueCounts
        self.addresses = addresses
        self.hostname = hostname
        self.show = show
        self.logger = logger
    }

    @discardableResult
    func perform(_ press: ShutterPress) async -> DeviceSummary {
        let retried = await retryFailedScans()
        let summary = DeviceSummary(
            hostname: hostname(), addresses: addresses(), queue: try? queueCounts(), retried: retried)
        show(summary.notice, Self.noticeDuration)
        logger.notice(
            "long press: retried failed scans, showing the device's address and state",
            metadata: [
                "source": "\(press.source.rawValue)", "hostname": "\(summary.hostname)",
                "addresses": "\(NetworkAddresses.formatted(summary.addresses))", "queue": "\(summary.queueDescription)",
                "retried": "\(retried)",
            ])
        return summary
    }
}

/// Where the shutter inputs' events go, on the input's own thread: a press gets its feedback there
/// (the click is on the line before any hop) and is then handed to the pipeline; a long press
/// sounds its pattern there and runs ``LongPressAction`` in a task; an extended hold (5 s, pairing a
/// browser) sounds the long-press pattern again and runs its action in a task. Returns at once.
final class ShutterEventRouter: Sendable {
    private let feedback: any PressFeedback
    private let press: @Sendable (ShutterPress) async -> Void
    private let longPress: LongPressAction
    /// Nil: an extended hold does nothing more than the long press it follows.
    private let extendedHold: (@Sendable (ShutterPress) async -> Void)?

    init(
        feedback: any PressFeedback, press: @escaping @Sendable (ShutterPress) async -> Void,
        longPress: LongPressAction,
        extendedHold: (@Sendable (ShutterPress) async -> Void)? = nil
    ) {
        self.feedback = feedback
        self.press = press
        self.longPress = longPress
        self.extendedHold = extendedHold
    }

    func handle(_ event: ShutterEvent) {
        switch event {
        case .press(let shutterPress):
            feedback.pressAccepted(shutterPress)
            let press = self.press
            Task { await press(shutterPress) }
        case .longPress(let shutterPress):
            feedback.longPress(shutterPress)
            let action = longPress
            Task { await action.perform(shutterPress) }
        case .extendedHold(let shutterPress):
            guard let action = extendedHold else { return }
            feedback.longPress(shutterPress)
            Task { await action(shutterPress) }
        }
    }
}
