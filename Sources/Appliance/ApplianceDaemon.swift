import Camera
import Controls
import Foundation
import Identify
import Imaging
import Logging
import Panel
import ServiceLifecycle
import Store
import SwiftWingCore
import Uplink

/// `swiftwing run`: opens the state directory, the camera and the control socket and serves
/// presses until SIGTERM (or SIGINT), then stops every part cleanly.
public struct ApplianceDaemon: Sendable {
    public let configuration: ApplianceConfiguration
    /// The file `configuration` was read from (or would be): a start that fails is held until it changes.
    public let configurationPath: String

    public init(configuration: ApplianceConfiguration, configurationPath: String? = nil) {
        self.configuration = configuration
        self.configurationPath = configurationPath ?? ApplianceConfiguration.defaultPath
    }

    /// glibc's and the kernel's memory settings for a long-running process (`AllocatorTuning`), for
    /// the program to apply first, before the Swift runtime starts threads; `run()` applies them too.
    @discardableResult
    public static func tuneMemory() -> Bool { AllocatorTuning.apply() }

    public func run() async throws {
        let allocatorTuned = AllocatorTuning.apply()
        Self.bootstrapLogging(level: configuration.logLevel)
        let logger = Logger(label: "appliance")
        if !allocatorTuned {
            logger.notice("a memory setting was refused (mallopt or PR_SET_THP_DISABLE); running on, using more memory")
        }
        let notifier = SystemdNotifier()
        let ready = ReadyFlag()
        do {
            try await serve(logger: logger, notifier: notifier, ready: ready)
        } catch  where !ready.isReady && notifier.isActive {
            // Under systemd, a setting refused at start (the camera's, the uplink's, the control socket's path) is
            // said on the panel and held until the configuration changes, rather than a restart every few seconds.
            let problem = (error as? ApplianceError)?.description ?? String(describing: error)
            _ = await Self.holdFailedStart(
                title: "CANNOT START", problem: problem, configurationPath: configurationPath,
                panel: makePanel(logger: logger), notifier: notifier, logger: logger)
            throw error
        }
    }

