import Camera
import Controls
import Foundation
import Imaging
import Logging
import Store
import Synchronization
import SwiftWingCore

/// The first half of the main job: a press becomes a durable, queued JPEG.
///
/// Order of a press: feedback → a processing slot (or refuse) → free space (or refuse) → the first
/// frame at or after the press → on the worker thread: rotate, scale, encode, thumbnail, spool
/// (tmp → fsync → rename → fsync dir), commit the queue row → reply with the scan id. Nothing here
/// waits for a slot or for space: a press that cannot be served is refused at once, with the reason.
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
    private let logger: Logger
    private let tally = Mutex(Counters())

    public init(
        camera: CameraSupervisor, worker: BoundedWorker, database: AppDatabase, stateDirectory: StateDirectory,
        settings: Settings, feedback: any PressFeedback, logger: Logger
    ) {
        self.camera = camera
        self.worker = worker
        self.database = database
        self.stateDirectory = stateDirectory
        self.spool = SpoolDirectory(stateDirectory)
        self.settings = settings
        self.feedback = feedback
        self.logger = logger
    }

    public var counters: Counters { tally.withLock { $0 } }

    /// - Parameter feedbackGiven: the input thread already gave the click (GPIO and key presses get
    ///   it there, before any hop to another thread); otherwise it is given here, first.
    public func press(_ press: ShutterPress, feedbackGiven: Bool = false) async -> Outcome {
        if !feedbackGiven { feedback.pressAccepted(press) }
        guard let slot = worker.reserve() else {
            return refuse(press, "processing queue is full (\(worker.capacity) presses in flight): wait for the click "
                + "before pressing again, or raise imaging.queue_depth")
        }
        defer { slot.release() }
        if let problem = freeSpaceProblem() { return refuse(press, problem) }

        let frame: YUV420Frame
        do {
            frame = try await camera.capture(after: press.time, timeout: settings.captureTimeout)
            feedback.frameCaptured(press)
        } catch let error as CameraSupervisorError {
            return refuse(press, error.description)
        } catch {
            return refuse(press, "no frame: \(error)")
        }

        let id = UUID()
        let settings = self.settings
        let spool = self.spool
        let queue = database.queue
        let pressedWallAt = Date()
        do {
            let record = try await slot.run { () throws -> ScanRecord in
                let processed = try Self.process(frame, settings: settings)
                let image = try spool.write(jpeg: processed.jpeg, for: id)
                let thumbnail = try? spool.write(thumbnail: processed.thumbnail, for: id)
                do {
                    return try queue.enqueue(
                        NewScan(
                            id: id, pressedAt: press.time, pressedWallAt: pressedWallAt, frameAt: frame.timestamp,
                            image: image, width: processed.width, height: processed.height, thumbnail: thumbnail))
                } catch {
                    // Not committed: the press is refused, so its files must not linger as a scan.
                    try? spool.remove(scan: id)
                    throw error
                }
            }
            tally.withLock { $0.accepted += 1 }
            feedback.scanSaved(press)
            logger.info(
                "scan saved",
                metadata: [
                    "scan_id": "\(record.idempotencyKey)", "source": "\(press.source.rawValue)",
                    "press_to_frame_ms": "\(Self.milliseconds(frame.timestamp.nanoseconds(since: press.time)))",
                    "press_to_durable_ms": "\(Self.milliseconds(MonotonicInstant.now().nanoseconds(since: press.time)))",
                    "image_bytes": "\(record.imageSize)", "size": "\(record.width)x\(record.height)",
                ])
            return .saved(record)
        } catch let error as StoreError {
            return refuse(press, error.description)
        } catch {
            return refuse(press, "the frame could not be processed: \(error)")
        }
    }

    struct Processed: Sendable {
        var jpeg: [UInt8]
        var thumbnail: [UInt8]
        var width: Int
        var height: Int
    }

    /// Runs on the worker thread: pure CPU work on the frame.
    static func process(_ frame: YUV420Frame, settings: Settings) throws -> Processed {
        let upright = settings.rotation == .none ? frame : try rotated(frame, by: settings.rotation)
        let scaler = YUV420Scaler()
        let scaled = try scaler.downscaled(upright, maxLongEdge: settings.maxLongEdge)
        let encoder = try JPEGEncoder(quality: settings.jpegQuality)
        let jpeg = try encoder.encode(scaled)
        let thumbnail = try Thumbnail(of: scaled, longEdge: settings.thumbnailLongEdge, encoder: encoder, scaler: scaler)
        return Processed(jpeg: jpeg, thumbnail: thumbnail.jpeg, width: scaled.width, height: scaled.height)
    }

    private func freeSpaceProblem() -> String? {
        guard settings.minimumFreeBytes > 0, let free = try? FreeSpace.availableBytes(at: stateDirectory.path) else { return nil }
        guard free < settings.minimumFreeBytes else { return nil }
        return "state directory \(stateDirectory.path) is nearly full (\(free / 1_048_576) MB free, "
            + "daemon.min_free_megabytes is \(settings.minimumFreeBytes / 1_048_576)): free space on the card; queued scans are kept"
    }

    private func refuse(_ press: ShutterPress, _ reason: String) -> Outcome {
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
