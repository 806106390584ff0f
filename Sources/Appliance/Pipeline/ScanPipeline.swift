import Camera
import Controls
import Foundation
import Identify
import Imaging
import Logging
import Store
import SwiftWingCore
import Synchronization

/// The first half of the main job: a press becomes a durable, queued JPEG.
///
/// Order of a press: feedback → a processing slot (or refuse) → free space (or refuse) → the first
/// frame at or after the press → on the worker thread: rotate, scale, encode, thumbnail, spool
/// (tmp → fsync → rename → fsync dir), commit the queue row → reply with the scan id. Nothing here
/// waits for a slot or for space: a press that cannot be served is refused at once, with the reason.
///
/// The worker also identifies the frame (``FrameIdentifier``): a frame with ISBN barcodes puts its
/// books in the library at once, offline, in the transaction that makes the scan `done`; a blurred
/// or dark frame is kept for a person (`needs_attention`) instead of being uploaded.
public final class ScanPipeline: Sendable {
    public enum Outcome: Sendable, Equatable {
        case saved(ScanRecord)
        case refused(reason: String)
    }

    public struct Settings: Sendable {
        public var maxLongEdge: Int
        public var jpegQuality: Int
        public var thumbnailLongEdge: Int
        public var rotation: FrameRotation
        public var captureTimeout: Duration
        public var minimumFreeBytes: Int64
        public var identify = IdentifySettings()
    }

    /// What the worker does with what it reads in a frame.
    public struct IdentifySettings: Sendable {
        public var thresholds = QualityThresholds()
        /// Queue blurred and dark frames for upload anyway (otherwise they wait for a person).
        public var uploadPoorFrames = false
        /// Queue scans whose books were read from barcodes for upload as well.
        public var uploadBarcodeScans = false

        public init(
            thresholds: QualityThresholds = QualityThresholds(), uploadPoorFrames: Bool = false,
            uploadBarcodeScans: Bool = false
        ) {
            self.thresholds = thresholds
            self.uploadPoorFrames = uploadPoorFrames
            self.uploadBarcodeScans = uploadBarcodeScans
        }
    }

    public struct Counters: Sendable, Equatable {
        public var accepted = 0
        public var refused = 0
        public var lastRefusal: String?
    }

    private let camera: CameraSupervisor
    private let worker: BoundedWorker
    private let database: AppDatabase
    private let spool: SpoolDirectory
    private let stateDirectory: StateDirectory
    private let settings: Settings
    private let feedback: any PressFeedback
    private let display: (any ScanOutcomeDisplay)?
    private let logger: Logger
    private let tally = Mutex(Counters())

    public init(
        camera: CameraSupervisor, worker: BoundedWorker, database: AppDatabase, stateDirectory: StateDirectory,
        settings: Settings, feedback: any PressFeedback, display: (any ScanOutcomeDisplay)? = nil, logger: Logger
    ) {
        self.camera = camera
        self.worker = worker
        self.database = database
        self.stateDirectory = stateDirectory
        self.spool = SpoolDirectory(stateDirectory)
        self.settings = settings
        self.feedback = feedback
        self.display = display
        self.logger = logger
    }

    public var counters: Counters { tally.withLock { $0 } }

