import Imaging
import Logging
import SwiftWingCore
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A V4L2 camera streaming YUV420 on a dedicated thread.
///
/// The thread owns the device: it polls the V4L2 descriptor together with an eventfd (stop and new
/// captures wake it), dequeues each frame, takes it out of the driver buffer into a pooled buffer
/// only when a capture waits for a frame that new — shrunk to
/// ``CameraConfiguration/deliveredLongEdge`` when that is set, else copied — and re-queues the
/// driver buffer at once. When the camera is unplugged, errors or stalls, pending captures fail
/// with ``CameraError/cameraUnavailable(device:reason:)`` and the device is reopened with backoff
/// (0.5 s doubling to 10 s).
public final class V4L2Camera: FrameSource {
    public let configuration: CameraConfiguration
    private let runner: CameraLoopRunner
    private let logger: Logger
    private var hub: CaptureHub { runner.hub }

    /// Cuts from the driver's buffer what a frame's consumers want at the resolution captured, given the frame the
    /// camera shrank from it (``CameraConfiguration/deliveredLongEdge``): the daemon keeps its barcode-like regions.
    /// Runs on the camera thread, only for frames a capture asked for.
    public typealias DetailCapture =
        @Sendable (_ shrunk: YUV420Frame, _ captured: UnsafeRawBufferPointer, _ layout: YUV420Layout) -> LumaDetail?

    private let detailCapture: DetailCapture?

    /// Validates `configuration` (throws ``CameraError/invalidConfiguration(setting:value:advice:)``);
    /// nothing is opened until ``start()``.
    public init(
        configuration: CameraConfiguration, detailCapture: DetailCapture? = nil,
        logger: Logger = Logger(label: "swiftwing.camera")
    ) throws(CameraError) {
        try configuration.validate()
        self.configuration = configuration
        self.detailCapture = detailCapture
        self.runner = CameraLoopRunner(device: configuration.device)
        var logger = logger
        logger[metadataKey: "device"] = .string(configuration.device)
        self.logger = logger
    }

    /// Opens and configures the device and starts streaming on the camera thread. Throws why the
    /// first open failed (no such device, not a capture device, no usable format, …); later
    /// failures are handled by reopening.
    public func start() async throws(CameraError) {
        try await runner.start(threadName: "sw-camera") {
            CaptureLoop(configuration: configuration, detailCapture: detailCapture, hub: hub, logger: logger)
        }
    }

    /// Wakes the camera thread, which stops streaming, unmaps the buffers, closes the device and
    /// exits; returns once it has. Pending captures fail with ``CameraError/notRunning(device:)``.
    public func stop() async {
        await runner.stop()
    }

    public func capture(after t0: MonotonicInstant, timeout: Duration) async throws(CameraError) -> YUV420Frame {
        try await hub.capture(after: t0, timeout: timeout)
    }

    public var status: CameraStatus { hub.status }

    public func statusUpdates() -> AsyncStream<CameraStatus> { hub.statusUpdates() }
}

/// The camera thread's state and loop. Created by `start()`, then touched only by the thread.
private final class CaptureLoop: CameraLoop, @unchecked Sendable {
    let configuration: CameraConfiguration
    let hub: CaptureHub
    let logger: Logger
    var onStarted: ((Result<Void, CameraError>) -> Void)?

    /// An open, streaming device with its format and the pool frames are taken into: full-size
    /// copies, or, with `scaler` (only when the frame is larger than the limit), frames shrunk to
    /// ``CameraConfiguration/deliveredLongEdge``.
    struct Session {
        let device: V4L2Device
        let format: NegotiatedFormat
        let pool: BufferPool
        let scaler: YUV420Scaler?
    }

    private var session: Session?
    private var backoff = Backoff()
    private var retryAt = MonotonicInstant.now()
    private var lastFrame = MonotonicInstant.now()
    private var awaitingFirstFrame = true
    private var firstFrame = FirstFrameNotice()
    /// Messages already logged: a repeated device complaint is logged once, not per frame or retry.
    private var logged: Set<String> = []

