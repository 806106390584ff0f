import Imaging
import Logging
import SwiftWingCore
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Settings of the synthetic camera (`--camera synthetic`).
public struct SyntheticCameraConfiguration: Hashable, Sendable {
    /// The shelf photos SwiftWing ships (two 4624x3468 photos): the first folder of
    /// `ShippedFiles.candidates("shelves")` that exists, else the first candidate (so the error names it).
    public static var shippedPhotosFolder: String {
        ShippedFiles.folder("shelves") ?? ShippedFiles.candidates("shelves")[0]
    }

    /// A folder of `.jpg` / `.jpeg` files, replayed in name order.
    public var folder: String
    public var width: Int
    public var height: Int
    public var framesPerSecond: Int
    /// How long each photo stays "in front of the camera" before the next one.
    public var secondsPerPhoto: Double
    /// Captured frames that may be in processing at once (pooled copies).
    public var frameBufferPoolSize: Int

    public init(
        folder: String = SyntheticCameraConfiguration.shippedPhotosFolder, width: Int = 1920, height: Int = 1080,
        framesPerSecond: Int = 15, secondsPerPhoto: Double = 2, frameBufferPoolSize: Int = 4
    ) {
        self.folder = folder
        self.width = width
        self.height = height
        self.framesPerSecond = framesPerSecond
        self.secondsPerPhoto = secondsPerPhoto
        self.frameBufferPoolSize = frameBufferPoolSize
    }

    /// The synthetic camera that stands in for `camera`: same size and rate.
    public init(
        standingInFor camera: CameraConfiguration, folder: String = SyntheticCameraConfiguration.shippedPhotosFolder
    ) {
        self.init(
            folder: folder, width: camera.width, height: camera.height, framesPerSecond: camera.framesPerSecond,
            frameBufferPoolSize: camera.frameBufferPoolSize)
    }

    public func validate() throws(CameraError) {
        if !(16...8192).contains(width) || !(16...8192).contains(height) {
            throw .invalidConfiguration(
                setting: "width/height", value: "\(width)x\(height)", advice: "each side must be 16 to 8192 pixels")
        }
        if !(1...120).contains(framesPerSecond) {
            throw .invalidConfiguration(
                setting: "fps", value: String(framesPerSecond), advice: "use 1 to 120 frames per second")
        }
        if !(secondsPerPhoto > 0) {
            throw .invalidConfiguration(
                setting: "seconds_per_photo", value: "\(secondsPerPhoto)", advice: "use a positive number of seconds")
        }
        if !(1...64).contains(frameBufferPoolSize) {
            throw .invalidConfiguration(
                setting: "frame_buffers", value: String(frameBufferPoolSize), advice: "use 1 to 64 pooled frames")
        }
    }
}

/// A camera that replays a folder of JPEG photos as YUV420 frames, with the real camera's timing:
/// frames at the configured rate on a thread of its own, stamped with `CLOCK_MONOTONIC` when
/// "taken", and ``capture(after:timeout:)`` returns the first one taken at or after the press.
///
/// Each photo is decoded (shrunk inside libjpeg where possible), fitted to the frame size (center
/// crop, area scale) and kept as a quality-95 JPEG of that size, once, in ``start()``; a frame a
/// press asks for is decoded from it into a pooled buffer (a few milliseconds at 1920x1080). Keeping
/// the fitted photos compressed (≈0.4 MB each instead of 3 MiB of YUV) keeps the daemon's resident
/// set to what a V4L2 camera costs: the frames a press uses, not a copy of every scene.
public final class SyntheticCamera: FrameSource {
    public let configuration: SyntheticCameraConfiguration
    private let runner: CameraLoopRunner
    private let logger: Logger
    private var hub: CaptureHub { runner.hub }

    public init(
        configuration: SyntheticCameraConfiguration = SyntheticCameraConfiguration(),
        logger: Logger = Logger(label: "swiftwing.camera.synthetic")
    ) throws(CameraError) {
        try configuration.validate()
        self.configuration = configuration
        self.runner = CameraLoopRunner(device: "synthetic:\(configuration.folder)")
        self.logger = logger
    }

    /// Lists, decodes and fits the photos (on the camera's thread), then starts the frame clock.
    /// Throws ``CameraError/noPhotos(folder:reason:)`` or ``CameraError/photoUnreadable(path:reason:)``.
    public func start() async throws(CameraError) {
        try await runner.start(threadName: "sw-synthetic") {
            SyntheticLoop(configuration: configuration, hub: hub, logger: logger)
        }
    }

    public func stop() async {
        await runner.stop()
    }

    public func capture(after t0: MonotonicInstant, timeout: Duration) async throws(CameraError) -> YUV420Frame {
        try await hub.capture(after: t0, timeout: timeout)
    }

    public var status: CameraStatus { hub.status }

    public func statusUpdates() -> AsyncStream<CameraStatus> { hub.statusUpdates() }

    /// The `.jpg` / `.jpeg` files (any case) directly in `folder`, sorted by name.
    public static func photos(in folder: String) throws(CameraError) -> [String] {
        guard let directory = opendir(folder) else {
            throw .noPhotos(folder: folder, reason: "cannot open it: \(String(cString: strerror(errno)))")
        }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { bytes in
                String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
            }
            let lowercased = name.lowercased()
            if !name.hasPrefix("."), lowercased.hasSuffix(".jpg") || lowercased.hasSuffix(".jpeg") {
                names.append(name)
            }
        }
        guard !names.isEmpty else { throw .noPhotos(folder: folder, reason: "no .jpg or .jpeg files") }
        let base = folder.hasSuffix("/") ? folder : folder + "/"
        return names.sorted().map { base + $0 }
    }
}

