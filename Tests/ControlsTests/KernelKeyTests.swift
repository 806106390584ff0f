import CShim
import Controls
import Foundation
import SwiftWingCore
import Testing

/// A virtual key device made through `/dev/uinput` (in the VM rig's guest after `modprobe uinput`).
final class VirtualKeyboard {
    let fd: Int32

    init(name: String, keys: [UInt16]) throws {
        fd = open("/dev/uinput", O_WRONLY | O_NONBLOCK)
        guard fd >= 0 else { throw SystemCallError("open", subject: "/dev/uinput", errno: errno) }
        _ = sw_ioctl_int(fd, sw_UI_SET_EVBIT(), Int32(EV_KEY))
        for key in keys { _ = sw_ioctl_int(fd, sw_UI_SET_KEYBIT(), Int32(key)) }
        var setup = uinput_setup()
        setup.id.bustype = UInt16(BUS_USB)
        setup.id.vendor = 0x1234
        setup.id.product = 0x5678
        withUnsafeMutableBytes(of: &setup.name) { buffer in
            for (i, byte) in name.utf8.prefix(buffer.count - 1).enumerated() { buffer[i] = byte }
        }
        guard sw_ioctl_ptr(fd, sw_UI_DEV_SETUP(), &setup) == 0, sw_ioctl_int(fd, sw_UI_DEV_CREATE(), 0) == 0 else {
            let code = errno
            close(fd)
            throw SystemCallError("ioctl UI_DEV_CREATE", subject: "/dev/uinput", errno: code)
        }
    }

    func emit(type: UInt16, code: UInt16, value: Int32) {
        var event = input_event()
        event.type = type
        event.code = code
        event.value = value
        _ = withUnsafeBytes(of: &event) { write(fd, $0.baseAddress, $0.count) }
    }

    func key(_ code: UInt16, _ value: Int32) {
        emit(type: UInt16(EV_KEY), code: code, value: value)
        emit(type: UInt16(EV_SYN), code: UInt16(SYN_REPORT), value: 0)
    }

    func destroy() {
        _ = sw_ioctl_int(fd, sw_UI_DEV_DESTROY(), 0)
        close(fd)
    }
}

@Suite(
    .serialized,
    .enabled(
        if: FileManager.default.fileExists(atPath: "/dev/uinput"),
        "needs /dev/uinput: runs in the VM rig (Tests/VMRig/shutter-keys.sh)"))
struct KernelKeyTests {
    @Test func aKeyDevicePluggedInLaterIsUsedAndItsRemovalIsQuiet() async throws {
        let shutter = KeyShutter(keys: [UInt16(KEY_CAMERA)], longPressMilliseconds: 800)
        let log = EventLog()
        try shutter.start(log.handler)
        defer { shutter.stop() }
        try await Task.sleep(for: .milliseconds(100))  // the shutter's thread opens its inotify watch

        // Plugged in after the shutter started: picked up through inotify.
        let keyboard = try VirtualKeyboard(name: "SwiftWing test remote", keys: [UInt16(KEY_CAMERA), UInt16(KEY_A)])
        var waited = 0
        while !shutter.devices.values.contains("SwiftWing test remote"), waited < 300 {
            try await Task.sleep(for: .milliseconds(10))  // polls the kernel's device list
            waited += 1
        }
        #expect(shutter.devices.values.contains("SwiftWing test remote"))

        // One press with autorepeat: one press. Another key: nothing.
        let before = MonotonicInstant.now()
        keyboard.key(UInt16(KEY_CAMERA), 1)
        for _ in 0..<5 { keyboard.key(UInt16(KEY_CAMERA), 2) }
        keyboard.key(UInt16(KEY_CAMERA), 0)
        keyboard.key(UInt16(KEY_A), 1)
        keyboard.key(UInt16(KEY_A), 0)
        await log.wait(for: 1)
        // Past the 150 ms between two presses of one device, so the long press below is a press.
        try await Task.sleep(for: .milliseconds(200))
        #expect(log.presses == 1)
        if case .press(let press)? = log.all.first {
            // EVIOCSCLOCKID worked: the stamp is on CLOCK_MONOTONIC, between the two readings.
            #expect(press.time >= before && press.time <= MonotonicInstant.now())
            #expect(press.source == .key)
        }

        // Held past the threshold: one long press.
        keyboard.key(UInt16(KEY_CAMERA), 1)
        try await Task.sleep(for: .milliseconds(1200))  // held: the kernel stamps the release 1.2 s later
        keyboard.key(UInt16(KEY_CAMERA), 0)
        await log.wait(for: 3)
        #expect(log.presses == 2)
        #expect(log.longPresses == 1)

        // Unplugged: dropped without fuss, and the shutter keeps running.
        keyboard.destroy()
        waited = 0
        while !shutter.devices.isEmpty, waited < 300 {
            try await Task.sleep(for: .milliseconds(10))  // polls the kernel's device list
            waited += 1
        }
        #expect(shutter.devices.isEmpty)
        #expect(EventClock.realtimeStampsConverted == 0)
    }

    @Test func onlyAllowedDevicesPressAndOneDevicePressesAtMostEvery150Milliseconds() async throws {
        let shutter = KeyShutter(
            keys: [UInt16(KEY_CAMERA)], longPressMilliseconds: nil,
            allowList: KeyDeviceAllowList(parsing: "SwiftWing allowed remote"))
        let log = EventLog()
        try shutter.start(log.handler)
        defer { shutter.stop() }
        let allowed = try VirtualKeyboard(name: "SwiftWing allowed remote", keys: [UInt16(KEY_CAMERA)])
        defer { allowed.destroy() }
        var waited = 0
        while !shutter.devices.values.contains("SwiftWing allowed remote"), waited < 300 {
            try await Task.sleep(for: .milliseconds(10))  // polls the kernel's device list
            waited += 1
        }
        #expect(shutter.devices.values.contains("SwiftWing allowed remote"))
        // A keyboard not on the list has the key too, but is left alone.
        let other = try VirtualKeyboard(name: "SwiftWing other keyboard", keys: [UInt16(KEY_CAMERA)])
        defer { other.destroy() }
        try await Task.sleep(for: .milliseconds(300))  // time for the kernel and inotify to offer it to the shutter
        other.key(UInt16(KEY_CAMERA), 1)
        other.key(UInt16(KEY_CAMERA), 0)
        #expect(!shutter.devices.values.contains("SwiftWing other keyboard"))

        // Five taps within a few milliseconds: one press.
        for _ in 0..<5 {
            allowed.key(UInt16(KEY_CAMERA), 1)
            allowed.key(UInt16(KEY_CAMERA), 0)
        }
        await log.wait(for: 1)
        try await Task.sleep(for: .milliseconds(200))  // kernel-stamped events: real time must pass
        #expect(log.presses == 1)  // none from the other keyboard
        #expect(shutter.statistics.throttled == 4)
        // Later than 150 ms: a press again.
        allowed.key(UInt16(KEY_CAMERA), 1)
        allowed.key(UInt16(KEY_CAMERA), 0)
        await log.wait(for: 2)
        #expect(log.presses == 2)
    }
}