    /// - Parameter feedbackGiven: the input thread already gave the click (GPIO and key presses get
    ///   it there, before any hop to another thread); otherwise it is given here, first.
    public func press(_ press: ShutterPress, feedbackGiven: Bool = false) async -> Outcome {
        if !feedbackGiven { feedback.pressAccepted(press) }
        // The scan's id from the press on, so its journal entries (SCAN_ID=) start with the press.
        let id = UUID()
        var logger = self.logger
        logger[metadataKey: "scan_id"] = "\(id.uuidString.lowercased())"
        logger.info("shutter pressed", metadata: ["source": "\(press.source.rawValue)"])
        guard let slot = worker.reserve() else {
            return refuse(
                press, logger: logger,
                "processing queue is full (\(worker.capacity) presses in flight): wait for the click "
                    + "before pressing again, or raise imaging.queue_depth")
        }
        defer {
            slot.release()
            // The last press in flight is done: a burst's freed blocks go back to the kernel.
            if worker.busy == 0 { AllocatorTuning.returnFreeMemory() }
        }
        if let problem = freeSpaceProblem() { return refuse(press, logger: logger, problem) }

        // The frame lives in the hand-off, not in a variable of this function, so it goes back to
        // the pool as soon as the worker has encoded and read it, before the spool's and the
        // database's fsyncs: presses in quick succession then hold fewer frames at once.
        let handOff: FrameHandOff
        let frameAt: MonotonicInstant
        do {
            let frame = try await camera.capture(after: press.time, timeout: settings.captureTimeout)
            feedback.frameCaptured(press)
            (handOff, frameAt) = (FrameHandOff(frame), frame.timestamp)
        } catch let error as CameraSupervisorError {
            return refuse(press, logger: logger, error.description)
        } catch {
            return refuse(press, logger: logger, "no frame: \(error)")
        }

        let settings = self.settings
        let spool = self.spool
        let database = self.database
        let pressedWallAt = Date()
        do {
            let (record, isbns) = try await slot.run { () throws -> (ScanRecord, [String]) in
                let processed: Processed<SpooledImage>
                do {
                    processed = try Self.process(handOff.take(), settings: settings) { jpeg throws(StoreError) in
                        try spool.write(jpeg: jpeg, for: id)
                    }
                } catch {
                    // The photo may be written already; without a scan it must not linger.
                    try? spool.remove(scan: id)
                    throw error
                }
                let image = processed.saved
                let thumbnail = try? spool.write(thumbnail: processed.thumbnail, for: id)
                let identification = processed.identification
                let newScan = NewScan(
                    id: id, pressedAt: press.time, pressedWallAt: pressedWallAt, frameAt: frameAt,
                    image: image, width: processed.width, height: processed.height, thumbnail: thumbnail,
                    quality: identification.map(Self.scanQuality),
                    barcodes: identification.map(Self.scanBarcodes) ?? [])
                let isbns = identification?.isbns ?? []
                let record: ScanRecord
                do {
                    record = try Self.store(newScan, isbns: isbns, settings: settings.identify, in: database)
                } catch {
                    // Not committed: the press is refused, so its files must not linger as a scan.
                    try? spool.remove(scan: id)
                    throw error
                }
                // Done at once from its barcodes: the photo goes, as for any done scan.
                if record.state == .done { try? spool.remove(scan: id) }
                return (record, isbns)
            }
            tally.withLock { $0.accepted += 1 }
            feedback.scanSaved(press)
            announce(record, isbns: isbns)
            logger.info(
                "scan saved",
                metadata: [
                    "source": "\(press.source.rawValue)",
                    "press_to_frame_ms": "\(Self.milliseconds(frameAt.nanoseconds(since: press.time)))",
                    "press_to_durable_ms":
                        "\(Self.milliseconds(MonotonicInstant.now().nanoseconds(since: press.time)))",
                    "image_bytes": "\(record.imageSize)", "size": "\(record.width)x\(record.height)",
                    "state": "\(record.state.rawValue)",
                    "quality": "\(record.quality?.verdict.rawValue ?? "unmeasured")",
                    "isbns": "\(isbns.joined(separator: ","))",
                ])
            logOutcome(record, isbns: isbns, logger: logger)
            return .saved(record)
        } catch let error as StoreError {
            return refuse(press, logger: logger, error.description)
        } catch {
            return refuse(press, logger: logger, "the frame could not be processed: \(error)")
        }
    }

    /// Carries a captured frame to the worker, which takes it out: the one reference left.
    final class FrameHandOff: Sendable {
        private let frame: Mutex<YUV420Frame?>

        init(_ frame: YUV420Frame) { self.frame = Mutex(frame) }

        /// The frame; once only.
        func take() -> YUV420Frame {
            guard let frame = frame.withLock({ $0.take() }) else { preconditionFailure("the frame was taken twice") }
            return frame
        }
    }

    struct Processed<Saved> {
        /// What `saveJPEG` made of the JPEG (the spooled file).
        var saved: Saved
        var thumbnail: [UInt8]
        var width: Int
        var height: Int
        /// `nil` when the frame could not be identified (the scan then goes the usual way).
        var identification: Identification?
    }