/// The synthetic camera's thread: prepares the photos, then ticks at the frame rate.
private final class SyntheticLoop: CameraLoop, @unchecked Sendable {
    let configuration: SyntheticCameraConfiguration
    let hub: CaptureHub
    let logger: Logger
    var onStarted: ((Result<Void, CameraError>) -> Void)?

    init(configuration: SyntheticCameraConfiguration, hub: CaptureHub, logger: Logger) {
        self.configuration = configuration
        self.hub = hub
        self.logger = logger
    }

    func run() {
        var firstFrame = FirstFrameNotice()
        firstFrame.opening()
        let photos: PreparedPhotos
        do {
            photos = try prepare()
        } catch {
            onStarted?(.failure(error))
            hub.threadExited(finalError: .notRunning(device: hub.device))
            return
        }
        let layout = photos.layout
        let format = NegotiatedFormat(
            layout: layout, requested: FrameSize(width: configuration.width, height: configuration.height),
            cameraFormat: "JPEG", plan: .synthetic(folder: configuration.folder),
            framesPerSecond: Double(configuration.framesPerSecond), bufferCount: photos.jpegs.count,
            softwareRotationDegrees: 0)
        let pool = BufferPool(bufferSize: layout.byteCount, maximumBuffers: configuration.frameBufferPoolSize)
        hub.markRunning(format: format)
        onStarted?(.success(()))
        onStarted = nil
        logger.info("synthetic camera streaming", metadata: ["format": "\(format)"])

        let decoder = JPEGDecoder()
        let period = 1_000_000_000 / Int64(configuration.framesPerSecond)
        let framesPerPhoto = max(
            1, Int((configuration.secondsPerPhoto * Double(configuration.framesPerSecond)).rounded()))
        let start = MonotonicInstant.now()
        var frameNumber: Int64 = 0
        while !hub.isStopRequested {
            hub.loopTurned()
            // The first frame comes at once, like a driver's first buffer, not one period late.
            hub.sleep(until: start.advanced(byNanoseconds: frameNumber * period))
            frameNumber += 1
            if hub.isStopRequested { break }
            let timestamp = MonotonicInstant.now()
            hub.count { $0.framesReceived += 1 }
            firstFrame.frame(at: timestamp, sequence: UInt32(truncatingIfNeeded: frameNumber), logger: logger)
            guard hub.wantsFrame(at: timestamp) else { continue }
            let index = Int(frameNumber / Int64(framesPerPhoto)) % photos.jpegs.count
            let decoded: YUV420Frame
            do {
                decoded = try decoder.decode(photos.jpegs[index], source: photos.paths[index], pool: pool)
            } catch .noFreeBuffer {
                hub.fail(satisfiedBy: timestamp, with: .noFreeBuffer(device: hub.device, poolSize: pool.maximumBuffers))
                continue
            } catch {
                hub.fail(
                    satisfiedBy: timestamp, with: .photoUnreadable(path: photos.paths[index], reason: error.description)
                )
                continue
            }
            hub.deliver(
                YUV420Frame(
                    layout: decoded.layout, buffer: decoded.buffer, timestamp: timestamp,
                    sequence: UInt32(truncatingIfNeeded: frameNumber)))
        }
        hub.threadExited(finalError: .notRunning(device: hub.device))
    }

    /// The fitted photos, compressed, and the layout they decode to (libjpeg may pad strides).
    struct PreparedPhotos {
        var paths: [String]
        var jpegs: [[UInt8]]
        var layout: YUV420Layout
    }

    /// Decodes, fits and re-compresses every photo once; all must decode to the same layout.
    private func prepare() throws(CameraError) -> PreparedPhotos {
        let paths = try SyntheticCamera.photos(in: configuration.folder)
        let decoder = JPEGDecoder()
        let scaler = YUV420Scaler()
        var jpegs: [[UInt8]] = []
        var layouts: [YUV420Layout] = []
        for path in paths {
            do {
                let decoded = try decoder.decode(
                    contentsOf: path, minimumWidth: configuration.width, minimumHeight: configuration.height)
                let fitted = try scaler.resized(decoded, width: configuration.width, height: configuration.height)
                let jpeg = try JPEGEncoder(quality: SyntheticLoop.fittedQuality).encode(fitted)
                jpegs.append(jpeg)
                layouts.append(try decoder.decode(jpeg, source: path).layout)
            } catch {
                throw .photoUnreadable(path: path, reason: error.description)
            }
        }
        // Frames must share one layout to share one pool.
        let layout = layouts[0]
        for (index, other) in layouts.enumerated() where other != layout {
            throw .photoUnreadable(path: paths[index], reason: "fitted to \(other), unlike \(layout)")
        }
        let kilobytes = jpegs.reduce(0) { $0 + $1.count } / 1024
        logger.info(
            "synthetic camera prepared \(jpegs.count) photos (\(kilobytes) KiB) from \(configuration.folder) at \(layout)"
        )
        return PreparedPhotos(paths: paths, jpegs: jpegs, layout: layout)
    }

    /// High enough that the picture is the fitted photo to within JPEG's rounding (a press reads
    /// barcodes and judges sharpness on it), low enough to keep each photo near 0.4 MB.
    static let fittedQuality = 95
}
