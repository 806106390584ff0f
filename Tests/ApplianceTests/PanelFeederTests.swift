import Controls
import Foundation
import Imaging
import Logging
import Panel
import Store
import SwiftWingCore
import SwiftWingTesting
import Synchronization
import Testing

@testable import Appliance

@Suite("Panel feeder")
struct PanelFeederTests {
    final class NullSink: PanelOutputSink {
        let width = 320, height = 240, summary = "null"
        func present(_ image: PanelImage, damage: [PanelRect]) throws(PanelError) {}
    }

    @Test("counts, strip with thumbnails and states, latest book and the camera notice come from the daemon's parts")
    func feedsTheModel() async throws {
        let directory = NSTemporaryDirectory() + "panel-feeder-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let state = StateDirectory(path: directory)
        try state.create()
        let spool = SpoolDirectory(state)
        let database = try AppDatabase.inMemory()
        // Given two queued scans, the newer one with a thumbnail
        let frame = YUV420Frame(layout: YUV420Layout(width: 64, height: 48))
        for i in 0..<frame.buffer.capacity { frame.buffer.bytes[i] = 128 }
        let jpeg = try JPEGEncoder().encode(frame)
        let older = UUID()
        let newer = UUID()
        for id in [older, newer] {
            let image = try spool.write(jpeg: jpeg, for: id)
            let thumbnail = id == newer ? try spool.write(thumbnail: jpeg, for: id) : nil
            _ = try database.queue.enqueue(
                NewScan(
                    id: id, pressedAt: .now(), pressedWallAt: Date(), frameAt: .now(), image: image, width: 64,
                    height: 48, thumbnail: thumbnail))
        }
        _ = try database.queue.markUploading(older)
        // and a camera that cannot start (still in its first attempt: the supervisor is not running)
        let camera = CameraSupervisor(device: "/dev/video9", logger: Logger(label: "test")) {
            throw ApplianceError("no camera")
        }
        let panel = try StatusPanel(sink: NullSink(), logger: Logger(label: "test"))
        var settings = PanelFeeder.Settings()
        settings.cameraGraceTime = .zero
        let feeder = PanelFeeder(
            panel: panel, database: database, stateDirectory: state, camera: camera, cameraName: "/dev/video9",
            settings: settings, logger: Logger(label: "test"))

        // When the feeder reads them
        feeder.refresh()
        var model = panel.model

        // Then the panel shows them, newest first
        #expect(model.connectivity == .offline)
        #expect(model.queued == 2)
        #expect(model.library == 0)
        #expect(model.strip.map(\.id) == [newer.uuidString.lowercased(), older.uuidString.lowercased()])
        #expect(model.strip.map(\.state) == [.waiting, .uploading])
        #expect(model.strip[0].thumbnail?.frame.width == 64)
        #expect(model.strip[1].thumbnail == nil)
        // A camera still opening for the first time is not "missing"
        #expect(model.notice == nil)
        #expect(PanelFeeder.cameraIsUnavailable("/dev/video9: not available (no such device)"))
        #expect(PanelFeeder.cameraIsUnavailable("/dev/video9: reopening (attempt 2 in 1 s) after: EIO"))
        #expect(!PanelFeeder.cameraIsUnavailable("/dev/video9: not available (the camera is starting)"))
        #expect(!PanelFeeder.cameraIsUnavailable("/dev/video9: streaming, 1920x1080 YU12"))

        // When a book lands
        _ = try database.library.upsert(
            BookRecord(
                isbn13: "9780465050659", title: "The Design of Everyday Things", authors: ["Don Norman"],
                confidence: 0.7))
        feeder.refresh()
        model = panel.model
        #expect(model.library == 1)
        #expect(model.latestBook?.title == "The Design of Everyday Things")
        #expect(model.latestBook?.needsReview == true)

        // When the camera's first attempt has failed, the notice shows (grace time zero here)
        let run = Task { try await camera.run() }
        for _ in 0..<100 where !camera.statusDescription.contains("no camera") {
            try await Task.sleep(for: .milliseconds(10))  // polls the supervisor's own task: nothing to await
        }
        feeder.refresh()
        #expect(panel.model.notice == .cameraMissing(device: "/dev/video9"))
        run.cancel()
        _ = await run.result
    }

    /// A feeder over an empty database and a camera that never opens; the caller removes `directory`.
    private func idleFeeder(
        connectivity: @escaping @Sendable () -> Connectivity = { .offline },
        exportHold: @escaping @Sendable () -> PanelNotice? = { nil }, clock: ManualClock = ManualClock()
    ) throws -> (panel: StatusPanel, feeder: PanelFeeder, directory: String) {
        let directory = NSTemporaryDirectory() + "panel-feeder-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let state = StateDirectory(path: directory)
        try state.create()
        let camera = CameraSupervisor(device: "/dev/video9", logger: Logger(label: "test")) {
            throw ApplianceError("no camera")
        }
        let panel = try StatusPanel(sink: NullSink(), clock: clock, logger: Logger(label: "test"))
        let feeder = PanelFeeder(
            panel: panel, database: try AppDatabase.inMemory(), stateDirectory: state, camera: camera,
            cameraName: "/dev/video9",
            settings: PanelFeeder.Settings(), logger: Logger(label: "test"), connectivity: connectivity,
            exportHold: exportHold, clock: clock, wallClock: clock.wallClock())
        return (panel, feeder, directory)
    }