    let detailCapture: V4L2Camera.DetailCapture?

    init(configuration: CameraConfiguration, detailCapture: V4L2Camera.DetailCapture?, hub: CaptureHub, logger: Logger)
    {
        self.configuration = configuration
        self.detailCapture = detailCapture
        self.hub = hub
        self.logger = logger
    }

    private var device: String { configuration.device }

    func run() {
        do {
            session = try openSession()
        } catch {
            onStarted?(.failure(error))
            hub.threadExited(finalError: .notRunning(device: device))
            return
        }
        hub.markRunning(format: session?.format)
        onStarted?(.success(()))
        onStarted = nil
        lastFrame = .now()

        while !hub.isStopRequested {
            hub.loopTurned()
            if session == nil {
                reopen()
            } else {
                stream()
            }
        }
        session?.device.close()
        session = nil
        logger.info("camera stopped", metadata: ["frames": "\(hub.status.framesReceived)"])
        hub.threadExited(finalError: .notRunning(device: device))
    }

    // MARK: streaming

    /// One poll round: wait for a frame, a wake-up, a capture deadline or the stall limit.
    private func stream() {
        guard let session else { return }
        let device = session.device.descriptor
        var wakeAt = lastFrame.adding(configuration.stallTimeout)
        if let deadline = hub.nextDeadline, deadline < wakeAt { wakeAt = deadline }
        let ready: [Int32: Int16]
        do {
            ready = try waitReadable([device, hub.wakeEvent.descriptor], until: wakeAt)
        } catch {
            lose(reason: "poll failed: \(error.reason)")
            return
        }
        if (ready[hub.wakeEvent.descriptor] ?? 0) & Int16(POLLIN) != 0 { hub.drainWakeups() }
        hub.expireRequests()
        let events = ready[device] ?? 0
        if events & Int16(POLLIN) != 0 {
            guard dequeueAll(session) else { return }
        } else if events & Int16(POLLERR | POLLHUP | POLLNVAL) != 0 {
            lose(reason: "the device reported an error (poll revents 0x\(String(events, radix: 16))); unplugged?")
            return
        }
        let silence = MonotonicInstant.now().nanoseconds(since: lastFrame)
        if silence >= configuration.stallTimeout.wholeNanoseconds {
            lose(reason: "no frame for \(configuration.stallTimeout) (stalled)")
        }
    }

    /// Dequeues every ready buffer; `false` when the device was lost meanwhile.
    ///
    /// Only a buffer that `poll` says is ready is dequeued: a DQBUF that ends in EAGAIN makes
    /// libv4l2 print "error dequeuing buf" to stderr (the journal), once per frame otherwise.
    private func dequeueAll(_ session: Session) -> Bool {
        for attempt in 0..<max(session.format.bufferCount, 1) {
            if attempt > 0 {
                guard isReadable(session.device.descriptor) else { return true }
            }
            let buffer: V4L2Device.DequeuedBuffer?
            do {
                buffer = try session.device.dequeue()
            } catch {
                lose(reason: "VIDIOC_DQBUF failed: \(error.reason)")
                return false
            }
            guard let buffer else { return true }
            handle(buffer, session)
            do {
                try session.device.queue(buffer.index)
            } catch {
                lose(reason: "VIDIOC_QBUF failed: \(error.reason)")
                return false
            }
        }
        return true
    }

