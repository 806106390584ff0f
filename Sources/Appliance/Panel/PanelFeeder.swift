import Controls
import Foundation
import Imaging
import Logging
import Panel
import ServiceLifecycle
import Store
import SwiftWingCore
import Synchronization

/// Keeps the status panel's model up to date from the daemon's parts: counts, the latest book and
/// the latest scans (with their thumbnails) from the store, the idle viewfinder from the camera,
/// the white flash on each press, and full-screen notices (camera missing, disk full).
///
/// Connectivity comes from the uplink (OFFLINE when no backend is configured); a refused key also
/// shows the full-screen "unauthorized" notice.
final class PanelFeeder: Service, PressFeedback, Sendable {
    struct Settings: Sendable {
        /// How often the store is read: 2 times a second.
        var refreshInterval: Duration = .milliseconds(500)
        /// Viewfinder frames per second while idle: 10.
        var viewfinderFramesPerSecond = 10
        /// Idle = no press for this long: 2 s.
        var idleAfter: Duration = .seconds(2)
        /// Long edge of a viewfinder frame handed to the panel: 320 pixels.
        var viewfinderLongEdge = 320
        /// A done scan leaves the strip after 5 s.
        var doneLingers: TimeInterval = 5
        /// Below this many free bytes the disk-full notice shows (0: never).
        var minimumFreeBytes: Int64 = 0
        /// Thumbnails in the strip at most.
        var stripLength = 8
        /// The camera-missing notice shows only after the camera has been unavailable this long
        /// (not while it first opens or briefly reopens): 3 s.
        var cameraGraceTime: Duration = .seconds(3)
    }

    private struct State {
        var lastPress: ErasedClock.Instant?
        var thumbnails: [UUID: PanelPicture] = [:]
        var bookCount = -1
        var refreshNow = false
        /// Since when the camera has been unavailable (the notice waits `cameraGraceTime`).
        var cameraMissingSince: ErasedClock.Instant?
        /// The uplink holds uploads because no API key is installed (not because the backend refused one).
        var apiKeyMissing = false
        /// A notice asked for by the operator (the long press), up until the instant.
        var shown: (notice: PanelNotice, until: ErasedClock.Instant)?
    }

    let panel: StatusPanel
    let database: AppDatabase
    private let spool: SpoolDirectory
    private let stateDirectory: StateDirectory
    private let camera: CameraSupervisor
    private let cameraName: String
    private let settings: Settings
    let logger: Logger
    /// Idle time, notice times and the refresh pace: the daemon's `ContinuousClock`, in tests a clock they advance.
    let clock: ErasedClock
    /// How long a done scan has lingered (its `updatedAt` is a stored date).
    private let wallClock: WallClock
    private let state = Mutex(State())
    private let connectivitySource: @Sendable () -> Connectivity
    /// "Do not remove" while an export to a USB stick runs (``ExportNotices/current()``): over every other notice.
    private let exportHold: @Sendable () -> PanelNotice?
    /// The most recent scan's barcode books (PanelFeeder+Identify).
    let identified = IdentifiedBooks()
    /// The browser pairing code while it is shown (PairingDisplay.swift); nil while the library in a browser is off.
    let pairing: PairingDisplay?

    init(
        panel: StatusPanel, database: AppDatabase, stateDirectory: StateDirectory, camera: CameraSupervisor,
        cameraName: String, settings: Settings, logger: Logger,
        connectivity: @escaping @Sendable () -> Connectivity = { .offline },
        exportHold: @escaping @Sendable () -> PanelNotice? = { nil }, pairing: PairingDisplay? = nil,
        clock: any Clock<Duration> = ContinuousClock(), wallClock: WallClock = .system
    ) {
        self.pairing = pairing
        self.clock = ErasedClock(clock)
        self.wallClock = wallClock
        self.connectivitySource = connectivity
        self.exportHold = exportHold
        self.panel = panel
        self.database = database
        self.stateDirectory = stateDirectory
        self.spool = SpoolDirectory(stateDirectory)
        self.camera = camera
        self.cameraName = cameraName
        self.settings = settings
        self.logger = logger
    }

    var connectivity: Connectivity { connectivitySource() }