    @Test("an export's \"do not remove\" stays over any other notice until the export lets go")
    func exportHoldOutranksOtherNotices() throws {
        let hold = Mutex<PanelNotice?>(.message(title: "EXPORTING", detail: "do not remove it"))
        let (panel, feeder, directory) = try idleFeeder(
            connectivity: { .unauthorized }, exportHold: { hold.withLock { $0 } })
        defer { try? FileManager.default.removeItem(atPath: directory) }
        feeder.show(.message(title: "THIS DEVICE", detail: "swiftwing"), for: .seconds(60))
        feeder.refresh()
        #expect(panel.model.notice?.title == "EXPORTING")
        hold.withLock { $0 = nil }
        feeder.refresh()
        #expect(panel.model.notice?.title == "THIS DEVICE")
    }

    @Test("the long press's notice shows over the others for its duration, then goes")
    func aShownNoticeExpires() async throws {
        let clock = ManualClock()
        let (panel, feeder, directory) = try idleFeeder(clock: clock)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let notice = PanelNotice.message(title: "THIS DEVICE", detail: "swiftwing · no network · queue empty")
        feeder.show(notice, for: .milliseconds(300))
        feeder.refresh()
        #expect(panel.model.notice == notice)
        clock.advance(by: .milliseconds(299))
        feeder.refresh()
        #expect(panel.model.notice == notice, "still up 1 ms before its end")
        clock.advance(by: .milliseconds(1))
        feeder.refresh()
        #expect(panel.model.notice == nil)
    }

    @Test("a refused key and a missing key each show their own notice")
    func unauthorizedNoticeSaysWhy() async throws {
        let (panel, feeder, directory) = try idleFeeder(connectivity: { .unauthorized })
        defer { try? FileManager.default.removeItem(atPath: directory) }
        feeder.refresh()
        #expect(panel.model.notice == .backendUnauthorized)
        let router = UplinkEventRouter()
        router.connect(feedback: FeedbackFanOut([]), panel: feeder)
        router.handle(.apiKeyMissing(reason: "no API key is installed"))
        feeder.refresh()
        #expect(panel.model.notice == PanelFeeder.apiKeyMissingNotice)
        #expect(panel.model.notice?.title == "NO API KEY")
    }

    /// A press whose frame held `isbn`'s barcode: the book lands with its ISBN alone and the panel is told.
    private func barcodeScan(_ isbn: String, on feeder: PanelFeeder) throws -> Int64 {
        feeder.pressAccepted(ShutterPress(time: .now(), source: .controlSocket))
        let book = try feeder.database.library.insert(BookRecord(isbn13: isbn, title: ""))
        feeder.showIdentified(isbns: [isbn])
        feeder.refresh()
        return try #require(book.id)
    }

    /// The catalogue's answer for book `id`, recorded as the enrichment service records it.
    private func catalogueAnswers(_ id: Int64, _ completion: BookRecord, on feeder: PanelFeeder) throws {
        let enriched = try #require(
            try feeder.database.library.recordEnrichment(id, status: .success, completion: completion))
        feeder.bookEnriched(enriched)
    }

    @Test("a barcode's book shows its ISBN at once and its title once the catalogue answers")
    func identifiedBookGetsItsTitle() async throws {
        let (panel, feeder, directory) = try idleFeeder()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let isbn = "9780131103627"
        let id = try barcodeScan(isbn, on: feeder)
        #expect(panel.model.notice == .message(title: "ISBN", detail: isbn))
        #expect(panel.model.latestBook?.isbn == isbn)
        #expect(panel.model.latestBook?.title == "Looking up the title…")

        try catalogueAnswers(
            id, BookRecord(title: "The C Programming Language", authors: ["Brian W. Kernighan"]), on: feeder)

        // The title shows as the latest book and in the scan's notice
        #expect(panel.model.latestBook?.title == "The C Programming Language")
        #expect(panel.model.latestBook?.authors == ["Brian W. Kernighan"])
        feeder.refresh()
        #expect(panel.model.notice == .message(title: "ISBN", detail: "\(isbn)  The C Programming Language"))
    }

    @Test("a title for an earlier scan's book updates the latest book but does not take the screen")
    func titleOfAnEarlierScan() async throws {
        let (panel, feeder, directory) = try idleFeeder()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let id = try barcodeScan("9780262510875", on: feeder)
        // A second press (a frame without a code) makes the first scan an earlier one
        feeder.pressAccepted(ShutterPress(time: .now(), source: .controlSocket))
        feeder.refresh()
        #expect(panel.model.notice == nil)

        try catalogueAnswers(id, BookRecord(title: "Structure and Interpretation of Computer Programs"), on: feeder)
        feeder.refresh()
        #expect(panel.model.notice == nil)
        #expect(panel.model.latestBook?.title == "Structure and Interpretation of Computer Programs")
    }

    @Test("books landing wake the catalogue lookups; other notices do not")
    func booksLandedWakeEnrichment() {
        let wakes = Mutex(0)
        let doorbell = EnrichmentDoorbellFeedback { wakes.withLock { $0 += 1 } }
        let feedback = FeedbackFanOut([doorbell])
        for notice in [FeedbackNotice.scanFailed, .rateLimited, .exportDone] { feedback.notice(notice) }
        feedback.scanSaved(ShutterPress(time: .now(), source: .controlSocket))
        #expect(wakes.withLock { $0 } == 0)
        feedback.notice(.booksLanded)
        #expect(wakes.withLock { $0 } == 1)
    }
}