    private func serve(logger: Logger, notifier: SystemdNotifier, ready: ReadyFlag) async throws {

        // The state directory first: one daemon per directory, then the database and the spool. A step
        // that fails (a card full, read-only or unmounted, a database another program locks) is tried
        // again with a growing delay while the panel and the journal say what is wrong; a damaged
        // database is moved aside and rebuilt from the spool inside the step, so the kiosk starts.
        let state = StateDirectory(path: configuration.stateDirectory)
        let notices = StartupNotices(
            makePanel: { [self] in makePanel(logger: logger) }, notifier: notifier, logger: Logger(label: "startup"))
        let retry = StartupRetry(clock: ContinuousClock(), watchdogInterval: notifier.watchdogPingInterval) {
            notices.handle($0)
        }
        let opened: OpenedState
        if notifier.isActive {
            opened = try await retry.run { try Self.openState(state) }
        } else {
            // Run by hand: the person at the terminal reads the error now.
            do {
                opened = try Self.openState(state)
            } catch {
                throw ApplianceError(error.description)
            }
        }
        notices.close()
        let lock = opened.lock
        let database = opened.started.database
        let recovery = opened.started.recovery
        let deviceID = opened.identity.id
        if let recovery {
            logger.error("\(recovery)", metadata: ["old_database": "\(recovery.movedTo)"])
        }
        if opened.started.reconciliation.isClean {
            logger.info("spool and queue agree")
        } else {
            logger.warning("reconciled spool and queue: \(opened.started.reconciliation)")
        }
        if let replaced = opened.identity.replacedFile {
            let message =
                "the device id file held no UUID (\(opened.identity.problem ?? "unreadable")): it was moved to "
                + "\(replaced) and this device now has a new id, \(deviceID); the backend sees a new device "
                + "unless the old file is restored (stop the daemon, move it back to \(state.deviceIDPath))"
            logger.error("\(message)")
        }
        logger.info(
            "state directory ready", metadata: ["state_directory": "\(state.path)", "device_id": "\(deviceID)"])

        // A setting the camera cannot take stops the daemon now; a missing device does not (it may come).
        _ = try makeCamera()
        let camera = CameraSupervisor(device: configuration.camera.device.description, logger: cameraLogger) {
            try makeCamera()
        }
        let worker = BoundedWorker(name: "sw-processing", capacity: configuration.imaging.queueDepth)
        let controls = ShutterControls(configuration: configuration, logger: Logger(label: "shutter"))
        let startedAt = Date()
        let cameraName = configuration.camera.device.description
        // The backend link (none without backend.url: scans then wait in the queue).
        let uplinkEvents = UplinkEventRouter()
        let uplinkHeartbeat = Heartbeat(part: "the uplink")
        let uplink = try DaemonUplink.make(
            configuration: configuration, database: database, state: state, deviceID: deviceID, router: uplinkEvents,
            heartbeat: uplinkHeartbeat, logger: logger)
        // What `swiftwing export --device` says; its "do not remove" holds the panel while an export runs.
        let exportNotices = ExportNotices(logger: Logger(label: "export"))
        // The browser pairing code, shown after `swiftwing web pair` or a 5 s hold of the shutter.
        let pairing =
            configuration.web.enabled
            ? PairingDisplay(configuration: configuration, logger: Logger(label: "panel")) : nil
        // The status panel (none, a framebuffer or a PNG file); without one the daemon runs headless.
        let panelFeeder = makePanel(logger: logger).map { panel in
            PanelFeeder(
                panel: panel, database: database, stateDirectory: state, camera: camera, cameraName: cameraName,
                settings: PanelFeeder.Settings(minimumFreeBytes: Int64(configuration.minimumFreeMegabytes) * 1_048_576),
                logger: Logger(label: "panel"), connectivity: { uplink?.panelConnectivity ?? .offline },
                exportHold: { exportNotices.current() }, pairing: pairing)
        }
        // A rebuilt database is news for the person at the kiosk: say so, and where the old file is.
        if let recovery, let panelFeeder {
            let lines = recovery.panelLines
            panelFeeder.show(
                .message(title: lines.title.uppercased(), detail: lines.detail), for: Self.recoveryNoticeTime)
        }
        // Books known only by their ISBN are completed from a public catalogue, with or without a backend;
        // books landing wake the lookups, and a title found shows on the panel.
        let enrichment = try DaemonEnrichment.make(
            configuration: configuration, database: database, sharing: uplink?.engine, logger: logger,
            events: { panelFeeder?.bookEnriched($0.book) })
        // The buzzer first: its line is set before the panel records anything.
        let feedback = FeedbackFanOut(
            [controls.feedback] + (panelFeeder.map { [$0 as any PressFeedback] } ?? [])
                + (uplink.map { [UplinkDoorbellFeedback(uplink: $0.service) as any PressFeedback] } ?? [])
                + (enrichment.map { [$0.doorbell as any PressFeedback] } ?? []))
        uplinkEvents.connect(feedback: feedback, panel: panelFeeder)
        exportNotices.connect(show: { panelFeeder?.show($0, for: $1) }, feedback: feedback)
        let pipeline = ScanPipeline(
            camera: camera, worker: worker, database: database, stateDirectory: state,
            settings: try pipelineSettings(), feedback: feedback, display: panelFeeder,
            logger: Logger(label: "pipeline"))

        let daemonStatus = { @Sendable () -> DaemonStatus in
            let counters = pipeline.counters
            return DaemonStatus(
                pid: getpid(), version: ApplianceInfo.version, startedAt: startedAt, camera: cameraName,
                cameraState: camera.statusDescription, pressesAccepted: counters.accepted,
                pressesRefused: counters.refused, processing: worker.busy, lastError: counters.lastRefusal,
                shutterInputs: controls.runningInputs, shutterLatency: controls.feedback.latency.summary,
                uplink: uplink?.status, cameraAvailability: camera.availability)
        }
        let testHooks = TestHooks(worker: worker, logger: Logger(label: "test-hooks"))
        let control: ControlSocketServer
        do {
            control = try ControlSocketServer(path: configuration.controlSocket, logger: Logger(label: "control")) {
                request in
                switch request.command {
                case .shutter:
                    switch await pipeline.press(ShutterPress(time: .now(), source: .controlSocket)) {
                    case .saved(let record): return ControlReply(ok: true, scanId: record.idempotencyKey)
                    case .refused(let reason): return .refused(reason)
                    }
                case .status:
                    return ControlReply(ok: true, status: daemonStatus())
                case .testWedgeWorker:
                    return testHooks.handle(request)
                case .retry, .discard:
                    return await QueueCommands(
                        database: database, spool: SpoolDirectory(state), uplink: uplink?.service
                    )
                    .handle(request)
                case .exportStarted, .exportFinished, .exportFailed:
                    return exportNotices.handle(request)
                case .showPairing:
                    guard let panelFeeder else {
                        return .refused("this device runs without a status panel ([panel] output): no code is shown")
                    }
                    return panelFeeder.showWaitingPairing()
                }
            }
        } catch {
            throw ApplianceError(error.description)
        }

        // Inputs that cannot start (a busy or missing line, no permission) are logged with the fix; the
        // daemon runs on with the others and the control socket.
        // The long press retries failed scans (through the uplink, which also lifts an "unauthorized" hold).
        let queueCommands = QueueCommands(database: database, spool: SpoolDirectory(state), uplink: uplink?.service)
        let longPress = LongPressAction(
            retryFailedScans: {
                do {
                    return try await queueCommands.retryAll().count
                } catch {
                    logger.warning("long press: failed scans were not retried", metadata: ["error": "\(error)"])
                    return 0
                }
            }, queueCounts: { try database.queue.counts() },
            show: { notice, duration in panelFeeder?.show(notice, for: duration) }, logger: Logger(label: "shutter"))
        // Held 5 s (with [web] enabled and a panel to show the code on): a browser pairing code.
        let extendedHold: (@Sendable (ShutterPress) async -> Void)? =
            panelFeeder.flatMap { feeder in
                feeder.pairing == nil ? nil : { @Sendable press in feeder.pairFromHold(press) }
            }
        let router = ShutterEventRouter(
            feedback: feedback, press: { press in _ = await pipeline.press(press, feedbackGiven: true) },
            longPress: longPress, extendedHold: extendedHold)
        controls.start(router.handle)
        // A shutter input that did not start (a GPIO chip not there yet) is said on the panel and tried again.
        let showShutterProblem = { @Sendable (title: String, detail: String) in
            _ = panelFeeder?.show(.message(title: title, detail: detail), for: Self.shutterNoticeTime)
        }
        if let missing = controls.failedInputs.first {
            showShutterProblem(
                "SHUTTER NOT FOUND", "\(missing) did not start: see `journalctl -u swiftwing`. Trying again by itself.")
        }

        // The watchdog is pinged only while the capture loop, the processing worker and the uplink
        // scheduler beat (a missing camera is excused: it is reported, and a restart would not help).
        var livenessParts = [
            LivenessMonitor.Part(name: "the capture loop") { camera.liveness },
            LivenessMonitor.Part(name: worker.heartbeat.part) { worker.heartbeat.liveness },
        ]
        if uplink != nil {
            livenessParts.append(LivenessMonitor.Part(name: uplinkHeartbeat.part) { uplinkHeartbeat.liveness })
        }
        let livenessMonitor = LivenessMonitor(parts: livenessParts, staleAfter: WatchdogService.staleAfter)
        let statusLine = StatusLineService(
            notifier: notifier, stateDirectory: state.path, database: database, daemonStatus: daemonStatus)

        // Graceful shutdown runs through these in reverse order: the uplink and the panel first, the
        // inputs and the processing worker last, so presses already past their capture are saved.
        var services: [any Service] = [
            ProcessingDrainService(controls: controls, worker: worker),
            camera,
            ControlSocketService(server: control),
            WatchdogService(notifier: notifier, monitor: livenessMonitor, logger: Logger(label: "watchdog")),
            statusLine,
        ]
        if let panelFeeder { services.append(panelFeeder) }
        if let uplink { services.append(uplink.service) }
        if let enrichment { services.append(enrichment.service) }
        // Last in the list, so it stops first: no input is started after the inputs are stopped.
        services.append(ShutterRetryService(controls: controls, show: showShutterProblem))
        var lifecycle = ServiceGroupConfiguration(
            services: services, gracefulShutdownSignals: [.sigterm, .sigint], cancellationSignals: [],
            logger: Logger(label: "lifecycle"))
        // Within systemd's TimeoutStopSec=15: a part still busy after 10 s is cancelled, and one that
        // ignores cancellation for 3 s more ends the process rather than wait for SIGKILL.
        lifecycle.maximumGracefulShutdownDuration = Self.gracefulShutdownLimit
        lifecycle.maximumCancellationDuration = .seconds(3)
        let group = ServiceGroup(configuration: lifecycle)
        ready.set()
        notifier.ready(status: statusLine.currentLine())
        logger.info(
            "swiftwing \(ApplianceInfo.version) running",
            metadata: ["camera": "\(cameraName)", "control_socket": "\(configuration.controlSocket)"])
        try await group.run()
        notifier.stopping()
        uplink?.engine.shutdown()
        enrichment?.shutdown()
        lock.release()
        logger.info("stopped")
    }