    /// Runs on the worker thread: pure CPU work on the frame. The frame is identified after
    /// scaling (at most `maxLongEdge`, 1920 px by default: the size the barcode figures are for), with the
    /// frame as captured behind it for codes the scaling shrank too far.
    /// A V4L2 camera delivers frames already shrunk to that size (scaled out of its driver
    /// buffer), so the scale here is a no-op for them; rotating after the area scale gives the
    /// same picture as before it.
    /// - Parameter saveJPEG: writes the JPEG (to the spool), given the encoder's own buffer: a copy
    ///   of it would be another megabyte held through identification.
    static func process<Saved, Failure: Error>(
        _ frame: YUV420Frame, settings: Settings, saveJPEG: (UnsafeRawBufferPointer) throws(Failure) -> Saved
    ) throws -> Processed<Saved> {
        var upright = frame
        if settings.rotation != .none {
            upright = try rotated(frame, by: settings.rotation)
            upright.detail = frame.detail?.turned(clockwiseQuarterTurns: settings.rotation.degrees / 90)
        }
        let scaler = YUV420Scaler()
        let scaled = try scaler.downscaled(upright, maxLongEdge: settings.maxLongEdge)
        let encoder = try JPEGEncoder(quality: settings.jpegQuality)
        let saved = try encoder.withJPEG(of: scaled) { jpeg in Result { () throws(Failure) in try saveJPEG(jpeg) } }
            .get()
        let thumbnail = try Thumbnail(
            of: scaled, longEdge: settings.thumbnailLongEdge, encoder: encoder, scaler: scaler)
        // A ZBar scanner per frame: the identifier is not Sendable and costs microseconds to make. Regions located on
        // the scaled frame that give no code are read again as captured: from the detail a V4L2 camera that scales
        // its frames keeps beside them, or from the frame before the scaling just done.
        let original = upright.width > scaled.width || upright.height > scaled.height ? upright : nil
        let identification = try? FrameIdentifier(thresholds: settings.identify.thresholds)
            .identify(frame: scaled, fullResolution: original)
        return Processed(
            saved: saved, thumbnail: thumbnail.jpeg, width: scaled.width, height: scaled.height,
            identification: identification)
    }

    /// Commits the scan as what its frame makes it: `done` with its books (ISBN barcodes), kept
    /// for a person (a poor frame), or `queued`.
    static func store(
        _ newScan: NewScan, isbns: [String], settings: IdentifySettings, in database: AppDatabase
    ) throws(StoreError) -> ScanRecord {
        if !isbns.isEmpty, !settings.uploadBarcodeScans {
            return try database.completeIdentifiedScan(newScan, isbns: isbns).scan
        }
        if isbns.isEmpty, !settings.uploadPoorFrames, let quality = newScan.quality, let advice = quality.advice {
            return try database.queue.enqueue(
                newScan, attention: "the frame is \(advice) (retry the scan to upload it anyway)")
        }
        return try database.queue.enqueue(newScan)
    }

    static func scanQuality(_ identification: Identification) -> ScanQuality {
        let verdict = ScanQuality.Verdict(rawValue: identification.verdict.rawValue) ?? .good
        let measured = identification.quality
        return ScanQuality(
            verdict: verdict, sharpness: max(0, measured.sharpness),
            exposure: .init(
                mean: measured.exposure.mean, shadows: measured.exposure.shadows,
                highlights: measured.exposure.highlights))
    }

    static func scanBarcodes(_ identification: Identification) -> [ScanBarcode] {
        identification.barcodes.map { ScanBarcode(format: $0.format.rawValue, text: $0.text) }
    }

    /// The sound and the panel notice for what the frame turned out to be.
    private func announce(_ record: ScanRecord, isbns: [String]) {
        if !isbns.isEmpty {
            feedback.notice(.booksLanded)
            display?.showIdentified(isbns: isbns)
        } else if record.state == .needsAttention, let quality = record.quality, quality.isPoor {
            feedback.notice(.scanFailed)
            display?.showPoorFrame(quality)
        }
    }

    private func freeSpaceProblem() -> String? {
        guard settings.minimumFreeBytes > 0, let free = try? FreeSpace.availableBytes(at: stateDirectory.path) else {
            return nil
        }
        guard free < settings.minimumFreeBytes else { return nil }
        return "state directory \(stateDirectory.path) is nearly full (\(free / 1_048_576) MB free, "
            + "daemon.min_free_megabytes is \(settings.minimumFreeBytes / 1_048_576)): free space on the card; queued scans are kept"
    }

    /// Where the saved scan goes next, one line per book read from its barcodes (`ISBN=`).
    private func logOutcome(_ record: ScanRecord, isbns: [String], logger: Logger) {
        switch record.state {
        case .done:
            for isbn in isbns {
                logger.info("book added to the library from its barcode", metadata: ["isbn": "\(isbn)"])
            }
            logger.info("scan done on the device: its books are in the library, nothing to upload")
        case .queued:
            logger.info("scan queued for the backend")
        case .needsAttention:
            logger.notice("scan kept for a person to check", metadata: ["reason": "\(record.lastError ?? "")"])
        default:
            break
        }
    }

    private func refuse(_ press: ShutterPress, logger: Logger, _ reason: String) -> Outcome {
        tally.withLock {
            $0.refused += 1
            $0.lastRefusal = reason
        }
        feedback.pressRefused(press, reason: reason)
        logger.warning("press refused", metadata: ["reason": "\(reason)", "source": "\(press.source.rawValue)"])
        return .refused(reason: reason)
    }

    private static func milliseconds(_ nanoseconds: Int64) -> String {
        String(format: "%.1f", Double(nanoseconds) / 1e6)
    }
}
