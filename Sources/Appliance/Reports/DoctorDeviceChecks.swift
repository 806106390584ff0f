import Controls
import Foundation
import HTTPEngine
import Panel
import Store
import SwiftWingCore
import Talaria
import Uplink

#if canImport(Glibc)
    import Glibc
#endif

/// The doctor's checks of the device around the daemon: GPIO lines, key devices, framebuffer, clock,
/// the backend's reachability and the API key. Each problem says its fix; none changes anything.
extension DoctorReport {
    static func deviceChecks(_ configuration: ApplianceConfiguration) -> [Check] {
        [
            gpioCheck(configuration), keyDevicesCheck(configuration), framebufferCheck(configuration.panel),
            clockCheck(), reachabilityCheck(configuration), credentialCheck(configuration),
        ]
    }

    /// The configured shutter, buzzer and light lines: the chip exists, the line exists, and nobody
    /// but swiftwing holds it.
    static func gpioCheck(_ configuration: ApplianceConfiguration) -> Check {
        let shutter = configuration.shutter
        let buzzer = configuration.buzzer
        let outputChip = buzzer.gpioChip.isEmpty ? shutter.gpioChip : buzzer.gpioChip
        var lines: [(what: String, spec: GPIOLineSpec)] = []
        if !shutter.gpioChip.isEmpty {
            lines.append(
                ("shutter", GPIOLineSpec(chip: shutter.gpioChip, line: shutter.gpioLine, activeLow: shutter.activeLow)))
        }
        for (what, line) in [("buzzer", buzzer.gpioLine), ("light", buzzer.lightLine)] where !line.isEmpty {
            guard !outputChip.isEmpty else {
                return Check(
                    name: "gpio", ok: false, detail: "the \(what) line \(line) is set but no chip: set buzzer.gpio_chip"
                )
            }
            lines.append((what, GPIOLineSpec(chip: outputChip, line: line, activeLow: false)))
        }
        guard !lines.isEmpty else {
            return Check(
                name: "gpio", ok: true,
                detail:
                    "no GPIO lines configured (shutter.gpio_chip is empty): presses come from key devices "
                    + "and `swiftwing shutter`"
            )
        }
        var found: [String] = []
        for (what, spec) in lines {
            let state: GPIOLineState
            do {
                state = try GPIOLineState.read(spec)
            } catch {
                return Check(name: "gpio", ok: false, detail: "\(what): \(error)")
            }
            let place = "\(what) \(spec.line) = \(state.chipName) [\(state.chipLabel)] line \(state.offset)"
            guard state.isUsed || state.consumer != nil else {
                found.append(place + " (free)")
                continue
            }
            let holder = state.consumer ?? "a kernel driver"
            guard holder == "swiftwing" else {
                return Check(
                    name: "gpio", ok: false,
                    detail: GPIOError(kind: .busy(consumer: holder), spec: spec, chipName: state.chipName).description)
            }
            found.append(place + " (held by the running daemon)")
        }
        return Check(name: "gpio", ok: true, detail: found.joined(separator: "; "))
    }

    /// The key devices: each `event*` node readable, and which of them can send a shutter key.
    static func keyDevicesCheck(_ configuration: ApplianceConfiguration) -> Check {
        let keys = Set((try? KeyCodes.parse(configuration.shutter.keys)) ?? [])
        let directory = configuration.shutter.keyDirectory
        guard !keys.isEmpty else {
            return Check(name: "key devices", ok: true, detail: "none wanted (shutter.keys is empty)")
        }
        let devices = KeyDeviceSurvey.survey(directory: directory, keys: keys)
        let refused = devices.filter { $0.openErrno == EACCES || $0.openErrno == EPERM }
        if !refused.isEmpty {
            return Check(
                name: "key devices", ok: false,
                detail:
                    "\(refused.map(\.path).joined(separator: ", ")) cannot be read by this user. Fix: add the user "
                    + "to the group `input` (`sudo usermod -aG input swiftwing`; the systemd unit sets "
                    + "SupplementaryGroups=input)"
            )
        }
        let shutters = devices.filter { !$0.offeredKeys.isEmpty }.map { device in
            let offered = device.offeredKeys.sorted().map(KeyCodes.name(of:)).joined(separator: ",")
            return "\(device.path) \"\(device.name)\" (\(offered))"
        }
        let names = keys.sorted().map(KeyCodes.name(of:)).joined(separator: ",")
        guard !shutters.isEmpty else {
            return Check(
                name: "key devices", ok: true,
                detail: "\(devices.count) event device(s) in \(directory), none sends \(names): plug a remote or pedal "
                    + "in (it is picked up while the daemon runs), or use the GPIO button")
        }
        return Check(name: "key devices", ok: true, detail: "shutter keys on " + shutters.joined(separator: ", "))
    }

