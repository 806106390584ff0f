import CShim
import Foundation
import SwiftWingCore

#if canImport(Glibc)
    import Glibc
#endif

/// What one key device (`/dev/input/event*`) offers, read without grabbing it (for `swiftwing doctor`).
public struct KeyDeviceSurvey: Sendable, Equatable {
    public var path: String
    /// The device's name (`EVIOCGNAME`), empty when it could not be opened.
    public var name: String
    /// Of the keys asked about, those the device can send.
    public var offeredKeys: Set<UInt16>
    /// Why it could not be opened (`errno`), `nil` when it was read.
    public var openErrno: Int32?

    /// Every `event*` node in `directory`, in name order; an empty list when there is none (or no directory).
    public static func survey(directory: String, keys: Set<UInt16>) -> [KeyDeviceSurvey] {
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).filter {
            $0.hasPrefix("event")
        }
        return names.sorted().map { name in
            let path = directory + "/" + name
            let fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
            guard fd >= 0 else { return KeyDeviceSurvey(path: path, name: "", offeredKeys: [], openErrno: errno) }
            defer { close(fd) }
            let (offered, deviceName) = capabilities(fd: fd, keys: keys)
            return KeyDeviceSurvey(path: path, name: deviceName, offeredKeys: offered, openErrno: nil)
        }
    }

    /// The name and USB/Bluetooth ids of the open event device `fd` (`EVIOCGNAME`, `EVIOCGID`; 0 when not given).
    static func identity(fd: Int32, name: String) -> KeyDeviceIdentity {
        var id = input_id()
        guard sw_ioctl_ptr(fd, sw_EVIOCGID(), &id) == 0 else {
            return KeyDeviceIdentity(name: name, vendor: 0, product: 0)
        }
        return KeyDeviceIdentity(name: name, vendor: id.vendor, product: id.product)
    }

    /// Which of `keys` the open event device `fd` can send (`EVIOCGBIT`), and its name (`EVIOCGNAME`).
    static func capabilities(fd: Int32, keys: Set<UInt16>) -> (offered: Set<UInt16>, name: String) {
        var bits = [UInt8](repeating: 0, count: Int(KEY_CNT + 7) / 8)
        let gotBits = bits.withUnsafeMutableBytes {
            sw_ioctl_ptr(fd, sw_EVIOCGBIT_KEY(UInt32($0.count)), $0.baseAddress)
        }
        let offered = keys.filter { code in gotBits > 0 && bits[Int(code) / 8] & (1 << (code % 8)) != 0 }
        var nameBuffer = [CChar](repeating: 0, count: 256)
        _ = nameBuffer.withUnsafeMutableBytes { sw_ioctl_ptr(fd, sw_EVIOCGNAME(UInt32($0.count - 1)), $0.baseAddress) }
        let name = String(decoding: nameBuffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return (offered, name)
    }
}
