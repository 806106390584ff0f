import Controls
import Foundation
import HTTPEngine
import Logging
import Panel
import Store
import SwiftWingCore
import Synchronization
import Talaria
import Uplink

/// Routes the uplink's events to the buzzer and the panel, which are built after it.
final class UplinkEventRouter: Sendable {
    private struct Targets {
        var feedback: (any PressFeedback)?
        var panel: PanelFeeder?
    }

    private let targets = Mutex(Targets())

    func connect(feedback: any PressFeedback, panel: PanelFeeder?) {
        targets.withLock { $0 = Targets(feedback: feedback, panel: panel) }
    }

    func handle(_ event: UplinkEvent) {
        let targets = self.targets.withLock { $0 }
        switch event {
        case .booksLanded:
            targets.feedback?.notice(.booksLanded)
        case .scanFailed:
            targets.feedback?.notice(.scanFailed)
        case .connectivityChanged(.rateLimited), .connectivityChanged(.busy):
            targets.feedback?.notice(.rateLimited)
        case .apiKeyMissing:
            targets.panel?.noteAPIKeyMissing()
        case .connectivityChanged, .progress, .scanChanged:
            break
        }
        targets.panel?.refreshSoon()
    }
}

/// The backend link of a running daemon: the HTTP engine and the uplink service over it.
struct DaemonUplink: Sendable {
    let service: UplinkService
    let engine: CurlEngine

    /// The uplink for `backend.url`; `nil` (and one log line) when no backend is configured.
    static func make(
        configuration: ApplianceConfiguration, database: AppDatabase, state: StateDirectory, deviceID: UUID,
        router: UplinkEventRouter, heartbeat: Heartbeat, logger: Logger
    ) throws(ApplianceError) -> DaemonUplink? {
        guard let raw = configuration.backend.url else {
            logger.notice("no backend.url is configured: scans are queued and stay on the device until one is set")
            return nil
        }
        let url = try serviceURL(raw, key: "backend.url", example: "https://talaria.example/", service: "backend")
        if let caFile = configuration.backend.caFile, !FileManager.default.isReadableFile(atPath: caFile) {
            throw ApplianceError(
                "backend.ca_file \(caFile) cannot be read: put the PEM certificates there or remove the setting")
        }
        let engine = CurlEngine(
            configuration: CurlEngine.Configuration(
                userAgent: "swiftwing/\(ApplianceInfo.version)", caFile: configuration.backend.caFile),
            logger: Logger(label: "http"))
        var settings = UplinkSettings(
            endpoints: TalariaEndpoints(base: url), deviceID: deviceID,
            apiKey: APIKeySource.resolve(configured: configuration.backend.apiKeyFile), version: ApplianceInfo.version)
        settings.concurrency = configuration.backend.concurrency
        settings.pollInterval = configuration.backend.pollIntervalSeconds
        settings.probeInterval = configuration.backend.probeIntervalSeconds
        settings.abandonStreamAfter = configuration.backend.streamAbandonSeconds
        settings.jobLostAfter = configuration.backend.jobLostAfterSeconds
        settings.retry = RetryPolicy(roundInterval: configuration.backend.roundIntervalSeconds)
        let service = UplinkService(
            settings: settings, transport: engine, database: database, spool: SpoolDirectory(state),
            logger: Logger(label: "uplink"), events: { router.handle($0) }, heartbeat: { heartbeat.beat() })
        return DaemonUplink(service: service, engine: engine)
    }

    var status: UplinkStatus {
        let snapshot = service.snapshot
        return UplinkStatus(
            connectivity: snapshot.connectivity.description,
            rateLimitRemainingSeconds: snapshot.rateLimitRemainingSeconds,
            jobsInFlight: snapshot.jobsInFlight, concurrency: snapshot.concurrency, backend: snapshot.backend,
            lastProblem: snapshot.lastProblem, apiKeyMissing: apiKeyMissing)
    }

    /// No key is installed (the credential is blank or absent), as opposed to one the backend refused.
    var apiKeyMissing: Bool {
        do {
            _ = try service.settings.apiKey.read()
            return false
        } catch {
            if case .apiKeyMissing = error { return true }
            return false
        }
    }

    /// The top bar's words for this moment.
    var panelConnectivity: Connectivity {
        let snapshot = service.snapshot
        switch snapshot.connectivity {
        case .online: return .online
        case .offline, .unknown: return .offline
        case .rateLimited: return .rateLimited(retryAfterSeconds: snapshot.rateLimitRemainingSeconds)
        case .busy: return .busy(retryAfterSeconds: snapshot.rateLimitRemainingSeconds)
        case .unauthorized: return .unauthorized
        }
    }
}

/// Wakes the uplink when a scan is durable in the queue, so it goes out at once.
struct UplinkDoorbellFeedback: PressFeedback {
    let uplink: UplinkService

    func pressAccepted(_ press: ShutterPress) {}
    func pressRefused(_ press: ShutterPress, reason: String) {}
    func scanSaved(_ press: ShutterPress) { uplink.wake() }
    func longPress(_ press: ShutterPress) {}
    func frameCaptured(_ press: ShutterPress) {}
    func notice(_ notice: FeedbackNotice) {}
}