    /// Something changed (books landed, a scan moved on): redraw at the next tick, not in 500 ms.
    func refreshSoon() {
        state.withLock { $0.refreshNow = true }
    }

    /// Uploads are held for want of a key: the unauthorized notice says so instead of "refused".
    func noteAPIKeyMissing() {
        state.withLock {
            $0.apiKeyMissing = true
            $0.refreshNow = true
        }
    }

    // MARK: PressFeedback (returns at once: the panel thread draws)

    func pressAccepted(_ press: ShutterPress) {
        let now = clock.now
        state.withLock { $0.lastPress = now }
        identified.forget()
        pairing?.dismiss()
        // The viewfinder freezes on its last frame until the press is over (idleAfter).
        panel.flash()
    }

    func pressRefused(_ press: ShutterPress, reason: String) {
        state.withLock { $0.refreshNow = true }
    }

    func scanSaved(_ press: ShutterPress) {
        state.withLock { $0.refreshNow = true }
    }

    /// Shows `notice` full-screen for `duration` (the long press's address and state), over the
    /// notices that come from the device's state; the next refresh puts it up.
    func show(_ notice: PanelNotice, for duration: Duration) {
        let until = clock.now + duration
        state.withLock {
            $0.shown = (notice, until)
            $0.refreshNow = true
        }
    }

    // MARK: Service