    /// Grabs one frame if a capture wants it; never blocks. The caller re-queues the buffer.
    private func handle(_ buffer: V4L2Device.DequeuedBuffer, _ session: Session) {
        let layout = session.format.layout
        if buffer.hasError || buffer.bytesUsed < layout.byteCount {
            hub.count { $0.framesDropped += 1 }
            let why =
                buffer.hasError ? "V4L2_BUF_FLAG_ERROR" : "truncated (\(buffer.bytesUsed) of \(layout.byteCount) bytes)"
            logOnce(.warning, "dropping broken frames from the camera: \(why)")
            return
        }
        let timestamp: MonotonicInstant
        if buffer.hasMonotonicTimestamp {
            timestamp = buffer.timestamp
        } else {
            timestamp = .now()
            logOnce(.notice, "the driver does not stamp frames with CLOCK_MONOTONIC; using the dequeue time instead")
        }
        lastFrame = .now()
        if awaitingFirstFrame {
            awaitingFirstFrame = false
            backoff.reset()
            firstFrame.frame(at: timestamp, sequence: buffer.sequence, logger: logger)
        }
        hub.count { $0.framesReceived += 1 }
        guard hub.wantsFrame(at: timestamp) else { return }
        let noBuffer = CameraError.noFreeBuffer(device: device, poolSize: session.pool.maximumBuffers)
        let source = UnsafeRawBufferPointer(rebasing: buffer.bytes[0..<layout.byteCount])
        if let scaler = session.scaler, let longEdge = configuration.deliveredLongEdge {
            // The press scales the frame anyway: doing it here, out of the driver buffer, reads the
            // 12 MP frame once instead of copying it and reading the copy again.
            do {
                var shrunk = try scaler.downscaled(
                    source, layout: layout, timestamp: timestamp, sequence: buffer.sequence, maxLongEdge: longEdge)
                shrunk.detail = detailCapture?(shrunk, source, layout)
                hub.deliver(shrunk)
            } catch {
                // The pool is sized for the shrunk layout and the driver buffer checked above, so
                // the one error left is an empty pool.
                hub.fail(satisfiedBy: timestamp, with: noBuffer)
            }
            return
        }
        guard let pixels = session.pool.acquire() else {
            hub.fail(satisfiedBy: timestamp, with: noBuffer)
            return
        }
        pixels.bytes.copyMemory(from: source)
        hub.deliver(YUV420Frame(layout: layout, buffer: pixels, timestamp: timestamp, sequence: buffer.sequence))
    }

    // MARK: losing and reopening

    /// The device is gone or useless: close it, fail the waiting captures, schedule a reopen.
    private func lose(reason: String) {
        logOnce(.warning, "camera lost, reopening: \(reason)")
        session?.device.close()
        session = nil
        scheduleReopen(reason: reason)
    }

    private func scheduleReopen(reason: String) {
        let delay = backoff.next()
        retryAt = MonotonicInstant.now().adding(delay)
        // Refuse new captures first, then fail the pending ones, so none is left waiting.
        hub.updateStatus { $0.state = .reopening(reason: reason, attempt: backoff.attempts, retryIn: delay) }
        hub.failAll(with: .cameraUnavailable(device: device, reason: reason))
    }

    private func reopen() {
        hub.sleep(until: retryAt)
        guard !hub.isStopRequested else { return }
        do {
            let reopened = try openSession()
            session = reopened
            lastFrame = .now()
            awaitingFirstFrame = true
            hub.updateStatus { status in
                status.state = .streaming
                status.format = reopened.format
                status.reopens += 1
            }
            logger.notice("camera reopened", metadata: ["format": "\(reopened.format)"])
            logged.removeAll()  // a new failure after recovery is worth a new log line
        } catch {
            logOnce(.warning, "cannot reopen the camera yet: \(error)")
            scheduleReopen(reason: error.description)
        }
    }

    // MARK: opening

