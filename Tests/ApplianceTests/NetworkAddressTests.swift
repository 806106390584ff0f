import Controls
import Foundation
import Logging
import Panel
import Store
import SwiftWingCore
import SwiftWingTesting
import Synchronization
import Testing

@testable import Appliance

@Suite struct NetworkAddressTests {
    private func address(_ interface: String, _ family: NetworkAddress.Family, _ text: String) -> NetworkAddress {
        NetworkAddress(interface: interface, family: family, address: text)
    }

    @Test func noAddressSaysNoNetwork() {
        #expect(NetworkAddresses.formatted([]) == "no network")
        #expect(
            NetworkAddresses.formatted(
                NetworkAddresses.ordered([address("lo", .ipv4, "127.0.0.1"), address("lo", .ipv6, "::1")]))
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
        #expect(
            NetworkAddresses.formatted(NetworkAddresses.ordered(found))
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
        #expect(
            summary.notice
                == .message(
                    title: "THIS DEVICE",
                    detail: "swiftwing-7 · 192.168.1.20 (eth0) · 4 queued, 2 failed, 9 done · 2 failed scans retried"))
        let offline = DeviceSummary(hostname: "h", addresses: [], queue: [:], retried: 0)
        #expect(offline.notice.detail == "h · no network · queue empty")
        #expect(
            DeviceSummary(hostname: "h", addresses: [], queue: nil, retried: 0).queueDescription == "queue unreadable")
    }
}