    func run() async throws {
        panel.start()
        logger.info("status panel drawing", metadata: ["output": "\(panel.summary)"])
        var nextRefresh = clock.now
        let frameInterval = Duration.nanoseconds(1_000_000_000 / Int64(max(1, settings.viewfinderFramesPerSecond)))
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            let refreshNow = state.withLock { state in
                defer { state.refreshNow = false }
                return state.refreshNow
            }
            if refreshNow || clock.now >= nextRefresh {
                refresh()
                nextRefresh = clock.now + settings.refreshInterval
            }
            let tickStart = clock.now
            await viewfinderTick()
            let rest = frameInterval - (clock.now - tickStart)
            if rest > .zero { try? await cancelWhenGracefulShutdown { [clock] in try await clock.sleep(for: rest) } }
        }
        panel.stop()
    }

    /// One viewfinder frame while idle; nothing while a press is recent or a notice is up.
    private func viewfinderTick() async {
        let lastPress = state.withLock { $0.lastPress }
        if let lastPress, clock.now - lastPress < settings.idleAfter { return }
        if panel.model.notice != nil { return }
        do {
            // Frames are stamped on the kernel's clock: "after now" is read there.
            let frame = try await camera.capture(after: .now(), timeout: .milliseconds(500))
            let small = try YUV420Scaler().downscaled(frame, maxLongEdge: settings.viewfinderLongEdge)
            panel.update { $0.viewfinder = PanelPicture(small) }
        } catch {
            // The notice (camera missing) comes from refresh(); here the picture just stops.
            panel.update { $0.viewfinder = nil }
        }
    }

    /// Reads the store and the camera state into the model.
    func refresh() {
        do {
            let counts = try database.queue.counts()
            let queued = (counts[.queued] ?? 0) + (counts[.uploading] ?? 0) + (counts[.analyzing] ?? 0)
            let bookCount = try database.library.bookCount()
            let toCheck = try database.spinesToCheckCount()
            let strip = try latestTiles()
            var latestBook: LatestBook?
            let previousCount = state.withLock { $0.bookCount }
            if bookCount != previousCount, bookCount > 0, let book = try database.library.books().last {
                latestBook = Self.latestBook(book)
            }
            state.withLock { $0.bookCount = bookCount }
            let notice = currentNotice()
            let connectivity = self.connectivity
            panel.update { model in
                model.connectivity = connectivity
                model.queued = queued
                model.library = bookCount
                model.toCheck = toCheck
                if bookCount != previousCount { model.latestBook = latestBook }
                model.strip = strip
                model.notice = notice
            }
        } catch {
            logger.warning("panel: the store could not be read", metadata: ["error": "\(error)"])
        }
    }

    private func currentNotice() -> PanelNotice? {
        if let exporting = exportHold() { return exporting }
        // Over the long press's notice: a 5 s hold gives the long press at 2 s, then the code.
        if let pairing = pairing?.notice() { return pairing }
        let now = clock.now
        let shown = state.withLock { state -> PanelNotice? in
            guard let shown = state.shown else { return nil }
            if now < shown.until { return shown.notice }
            state.shown = nil
            return nil
        }
        if let shown { return shown }
        if let identified = identifiedNotice() { return identified }
        if settings.minimumFreeBytes > 0, let free = try? FreeSpace.availableBytes(at: stateDirectory.path),
            free < settings.minimumFreeBytes
        {
            return .diskFull(freeMegabytes: Int(free / 1_048_576))
        }
        let unavailable = Self.cameraIsUnavailable(camera.statusDescription)
        let since: ErasedClock.Instant? = state.withLock { state in
            if !unavailable {
                state.cameraMissingSince = nil
            } else if state.cameraMissingSince == nil {
                state.cameraMissingSince = now
            }
            return state.cameraMissingSince
        }
        if let since, now - since >= settings.cameraGraceTime { return .cameraMissing(device: cameraName) }
        if connectivity == .unauthorized {
            return state.withLock { $0.apiKeyMissing } ? Self.apiKeyMissingNotice : .backendUnauthorized
        }
        return nil
    }

    static let apiKeyMissingNotice = PanelNotice.message(
        title: "NO API KEY", detail: "Scans stay on the device. Install the key and restart (see swiftwing status).")

    /// Whether `CameraSupervisor.statusDescription` says no picture is coming: "DEVICE: not available
    /// (why)" while no camera streams, except while it first opens ("the camera is starting"), or
    /// "DEVICE: reopening …" after an unplug or a stall. (The supervisor has no typed state for this
    /// yet; this is the one place that reads its text.)
    static func cameraIsUnavailable(_ status: String) -> Bool {
        if status.contains(": not available") { return !status.contains("(the camera is starting)") }
        return status.contains(": reopening")
    }

    /// The latest scans, newest first, with thumbnails (decoded once per scan and kept).
    private func latestTiles() throws -> [ScanTile] {
        let now = wallClock.now
        let scans = try database.queue.scans().reversed().filter { scan in
            scan.state != .done || now.timeIntervalSince(scan.updatedAt) < settings.doneLingers
        }.prefix(settings.stripLength)
        var cache = state.withLock { $0.thumbnails }
        var tiles: [ScanTile] = []
        for scan in scans {
            if cache[scan.id] == nil, let file = scan.thumbnailPath {
                if let frame = try? JPEGDecoder().decode(contentsOf: spool.path(of: file)) {
                    cache[scan.id] = PanelPicture(frame)
                }
            }
            tiles.append(
                ScanTile(id: scan.idempotencyKey, state: Self.tileState(scan.state), thumbnail: cache[scan.id]))
        }
        let visible = Set(scans.map(\.id))
        cache = cache.filter { visible.contains($0.key) }
        state.withLock { $0.thumbnails = cache }
        return tiles
    }

    static func tileState(_ state: ScanState) -> ScanTileState {
        switch state {
        case .queued: .waiting
        case .uploading: .uploading
        case .analyzing: .analyzing
        case .done: .done
        case .failed, .needsAttention: .failed
        }
    }
}

extension ApplianceDaemon {
    /// The status panel for `configuration.panel`, or nil to run headless (said once, with why).
    func makePanel(clock: any Clock<Duration> = ContinuousClock(), logger: Logger) -> StatusPanel? {
        var panelLogger = Logger(label: "panel")
        var logger = logger
        switch configuration.panel {
        case .none: break
        case .png(let path), .framebuffer(let path):
            panelLogger[metadataKey: "device"] = "\(path)"
            logger[metadataKey: "device"] = "\(path)"
        }
        switch configuration.panel {
        case .none:
            return nil
        case .png(let path):
            do {
                return try StatusPanel(sink: PNGSink(path: path), clock: clock, logger: panelLogger)
            } catch {
                logger.error("no status panel: \(error)")
                return nil
            }
        case .framebuffer(let path):
            do {
                return try StatusPanel.open(framebuffer: path, clock: clock, logger: panelLogger)
            } catch .noFramebuffer {
                logger.notice("running headless: \(PanelError.noFramebuffer(device: path))")
                return nil
            } catch {
                logger.error("running headless: \(error)")
                return nil
            }
        }
    }
}
