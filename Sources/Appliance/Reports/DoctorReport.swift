import Camera
import Controls
import Foundation
import HTTPEngine
import Imaging
import Panel
import Store
import SwiftWingCore
import Talaria
import Uplink

/// `swiftwing doctor`: checks what the daemon needs, one line each, and says what to fix.
public struct DoctorReport: Sendable {
    public struct Check: Sendable {
        public var name: String
        public var ok: Bool
        public var detail: String
    }

    public var checks: [Check] = []

    public var healthy: Bool { checks.allSatisfy(\.ok) }

    public static func run(configuration: ApplianceConfiguration) -> DoctorReport {
        var report = DoctorReport()
        report.checks.append(Check(name: "configuration", ok: true, detail: "valid"))
        report.checks.append(stateDirectoryCheck(configuration))
        report.checks.append(cameraCheck(configuration))
        report.checks.append(Check(name: "libraries", ok: true, detail: libraryVersions()))
        report.checks.append(backendCheck(configuration))
        report.checks.append(httpCheck())
        report.checks += deviceChecks(configuration)
        report.checks.append(recognizerCheck(configuration))
        return report
    }

    public func text() -> String {
        checks.map { "\($0.ok ? "ok  " : "FAIL") \($0.name): \($0.detail)" }.joined(separator: "\n")
    }

    private static func stateDirectoryCheck(_ configuration: ApplianceConfiguration) -> Check {
        let path = configuration.stateDirectory
        guard FileManager.default.fileExists(atPath: path) else {
            let parent = (path as NSString).deletingLastPathComponent
            if access(parent, W_OK) == 0 {
                return Check(
                    name: "state directory", ok: true,
                    detail: "\(path) does not exist yet; the daemon creates it on start")
            }
            return Check(
                name: "state directory", ok: false,
                detail:
                    "\(path) does not exist and \(parent) is not writable: create it for the swiftwing user, or let systemd do it with StateDirectory=swiftwing"
            )
        }
        guard access(path, W_OK) == 0 else {
            return Check(
                name: "state directory", ok: false,
                detail: "\(path) is not writable by this user: run as the swiftwing user or fix its owner")
        }
        var stats = statvfs()
        guard statvfs(path, &stats) == 0 else {
            return Check(name: "state directory", ok: false, detail: "\(path): cannot read free space")
        }
        let free = Int64(stats.f_bavail) * Int64(stats.f_frsize) / 1_048_576
        let enough = free >= configuration.minimumFreeMegabytes
        return Check(
            name: "state directory", ok: enough,
            detail: "\(path), \(free) MB free"
                + (enough
                    ? ""
                    : " — below daemon.min_free_megabytes (\(configuration.minimumFreeMegabytes)); presses will "
                        + "be refused. Fix: free space on that disk (`du -xh \(path) | sort -h | tail` shows what "
                        + "is big)"))
    }

    private static func cameraCheck(_ configuration: ApplianceConfiguration) -> Check {
        let daemon = ApplianceDaemon(configuration: configuration)
        let source: any FrameSource
        do {
            source = try daemon.makeCamera()
        } catch {
            return Check(name: "camera", ok: false, detail: "\(error)")
        }
        let outcome = BlockingThread.waitForTask { () async -> Outcome in
            let outcome: Outcome
            do {
                try await source.start()
                let frame = try await source.capture(after: .now(), timeout: .seconds(5))
                outcome = .success("\(source.status); captured a \(frame.width)x\(frame.height) frame")
            } catch {
                outcome = .failure("\(error)")
            }
            await source.stop()
            return outcome
        }
        switch outcome.get() {
        case .success(let detail): return Check(name: "camera", ok: true, detail: detail)
        case .failure(let detail): return Check(name: "camera", ok: false, detail: detail)
        }
    }

    /// The backend settings as the daemon would take them (no request is made).
    static func backendCheck(_ configuration: ApplianceConfiguration) -> Check {
        guard let raw = configuration.backend.url else {
            return Check(
                name: "backend", ok: true, detail: "none configured (backend.url): scans stay queued on the device")
        }
        guard let url = URL(string: raw), url.host != nil else {
            return Check(
                name: "backend", ok: false,
                detail: "backend.url \"\(raw)\" is not a URL: write e.g. https://talaria.example/")
        }
        guard TalariaEndpoints.allowsPlainHTTP(url) else {
            return Check(
                name: "backend", ok: false, detail: "backend.url \(raw) is plain http:// to another host: use https://")
        }
        if let caFile = configuration.backend.caFile, !FileManager.default.isReadableFile(atPath: caFile) {
            return Check(name: "backend", ok: false, detail: "backend.ca_file \(caFile) cannot be read")
        }
        let key = APIKeySource.resolve(configured: configuration.backend.apiKeyFile)
        do {
            let present = try key.read() != nil
            return Check(
                name: "backend", ok: true,
                detail: "\(raw); API key "
                    + (present
                        ? "read from \(key.path ?? "")"
                        : "none configured (only a backend that needs none will accept uploads)"))
        } catch {
            return Check(name: "backend", ok: false, detail: error.description)
        }
    }

    static func httpCheck() -> Check {
        let info = CurlEngine.versionInfo
        let detail =
            "libcurl \(info.libcurl) with \(info.sslBackend); HTTP/2 \(info.supportsHTTP2 ? "yes" : "no"); TLS 1.3 \(info.supportsTLS13 ? "yes" : "no")"
        return Check(
            name: "http", ok: info.supportsTLS13,
            detail: info.supportsTLS13
                ? detail
                : detail + ": the backend link needs TLS 1.3; install a newer libcurl3-gnutls / GnuTLS (3.6.5 or later)"
        )
    }

    private static func libraryVersions() -> String {
        let curl = CurlEngine.versionSummary.split(separator: " ").prefix(2).joined(separator: " ")
        return "libjpeg API \(LibJPEG.apiVersion), libgpiod \(LibGPIOD.version), \(curl), cairo \(LibCairo.version)"
    }
}

private enum Outcome: Sendable {
    case success(String)
    case failure(String)
}
