import Camera
import Controls
import Foundation
import Imaging
import Logging
import Store
import SwiftWingCore
import SwiftWingTesting
import Synchronization
import Testing

@testable import Appliance

/// The press path with the fake camera (the same FrameSource protocol as the real ones), a real
/// SQLite file and a real spool in a temp directory.
@Suite struct ScanPipelineTests {
    final class RecordingFeedback: PressFeedback {
        let events = Mutex<[String]>([])
        func pressAccepted(_ press: ShutterPress) { events.withLock { $0.append("accepted") } }
        func pressRefused(_ press: ShutterPress, reason: String) { events.withLock { $0.append("refused") } }
        func scanSaved(_ press: ShutterPress) { events.withLock { $0.append("saved") } }
        func notice(_ notice: FeedbackNotice) { events.withLock { $0.append(notice.rawValue) } }
        var log: [String] { events.withLock { $0 } }
    }

    struct Rig {
        let state: StateDirectory
        let database: AppDatabase
        let camera: FakeFrameSource
        let supervisor: CameraSupervisor
        let worker: BoundedWorker
        let feedback = RecordingFeedback()
        let pipeline: ScanPipeline
        let supervision: Task<Void, Never>

        init(
            queueDepth: Int = 2, cameraMode: FakeFrameSource.Mode = .immediate, failingCamera: String? = nil,
            width: Int = 2592, height: Int = 1944, identify: ScanPipeline.IdentifySettings = .init(),
            display: (any ScanOutcomeDisplay)? = nil
        ) async throws {
            state = StateDirectory(path: NSTemporaryDirectory() + "swiftwing-pipeline-\(UUID().uuidString.prefix(8))")
            try state.create()
            database = try AppDatabase.open(state)
            let camera = FakeFrameSource(width: width, height: height, mode: cameraMode)
            self.camera = camera
            supervisor = CameraSupervisor(device: "fake", logger: Logger(label: "test")) {
                if let failingCamera { throw CameraError.deviceNotFound(device: failingCamera) }
                return camera
            }
            worker = BoundedWorker(name: "test-pipeline", capacity: queueDepth)
            pipeline = ScanPipeline(
                camera: supervisor, worker: worker, database: database, stateDirectory: state,
                settings: .init(
                    maxLongEdge: 1920, jpegQuality: 85, thumbnailLongEdge: 160, rotation: .none,
                    captureTimeout: .seconds(2), minimumFreeBytes: 0, identify: identify),
                feedback: feedback, display: display, logger: Logger(label: "test"))
            let supervisor = self.supervisor
            supervision = Task { try? await supervisor.run() }
        }

        func tearDown() async {
            supervision.cancel()
            _ = await supervision.value
            worker.stop()
            try? FileManager.default.removeItem(atPath: state.path)
        }
    }

    @Test func aPressBecomesADurableScaledJPEGAndAQueuedRow() async throws {
        // A uniform frame is blurry by the quality check: queued only because poor frames are let through.
        let rig = try await Rig(identify: .init(uploadPoorFrames: true))
        let press = ShutterPress(time: .now(), source: .controlSocket)
        let outcome = await rig.pipeline.press(press)
        guard case .saved(let record) = outcome else {
            Issue.record("refused: \(outcome)")
            await rig.tearDown()
            return
        }
        #expect(record.state == .queued)
        #expect(record.quality?.verdict == .blurry, "its quality is recorded all the same")
        #expect(record.width == 1920 && record.height == 1440, "2592x1944 scaled to a 1920 long edge")
        #expect(record.frameAt.map { $0 >= press.time } == true, "the frame must not be older than the press")
        let path = SpoolDirectory(rig.state).path(of: record.imagePath)
        let info = try JPEGInfo(contentsOf: path)
        #expect(info.width == 1920 && info.height == 1440)
        #expect(try rig.database.queue.scan(id: record.id)?.imageSize == record.imageSize)
        #expect(rig.feedback.log == ["accepted", "saved"])
        await rig.tearDown()
    }

    @Test func aPressBeyondTheQueueDepthIsRefusedAtOnceNotDelayed() async throws {
        // Given one slot, held by a press waiting for its frame
        let rig = try await Rig(queueDepth: 1, cameraMode: .manual)
        while rig.supervisor.availability != "streaming" {
            try await Task.sleep(for: .milliseconds(5))  // polls the supervisor's own task: nothing to await
        }
        let first = Task { await rig.pipeline.press(ShutterPress(time: .now(), source: .controlSocket)) }
        while rig.worker.busy == 0 { try await Task.sleep(for: .milliseconds(5)) }  // polls the worker's thread

        // When a second press comes
        let outcome = await rig.pipeline.press(ShutterPress(time: .now(), source: .controlSocket))

        // Then it is refused while the first still waits (no frame was emitted yet)
        guard case .refused(let reason) = outcome else {
            Issue.record("not refused: \(outcome)")
            await rig.tearDown()
            return
        }
        #expect(reason.contains("processing queue is full"))
        #expect(rig.camera.pendingCaptures == 1)
        _ = rig.camera.emit()
        guard case .saved = await first.value else {
            Issue.record("the first press was lost")
            await rig.tearDown()
            return
        }
        #expect(rig.feedback.log.filter { $0 == "accepted" }.count == 2, "both presses got the click first")
        await rig.tearDown()
    }

    @Test func aCameraThatCannotStartRefusesWithItsReason() async throws {
        let rig = try await Rig(failingCamera: "/dev/video7")
        let outcome = await rig.pipeline.press(ShutterPress(time: .now(), source: .controlSocket))
        guard case .refused(let reason) = outcome else {
            Issue.record("not refused")
            await rig.tearDown()
            return
        }
        #expect(reason.contains("/dev/video7"))
        #expect(rig.feedback.log == ["accepted", "refused"])
        #expect(try rig.database.queue.counts()[.queued] == 0)
        await rig.tearDown()
    }

    @Test func theHandOffKeepsNoReferenceToTheFrameOnceTaken() {
        weak var buffer: PixelBuffer?
        let handOff: ScanPipeline.FrameHandOff
        do {
            let frame = YUV420Frame(layout: YUV420Layout(width: 64, height: 48))
            buffer = frame.buffer
            handOff = ScanPipeline.FrameHandOff(frame)
        }
        #expect(buffer != nil, "the hand-off holds the frame until the worker takes it")
        do {
            let taken = handOff.take()
            #expect(taken.width == 64)
        }
        #expect(buffer == nil, "the frame's buffer outlived the worker's use of it")
    }

    @Test func rotationIsAppliedOnTheWorker() throws {
        let frame = YUV420Frame(layout: YUV420Layout(width: 640, height: 480))
        memset(frame.buffer.bytes.baseAddress!, 128, frame.layout.byteCount)
        let processed = try ScanPipeline.process(
            frame,
            settings: .init(
                maxLongEdge: 1920, jpegQuality: 85, thumbnailLongEdge: 160, rotation: .clockwise90,
                captureTimeout: .seconds(1), minimumFreeBytes: 0)
        ) { jpeg in Array(jpeg) }
        #expect(processed.width == 480 && processed.height == 640)
        let info = try JPEGInfo(processed.saved)
        #expect(info.width == 480 && info.height == 640)
    }
}
