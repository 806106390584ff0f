import Camera
import Controls
import Foundation
import Identify
import Imaging
import Store
import SwiftWingCore
import SwiftWingTesting
import Synchronization
import Testing

@testable import Appliance

/// The press path identifying its frame on the worker: the fake camera shows a barcode photo from
/// the repository's fixtures (or a blurred shelf), into a real SQLite file and spool.
@Suite struct IdentifyingPipelineTests {
    typealias Rig = ScanPipelineTests.Rig

    final class RecordingDisplay: ScanOutcomeDisplay {
        let shown = Mutex<[String]>([])
        func showIdentified(isbns: [String]) { shown.withLock { $0.append("isbn " + isbns.joined(separator: ",")) } }
        func showPoorFrame(_ quality: ScanQuality) { shown.withLock { $0.append("poor " + quality.verdict.rawValue) } }
        var log: [String] { shown.withLock { $0 } }
    }

    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path
    static let width = 640
    static let height = 480

    /// A barcode picture from the ZXing set laid on a mid-grey frame of the camera's size, and its digits.
    static func barcodeScene() throws -> (frame: YUV420Frame, isbn: String) {
        let path = repository + "/Fixtures/barcodes/ean13-3/01.png"
        let picture = try PictureFile.frame(contentsOf: path)
        let digits = try String(contentsOfFile: path.replacingOccurrences(of: ".png", with: ".txt"), encoding: .utf8)
        let frame = ImagingFixtures.centred(picture, width: width, height: height)
        return (frame, digits.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    static func blurredShelf() throws -> YUV420Frame {
        let shelf = try #require(
            try ImagingFixtures.shelfFrame(width: width, height: height), "the shelf photos are missing")
        return FrameDegradation.blurred(shelf, radius: 6)
    }

    @Test func aFrameWithAnISBNBarcodeIsDoneAtOnceWithItsBookAndNotUploaded() async throws {
        let display = RecordingDisplay()
        let rig = try await Rig(width: Self.width, height: Self.height, display: display)
        let (scene, isbn) = try Self.barcodeScene()
        rig.camera.show(scene)

        let outcome = await rig.pipeline.press(ShutterPress(time: .now(), source: .controlSocket))

        guard case .saved(let record) = outcome else {
            Issue.record("refused: \(outcome)")
            await rig.tearDown()
            return
        }
        #expect(record.state == .done)
        #expect(record.barcodes.map(\.text) == [isbn])
        #expect(record.quality != nil)
        let book = try #require(try rig.database.library.book(isbn13: isbn))
        #expect(book.source == .barcode && book.enrichmentStatus == .pending && book.scanID == record.id)
        #expect(try rig.database.queue.pending().isEmpty, "nothing for the uplink to send")
        #expect(
            !FileManager.default.fileExists(atPath: SpoolDirectory(rig.state).path(of: record.imagePath)),
            "the photo of a done scan is deleted")
        #expect(rig.feedback.log == ["accepted", "saved", "books-landed"], "the success pattern")
        #expect(display.log == ["isbn \(isbn)"])
        await rig.tearDown()
    }

    @Test func aBarcodeScanIsQueuedAsUsualWhenBarcodeScansAreUploaded() async throws {
        let rig = try await Rig(
            width: Self.width, height: Self.height, identify: .init(uploadBarcodeScans: true))
        let (scene, isbn) = try Self.barcodeScene()
        rig.camera.show(scene)

        let outcome = await rig.pipeline.press(ShutterPress(time: .now(), source: .controlSocket))

        guard case .saved(let record) = outcome else {
            Issue.record("refused: \(outcome)")
            await rig.tearDown()
            return
        }
        #expect(record.state == .queued && record.barcodes.map(\.text) == [isbn])
        #expect(try rig.database.queue.pending().map(\.id) == [record.id])
        await rig.tearDown()
    }

    @Test func aBlurredFrameIsKeptForAPersonUntilRetried() async throws {
        let display = RecordingDisplay()
        let rig = try await Rig(width: Self.width, height: Self.height, display: display)
        rig.camera.show(try Self.blurredShelf())

        let outcome = await rig.pipeline.press(ShutterPress(time: .now(), source: .controlSocket))

        guard case .saved(let record) = outcome else {
            Issue.record("refused: \(outcome)")
            await rig.tearDown()
            return
        }
        #expect(record.state == .needsAttention)
        #expect(record.quality?.verdict == .blurry)
        #expect(record.lastError?.contains("blurry — hold still and press again") == true)
        #expect(try rig.database.queue.pending().isEmpty, "a poor frame is not uploaded")
        #expect(
            FileManager.default.fileExists(atPath: SpoolDirectory(rig.state).path(of: record.imagePath)),
            "its photo is kept")
        #expect(rig.feedback.log == ["accepted", "saved", "scan-failed"], "the error pattern")
        #expect(display.log == ["poor blurry"])

        // `swiftwing queue retry ID` (no daemon uplink here: straight to the queue, as the CLI does)
        let retried = try rig.database.queue.retry(record.id)
        #expect(retried.state == .queued && retried.uploadDespiteQuality)
        #expect(try rig.database.queue.pending().map(\.id) == [record.id], "now the uplink sends it")
        await rig.tearDown()
    }

    @Test func aPoorFrameIsQueuedWhenPoorFramesAreUploaded() async throws {
        let rig = try await Rig(width: Self.width, height: Self.height, identify: .init(uploadPoorFrames: true))
        rig.camera.show(try Self.blurredShelf())

        let outcome = await rig.pipeline.press(ShutterPress(time: .now(), source: .controlSocket))

        guard case .saved(let record) = outcome else {
            Issue.record("refused: \(outcome)")
            await rig.tearDown()
            return
        }
        #expect(record.state == .queued && record.quality?.verdict == .blurry)
        #expect(rig.feedback.log == ["accepted", "saved"])
        await rig.tearDown()
    }
}