    /// How long the panel shows that the database was rebuilt (`swiftwing status` says it until the
    /// old file is deleted).
    static let recoveryNoticeTime = Duration.seconds(120)

    /// How long the panel says a shutter input did not start, at start and at each try that fails again.
    static let shutterNoticeTime = Duration.seconds(15)

    /// How long graceful shutdown may take before the parts still running are cancelled.
    static let gracefulShutdownLimit = Duration.seconds(10)

    private func pipelineSettings() throws -> ScanPipeline.Settings {
        let rotation: FrameRotation
        do {
            rotation = try FrameRotation(degrees: configuration.camera.rotation)
        } catch {
            throw ApplianceError("camera.rotation: \(error)")
        }
        return ScanPipeline.Settings(
            maxLongEdge: configuration.imaging.maxLongEdge, jpegQuality: configuration.imaging.jpegQuality,
            thumbnailLongEdge: configuration.imaging.thumbnailLongEdge, rotation: rotation,
            captureTimeout: .milliseconds(Int(configuration.camera.captureTimeoutSeconds * 1000)),
            minimumFreeBytes: Int64(configuration.minimumFreeMegabytes) * 1_048_576,
            identify: .init(
                thresholds: configuration.imaging.qualityThresholds,
                uploadPoorFrames: configuration.imaging.uploadPoorFrames,
                uploadBarcodeScans: configuration.identify.uploadBarcodeScans))
    }