    /// The panel's framebuffer opens and has a size the panel can draw on.
    static func framebufferCheck(_ panel: PanelOutput) -> Check {
        guard case .framebuffer(let path) = panel else {
            return Check(name: "framebuffer", ok: true, detail: "not used (panel.output = \(panel))")
        }
        let device: FramebufferDevice
        do {
            device = try FramebufferDevice(path: path)
        } catch {
            return Check(name: "framebuffer", ok: false, detail: "\(error)")
        }
        let format = device.format
        let detail = "\(path) \"\(device.driverName)\": \(format.width)x\(format.height), \(format.bitsPerPixel) bpp"
        guard format.width >= 320, format.height >= 240 else {
            return Check(
                name: "framebuffer", ok: false,
                detail: detail
                    + ": smaller than the panel's 320x240. Fix: set the display's mode in config.txt (hdmi_mode, "
                    + "or the display overlay's size)")
        }
        return Check(name: "framebuffer", ok: true, detail: detail)
    }

    /// The wall clock: TLS needs a right date, and the library's dates come from it.
    static func clockCheck(
        now: Date = Date(), synchronizedFlag: String = "/run/systemd/timesync/synchronized",
        kernelSynchronised: Bool? = ClockSynchronisation.kernelSaysSynchronised
    ) -> Check {
        let utc = UTCDateParts(now)
        let (year, stamp) = (utc.year, utc.iso8601)
        guard year >= 2024 else {
            return Check(
                name: "clock", ok: false,
                detail:
                    "the clock says \(stamp): TLS to the backend fails and dates are wrong. Fix: connect the network "
                    + "and enable NTP (`sudo timedatectl set-ntp true`), or fit a real-time clock")
        }
        if FileManager.default.fileExists(atPath: synchronizedFlag) || kernelSynchronised == true {
            return Check(name: "clock", ok: true, detail: "\(stamp), synchronised")
        }
        return Check(
            name: "clock", ok: false,
            detail: "\(stamp), not synchronised with NTP (no \(synchronizedFlag), the kernel says unsynchronised). "
                + "Fix: `sudo timedatectl set-ntp true` and check the network; `timedatectl timesync-status` shows why")
    }

    /// A GET of the backend's base URL with a short timeout through the daemon's HTTP engine: any
    /// HTTP answer means the network, DNS, TLS and the server are there.
    static func reachabilityCheck(_ configuration: ApplianceConfiguration, timeout: Duration = .seconds(5)) -> Check {
        guard let raw = configuration.backend.url, let url = URL(string: raw), url.host != nil else {
            return Check(name: "backend reachable", ok: true, detail: "no backend.url to reach")
        }
        let engine = CurlEngine(
            configuration: CurlEngine.Configuration(
                userAgent: "swiftwing/\(ApplianceInfo.version)", caFile: configuration.backend.caFile))
        defer { engine.shutdown() }
        let request = HTTPRequest(
            method: .get, url: url, timeouts: HTTPTimeouts(connect: timeout, total: timeout, stall: timeout))
        let started = ContinuousClock.now
        let outcome = BlockingThread.waitForTask { () async throws(HTTPError) in try await engine.send(request).status }
        let milliseconds = (ContinuousClock.now - started).wholeMilliseconds
        switch outcome {
        case .success(let status):
            return Check(
                name: "backend reachable", ok: true, detail: "\(raw) answered HTTP \(status) in \(milliseconds) ms")
        case .failure(let error):
            return Check(
                name: "backend reachable", ok: false,
                detail:
                    "\(raw): \(error). Fix: check the network (`ip addr`, `ping`), DNS, the clock, and backend.url; "
                    + "scans wait on the device meanwhile")
        }
    }

    /// Whether an API key is installed, never what it is.
    static func credentialCheck(
        _ configuration: ApplianceConfiguration, environment: [String: String] = ProcessInfo.processInfo.environment,
        encryptedCredential: String = "/etc/swiftwing/api-key.cred"
    ) -> Check {
        guard configuration.backend.url != nil else {
            return Check(name: "credential", ok: true, detail: "none needed (no backend.url)")
        }
        let source = APIKeySource.resolve(configured: configuration.backend.apiKeyFile, environment: environment)
        let install =
            "Fix: `sudo systemd-creds encrypt --name=api-key KEYFILE \(encryptedCredential)`, then "
            + "`sudo systemctl restart swiftwing`"
        do {
            if try source.read() != nil {
                return Check(
                    name: "credential", ok: true, detail: "API key present in \(source.path ?? "") (not shown)")
            }
        } catch .apiKeyMissing(let path) {
            return Check(name: "credential", ok: false, detail: "\(path) is empty: no API key is installed. \(install)")
        } catch {
            return Check(name: "credential", ok: false, detail: error.description)
        }
        if FileManager.default.fileExists(atPath: encryptedCredential) {
            return Check(
                name: "credential", ok: true,
                detail: "API key installed as \(encryptedCredential) (encrypted: only the service reads it)")
        }
        if let url = configuration.backend.url.flatMap(URL.init(string:)), url.scheme == "http" {
            // Plain http:// is allowed to loopback only: the reference backend, which needs no key.
            return Check(
                name: "credential", ok: true, detail: "none installed; a development backend on loopback needs none")
        }
        return Check(name: "credential", ok: false, detail: "no API key is installed: uploads are refused. \(install)")
    }
}
