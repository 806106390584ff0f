import Foundation
import Testing

@testable import Appliance

/// The doctor's device checks on the host: real files in a temporary directory, the real (absent or
/// present) kernel devices; nothing of the kernel is imitated.
@Suite("doctor: GPIO, key devices, framebuffer, clock, credential")
struct DoctorDeviceCheckTests {
    private let directory: URL = {
        let url = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent(
            "doctor-\(UUID().uuidString.prefix(8))")
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }()

    private func file(_ name: String, _ text: String) -> String {
        let path = directory.appendingPathComponent(name).path
        #expect(FileManager.default.createFile(atPath: path, contents: Data(text.utf8)), "cannot write \(path)")
        return path
    }

    @Test("the clock: before 2024 fails with the fix; synchronised by timesyncd's flag or the kernel")
    func clock() {
        let flag = file("synchronized", "")
        let missing = directory.appendingPathComponent("absent").path
        let early = DoctorReport.clockCheck(
            now: Date(timeIntervalSince1970: 86_400), synchronizedFlag: flag, kernelSynchronised: true)
        #expect(!early.ok && early.detail.contains("1970-01-02") && early.detail.contains("timedatectl set-ntp true"))
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        #expect(DoctorReport.clockCheck(now: now, synchronizedFlag: flag, kernelSynchronised: false).ok)
        #expect(DoctorReport.clockCheck(now: now, synchronizedFlag: missing, kernelSynchronised: true).ok)
        let drifting = DoctorReport.clockCheck(now: now, synchronizedFlag: missing, kernelSynchronised: false)
        #expect(!drifting.ok && drifting.detail.contains("Fix:"))
        #expect(!DoctorReport.clockCheck(now: now, synchronizedFlag: missing, kernelSynchronised: nil).ok)
    }

    @Test("the credential: present without showing it, empty, absent (with the fix), installed encrypted")
    func credential() {
        var configuration = ApplianceConfiguration()
        #expect(DoctorReport.credentialCheck(configuration, environment: [:]).ok, "no backend, no key needed")
        configuration.backend.url = "https://talaria.example/"
        let secret = "sk-doctor-test-0123456789"
        configuration.backend.apiKeyFile = file("api-key", secret + "\n")
        let present = DoctorReport.credentialCheck(configuration, environment: [:])
        #expect(present.ok && present.detail.contains("present") && !present.detail.contains(secret))
        configuration.backend.apiKeyFile = file("empty-key", "\n")
        let empty = DoctorReport.credentialCheck(configuration, environment: [:])
        #expect(!empty.ok && empty.detail.contains("empty") && empty.detail.contains("systemd-creds encrypt"))
        configuration.backend.apiKeyFile = nil
        let cred = directory.appendingPathComponent("api-key.cred").path
        let absent = DoctorReport.credentialCheck(configuration, environment: [:], encryptedCredential: cred)
        #expect(!absent.ok && absent.detail.contains("systemd-creds encrypt --name=api-key KEYFILE \(cred)"))
        _ = file("api-key.cred", "encrypted")
        #expect(DoctorReport.credentialCheck(configuration, environment: [:], encryptedCredential: cred).ok)
        // Through systemd's credentials directory, as the service sees it.
        let credentials = directory.appendingPathComponent("credentials")
        try? FileManager.default.createDirectory(at: credentials, withIntermediateDirectories: true)
        #expect(
            FileManager.default.createFile(
                atPath: credentials.appendingPathComponent("api-key").path, contents: Data(secret.utf8)))
        let service = DoctorReport.credentialCheck(
            configuration, environment: ["CREDENTIALS_DIRECTORY": credentials.path])
        #expect(service.ok && !service.detail.contains(secret))
    }

    @Test("a framebuffer that is missing or is not a framebuffer fails with the device named")
    func framebuffer() {
        let missing = DoctorReport.framebufferCheck(.framebuffer(path: directory.appendingPathComponent("fb9").path))
        #expect(!missing.ok && missing.detail.contains("fb9"))
        let plain = DoctorReport.framebufferCheck(.framebuffer(path: file("fb0", "not a device")))
        #expect(!plain.ok && plain.detail.contains("fb0"))
        #expect(DoctorReport.framebufferCheck(.none).ok)
    }

    @Test("key devices: files that are not input devices offer no keys; an empty folder says how to add one")
    func keyDevices() {
        var configuration = ApplianceConfiguration()
        configuration.shutter.keyDirectory = directory.path
        let none = DoctorReport.keyDevicesCheck(configuration)
        #expect(none.ok && none.detail.contains("0 event device(s)"))
        _ = file("event0", "")
        _ = file("mouse0", "")
        let plain = DoctorReport.keyDevicesCheck(configuration)
        #expect(plain.detail.contains("1 event device(s)") && plain.detail.contains("none sends"))
    }

    @Test("a GPIO chip that is not there fails with the chips there are and the fix")
    func gpioChipMissing() {
        var configuration = ApplianceConfiguration()
        #expect(DoctorReport.gpioCheck(configuration).ok, "no lines configured is fine")
        configuration.shutter.gpioChip = "no-such-chip-\(UUID().uuidString.prefix(4))"
        let check = DoctorReport.gpioCheck(configuration)
        #expect(!check.ok && check.detail.contains("no GPIO chip labelled or named") && check.detail.contains("Fix:"))
        configuration.shutter.gpioChip = ""
        configuration.buzzer.gpioLine = "GPIO18"
        let orphan = DoctorReport.gpioCheck(configuration)
        #expect(!orphan.ok && orphan.detail.contains("set buzzer.gpio_chip"))
    }

    @Test("an unreachable backend fails within the timeout and names the fix")
    func unreachable() throws {
        var configuration = ApplianceConfiguration()
        configuration.backend.url = "http://127.0.0.1:9/"
        let check = DoctorReport.reachabilityCheck(configuration, timeout: .seconds(2))
        #expect(!check.ok && check.detail.contains("Fix: check the network"))
    }
}