    /// The camera's log lines carry the device (`DEVICE=` in the journal).
    private var cameraLogger: Logger {
        var logger = Logger(label: "camera")
        logger[metadataKey: "device"] = "\(configuration.camera.device)"
        return logger
    }

    func makeCamera() throws -> any FrameSource {
        let settings = configuration.camera
        switch settings.device {
        case .synthetic(let folder):
            let synthetic = SyntheticCameraConfiguration(
                folder: folder ?? SyntheticCameraConfiguration.shippedPhotosFolder,
                width: settings.width, height: settings.height,
                framesPerSecond: settings.framesPerSecond, frameBufferPoolSize: configuration.imaging.queueDepth)
            do {
                return try SyntheticCamera(configuration: synthetic, logger: cameraLogger)
            } catch {
                throw ApplianceError(error.description)
            }
        case .v4l2(let path):
            let cameraConfiguration = CameraConfiguration(
                device: path, width: settings.width, height: settings.height, framesPerSecond: settings.framesPerSecond,
                bufferCount: settings.bufferCount,
                controls: CameraControls(
                    focusAbsolute: settings.focusAbsolute.map { Int32($0) }, focusAuto: settings.autofocus,
                    zoomAbsolute: settings.zoomAbsolute.map { Int32($0) },
                    exposureAbsolute: settings.exposureAbsolute.map { Int32($0) }),
                // Rotation is done in software on the processing worker, the same for every camera.
                rotation: .none,
                stallTimeout: .milliseconds(Int(settings.stallTimeoutSeconds * 1000)),
                frameBufferPoolSize: configuration.imaging.queueDepth,
                // Shrunk on the camera thread straight out of the driver's buffer; the worker's
                // scale is then a no-op (docs/architecture.md, capture).
                deliveredLongEdge: configuration.imaging.maxLongEdge)
            do {
                // Barcode-like regions are kept at the sensor's resolution beside the shrunk frame, so codes the
                // shrink makes too small to read are read from them (BarcodeReader.detail).
                return try V4L2Camera(
                    configuration: cameraConfiguration,
                    detailCapture: { _, captured, layout in
                        BarcodeReader.detail(
                            captured: captured, width: layout.width, height: layout.height, stride: layout.lumaStride)
                    },
                    logger: cameraLogger)
            } catch {
                throw ApplianceError(error.description)
            }
        }
    }
}

/// Runs the control socket's accept loop on a thread of its own until graceful shutdown.
struct ControlSocketService: Service {
    let server: ControlSocketServer

    func run() async throws {
        _ = DeviceThread(name: "sw-control") { server.serve() }
        try? await gracefulShutdown()
        server.stop()
    }
}

/// Starts again the shutter inputs that did not start, until each has or graceful shutdown.
struct ShutterRetryService: Service {
    let controls: ShutterControls
    let show: @Sendable (String, String) -> Void

    func run() async throws {
        await cancelWhenGracefulShutdown {
            await controls.retryFailedInputs(clock: ContinuousClock(), show: show)
        }
        try? await gracefulShutdown()
    }
}

/// At graceful shutdown, the last part to stop: the shutter inputs stop, then the processing worker
/// finishes the presses already past their capture (they are saved before the process exits).
struct ProcessingDrainService: Service {
    let controls: ShutterControls
    let worker: BoundedWorker

    func run() async throws {
        try? await gracefulShutdown()
        controls.stop()
        worker.stop()
        await worker.waitUntilFinished()
    }
}