    private func openSession() throws(CameraError) -> Session {
        firstFrame.opening()
        let access = configuration.access.resolved(preload: getenv("LD_PRELOAD").map { String(cString: $0) })
        let (device, capabilities) = try V4L2Device.open(path: configuration.device, access: access)
        logOnce(
            .info,
            "opened \(configuration.device)\(resolvedPath()): \(capabilities.card) (driver \(capabilities.driver), "
                + "\(capabilities.busInfo)) via \(access.rawValue)")

        applyControls(device)

        let offered = try device.formats()
        let plan = try FormatPlan.yuv420(offered: offered, device: configuration.device)
        let requested = FrameSize(width: configuration.width, height: configuration.height)
        let pix = try device.setFormat(.yuv420, size: requested)
        guard FourCC(rawValue: pix.pixelformat) == .yuv420, pix.width > 0, pix.height > 0 else {
            throw .noUsableFormat(device: configuration.device, offered: offered)
        }
        let width = Int(pix.width)
        let height = Int(pix.height)
        let lumaStride = max(Int(pix.bytesperline), width)
        let layout = YUV420Layout(
            width: width, height: height, lumaStride: lumaStride,
            chromaStride: max((lumaStride + 1) / 2, (width + 1) / 2))
        if Int(pix.sizeimage) < layout.byteCount {
            logOnce(
                .warning, "the driver's image size \(pix.sizeimage) is below the \(layout.byteCount) bytes of \(layout)"
            )
        }
        let cameraFormat = access == .libv4l2 ? (device.cameraFormat() ?? .yuv420) : .yuv420
        let framesPerSecond = device.setFrameRate(configuration.framesPerSecond)
        if framesPerSecond == nil {
            logOnce(.notice, "the driver does not let the frame rate be set; it streams at its own rate")
        }
        let bufferCount = try device.mapBuffers(
            count: configuration.bufferCount, minimum: CameraConfiguration.minimumBuffers)
        try device.streamOn()

        let rotation = ControlPlan(
            controls: CameraControls(), rotation: configuration.rotation,
            available: device.queryControl(.rotate).map { [.rotate: $0] } ?? [:])
        let format = NegotiatedFormat(
            layout: layout, requested: requested, cameraFormat: cameraFormat, plan: plan,
            framesPerSecond: framesPerSecond, bufferCount: bufferCount,
            softwareRotationDegrees: rotation.softwareRotationDegrees)
        if format.size != requested {
            logOnce(.notice, "the camera adjusted \(requested) to \(format.size)")
        }
        if cameraFormat != .yuv420 {
            logOnce(
                .notice,
                "libv4l2 converts \(cameraFormat) to YU12 on the CPU; a camera mode with native YU12 costs less")
        }
        logger.info("streaming", metadata: ["format": "\(format)"])
        var delivered = layout
        if let longEdge = configuration.deliveredLongEdge {
            let size = YUV420Scaler.downscaledSize(width: width, height: height, maxLongEdge: longEdge)
            delivered = YUV420Layout(width: size.width, height: size.height)
        }
        let pool = BufferPool(bufferSize: delivered.byteCount, maximumBuffers: configuration.frameBufferPoolSize)
        // A frame that already fits is copied with one memcpy, as without a limit.
        let shrinks = delivered.width != width || delivered.height != height
        return Session(device: device, format: format, pool: pool, scaler: shrinks ? YUV420Scaler(pool: pool) : nil)
    }

    /// Sets the configured controls that exist, clamped to their ranges; never fails the open.
    private func applyControls(_ device: V4L2Device) {
        var available: [CameraControl: ControlRange] = [:]
        for control in CameraControl.allCases {
            if let range = device.queryControl(control) { available[control] = range }
        }
        let plan = ControlPlan(controls: configuration.controls, rotation: configuration.rotation, available: available)
        for note in plan.notes {
            logOnce(.warning, note.description)
        }
        for setting in plan.settings {
            do {
                try device.setControl(setting.control, to: setting.value)
            } catch {
                logOnce(.warning, "could not set \(setting.control.rawValue) to \(setting.value): \(error.reason)")
            }
        }
    }

    /// " → /dev/videoN" when the configured path is a link (such as /dev/v4l/by-id/…).
    private func resolvedPath() -> String {
        guard let real = realpath(configuration.device, nil) else { return "" }
        defer { free(real) }
        let resolved = String(cString: real)
        return resolved == configuration.device ? "" : " → \(resolved)"
    }

    private func logOnce(_ level: Logger.Level, _ message: String) {
        guard logged.insert(message).inserted else { return }
        logger.log(level: level, "\(message)")
    }
}
