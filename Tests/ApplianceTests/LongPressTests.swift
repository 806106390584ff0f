import Controls
import Foundation
import Logging
import Panel
import Store
import Synchronization
import SwiftWingCore
import SwiftWingTesting
import Testing
@testable import Appliance

@Suite struct NetworkAddressTests {
    private func address(_ interface: String, _ family: NetworkAddress.Family, _ text: String) -> NetworkAddress {
        NetworkAddress(interface: interface, family: family, address: text)
    }

    @Test func noAddressSaysNoNetwork() {
        #expect(NetworkAddresses.formatted([]) == "no network")
        #expect(NetworkAddresses.formatted(NetworkAddresses.ordered([address("lo", .ipv4, "127.0.0.1"), address("lo", .ipv6, "::1")]))
            == "no network")
    }

    @Test func ipv4FirstThenGlobalIPv6ThenLinkLocal() {
        let found = [
            address("wlan0", .ipv6, "fe80::2%wlan0"),
            address("lo", .ipv4, "127.0.0.1"),
            address("wlan0", .ipv6, "2001:db8::20"),
            address("wlan0", .ipv4, "10.0.0.7"),
            address("eth0", .ipv4, "192.168.1.20"),
            address("lo", .ipv6, "::1"),
        ]
        #expect(NetworkAddresses.formatted(NetworkAddresses.ordered(found))
            == "192.168.1.20 (eth0), 10.0.0.7 (wlan0), 2001:db8::20 (wlan0), fe80::2%wlan0 (wlan0)")
    }

    @Test func theRealListHasNoLoopbackAndNumericAddresses() {
        let addresses = NetworkAddresses.current()
        #expect(addresses.allSatisfy { $0.interface != "lo" && $0.address != "::1" && !$0.address.hasPrefix("127.") })
        for entry in addresses {
            switch entry.family {
            case .ipv4: #expect(entry.address.split(separator: ".").count == 4, "\(entry)")
            case .ipv6: #expect(entry.address.contains(":"), "\(entry)")
            }
        }
        #expect(!NetworkAddresses.hostname().isEmpty)
    }

    @Test func theNoticeNamesHostAddressesQueueAndRetries() {
        let summary = DeviceSummary(
            hostname: "swiftwing-7", addresses: [address("eth0", .ipv4, "192.168.1.20")],
            queue: [.queued: 3, .uploading: 1, .failed: 2, .done: 9], retried: 2)
        #expect(summary.queueDescription == "4 queued, 2 failed, 9 done")
        #expect(summary.notice == .message(
            title: "THIS DEVICE",
            detail: "swiftwing-7 · 192.168.1.20 (eth0) · 4 queued, 2 failed, 9 done · 2 failed scans retried"))
        let offline = DeviceSummary(hostname: "h", addresses: [], queue: [:], retried: 0)
        #expect(offline.notice.detail == "h · no network · queue empty")
        #expect(DeviceSummary(hostname: "h", addresses: [], queue: nil, retried: 0).queueDescription == "queue unreadable")
    }
}

/// The long press from an input (the fake GPIO shutter of SwiftWingTesting, delivering events as the
/// GPIO thread does) through the daemon's router: the long-press pattern, the retry hook, the notice.
@Suite struct LongPressActionTests {
    /// What the router's collaborators saw.
    final class Record: Sendable {
        let retries = Atomic<Int>(0)
        let presses = Mutex<[ShutterPress]>([])
        let shown = Mutex<[(PanelNotice, Duration)]>([])
    }

    /// Records the feedback calls (the buzzer's long-press pattern is `longPress`).
    final class RecordingFeedback: PressFeedback {
        let calls = Mutex<[String]>([])
        func pressAccepted(_ press: ShutterPress) { calls.withLock { $0.append("accepted") } }
        func pressRefused(_ press: ShutterPress, reason: String) { calls.withLock { $0.append("refused") } }
        func scanSaved(_ press: ShutterPress) { calls.withLock { $0.append("saved") } }
        func longPress(_ press: ShutterPress) { calls.withLock { $0.append("long") } }
    }

    private func until(_ condition: () -> Bool) async {
        let deadline = ContinuousClock.now + .seconds(10)
        while !condition(), ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(5)) }
    }

    private func router(_ record: Record, feedback: RecordingFeedback) -> ShutterEventRouter {
        let action = LongPressAction(
            retryFailedScans: {
                record.retries.add(1, ordering: .relaxed)
                return 2
            },
            queueCounts: { [.queued: 5, .failed: 0] },
            addresses: { [NetworkAddress(interface: "eth0", family: .ipv4, address: "192.168.1.20")] },
            hostname: { "swiftwing-test" },
            show: { notice, duration in record.shown.withLock { $0.append((notice, duration)) } },
            logger: Logger(label: "test"))
        return ShutterEventRouter(
            feedback: feedback, press: { press in record.presses.withLock { $0.append(press) } }, longPress: action)
    }

    @Test func aLongPressRetriesFailedScansAndShowsTheAddressForTenSeconds() async throws {
        let record = Record()
        let feedback = RecordingFeedback()
        let shutter = FakeShutter()
        try shutter.start(router(record, feedback: feedback).handle)
        let press = ShutterPress(time: .now(), source: .gpio)

        #expect(shutter.emit(.press(press)))
        #expect(shutter.emit(.longPress(press)))
        // The pattern sounds on the input's thread, before emit returns; the rest runs in a task.
        #expect(feedback.calls.withLock { $0 } == ["accepted", "long"])
        await until { !record.shown.withLock { $0 }.isEmpty && !record.presses.withLock { $0 }.isEmpty }

        #expect(record.retries.load(ordering: .relaxed) == 1)
        #expect(record.presses.withLock { $0 } == [press], "the press before the long press is one scan, the long press none")
        let shown = record.shown.withLock { $0 }
        #expect(shown.count == 1)
        #expect(shown.first?.1 == .seconds(10))
        #expect(shown.first?.0 == .message(
            title: "THIS DEVICE", detail: "swiftwing-test · 192.168.1.20 (eth0) · 5 queued · 2 failed scans retried"))
    }

    @Test func aPlainPressNeverRetries() async throws {
        let record = Record()
        let feedback = RecordingFeedback()
        let shutter = FakeShutter()
        try shutter.start(router(record, feedback: feedback).handle)
        shutter.emit(.press(ShutterPress(time: .now(), source: .key)))
        await until { !record.presses.withLock { $0 }.isEmpty }
        try await Task.sleep(for: .milliseconds(50))
        #expect(record.retries.load(ordering: .relaxed) == 0)
        #expect(record.shown.withLock { $0 }.isEmpty)
        #expect(feedback.calls.withLock { $0 } == ["accepted"])
    }
}
