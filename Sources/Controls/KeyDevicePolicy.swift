import Foundation
import SwiftWingCore

/// One entry of the key-device allow-list: a device name as the kernel reports it (`EVIOCGNAME`,
/// compared without regard to case) or a USB/Bluetooth `vendor:product` pair in hex (`05ac:0220`).
public enum KeyDeviceMatch: Hashable, Sendable, CustomStringConvertible {
    case name(String)
    case vendorProduct(vendor: UInt16, product: UInt16)

    /// `vvvv:pppp` (four hex digits each) is an id; anything else is a name.
    public init?(parsing text: String) {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty else { return nil }
        let halves = trimmed.split(separator: ":", omittingEmptySubsequences: false)
        if halves.count == 2, halves.allSatisfy({ $0.count == 4 }),
            let vendor = UInt16(halves[0], radix: 16), let product = UInt16(halves[1], radix: 16)
        {
            self = .vendorProduct(vendor: vendor, product: product)
        } else {
            self = .name(trimmed)
        }
    }

    public var description: String {
        switch self {
        case .name(let name): "\"\(name)\""
        case .vendorProduct(let vendor, let product): Self.hex(vendor) + ":" + Self.hex(product)
        }
    }

    static func hex(_ value: UInt16) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 4 - digits.count) + digits
    }
}

/// What a key device says it is, read when it is opened.
public struct KeyDeviceIdentity: Hashable, Sendable, CustomStringConvertible {
    public var name: String
    public var vendor: UInt16
    public var product: UInt16

    public init(name: String, vendor: UInt16, product: UInt16) {
        self.name = name
        self.vendor = vendor
        self.product = product
    }

    public var description: String {
        "\"\(name)\" (\(KeyDeviceMatch.hex(vendor)):\(KeyDeviceMatch.hex(product)))"
    }
}

/// Which key devices may press the shutter. Empty (the default): any device that can send one of
/// the shutter keys, as a kiosk with a Bluetooth remote or a foot pedal expects. With entries, only
/// devices matching one of them, so a keyboard (or a USB stick that claims to be one) plugged into
/// the kiosk cannot take pictures.
public struct KeyDeviceAllowList: Hashable, Sendable, CustomStringConvertible {
    public var entries: [KeyDeviceMatch]

    public init(_ entries: [KeyDeviceMatch] = []) {
        self.entries = entries
    }

    /// A comma-separated list of names and `vendor:product` ids; empty: any device.
    public init(parsing text: String) {
        entries = text.split(separator: ",").compactMap { KeyDeviceMatch(parsing: String($0)) }
    }

    public var allowsAny: Bool { entries.isEmpty }

    public func allows(_ device: KeyDeviceIdentity) -> Bool {
        if entries.isEmpty { return true }
        return entries.contains { entry in
            switch entry {
            case .name(let name): name.lowercased() == device.name.lowercased()
            case .vendorProduct(let vendor, let product): vendor == device.vendor && product == device.product
            }
        }
    }

    public var description: String {
        entries.isEmpty ? "any device with a shutter key" : entries.map(\.description).joined(separator: ", ")
    }
}

/// At most one press per ``minimumIntervalNanoseconds`` from one input, on the kernel's event
/// timestamps (the clock the press detector runs on, which tests advance): a stuck key, a
/// malfunctioning remote or a device that types fast cannot flood the queue. A long press goes
/// with its press: it is dropped when its press was.
public struct PressRateLimit: Sendable, Equatable {
    public static let defaultMinimumIntervalNanoseconds: Int64 = 150_000_000

    public let minimumIntervalNanoseconds: Int64
    private var lastAccepted: MonotonicInstant?
    private var lastDropped: MonotonicInstant?
    /// Presses dropped so far, for the statistics.
    public private(set) var dropped = 0

    public init(minimumIntervalNanoseconds: Int64 = PressRateLimit.defaultMinimumIntervalNanoseconds) {
        self.minimumIntervalNanoseconds = minimumIntervalNanoseconds
    }

    /// Whether `event` goes on to the handler.
    public mutating func admit(_ event: ShutterEvent) -> Bool {
        switch event {
        case .press(let press):
            // A stamp before the last one (a device with its own idea of time) is not throttled.
            if let last = lastAccepted, (0..<minimumIntervalNanoseconds).contains(press.time.nanoseconds(since: last)) {
                lastDropped = press.time
                dropped += 1
                return false
            }
            lastAccepted = press.time
            return true
        case .longPress(let press), .extendedHold(let press):
            return press.time != lastDropped
        }
    }
}
