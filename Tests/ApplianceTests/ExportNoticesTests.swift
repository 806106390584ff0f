import Controls
import Foundation
import Logging
import Panel
import SwiftWingTesting
import Synchronization
import Testing

@testable import Appliance

/// The export's messages to the daemon, over a real Unix socket, into the panel and the buzzer.
@Suite struct ExportNoticesTests {
    final class Recorder: PressFeedback {
        let notices = Mutex<[FeedbackNotice]>([])
        let shown = Mutex<[PanelNotice]>([])
        func pressAccepted(_ press: ShutterPress) {}
        func pressRefused(_ press: ShutterPress, reason: String) {}
        func scanSaved(_ press: ShutterPress) {}
        func notice(_ notice: FeedbackNotice) { notices.withLock { $0.append(notice) } }
    }

    @Test func startedFinishedAndFailedReachThePanelAndOnlySuccessTheBuzzer() async throws {
        let path = NSTemporaryDirectory() + "sw-\(UUID().uuidString.prefix(8)).sock"
        let recorder = Recorder()
        let notices = ExportNotices(
            show: { notice, _ in recorder.shown.withLock { $0.append(notice) } }, feedback: recorder,
            logger: Logger(label: "test"))
        let server = try ControlSocketServer(path: path, logger: Logger(label: "test")) { notices.handle($0) }
        let thread = Thread { server.serve() }
        thread.start()
        defer { server.stop() }

        for request in [
            ControlRequest.exportStarted(books: 412),
            .exportFinished(books: 412, file: "SwiftWing_Library_2026-11-23.csv"),
            .exportFailed(reason: "The stick is full (1.2 MB needed). Free some space."),
        ] {
            let reply = try await offThePool { try ControlClient.send(request, to: path) }
            #expect(reply.ok)
        }
        let shown = recorder.shown.withLock { $0 }
        #expect(shown.count == 2)
        #expect(shown[0] == .exportFinished(books: 412, safeToRemove: true))
        #expect(shown[0].detail == "Exported 412 books — safe to remove")
        #expect(
            shown[1] == .message(title: "EXPORT FAILED", detail: "The stick is full (1.2 MB needed). Free some space."))
        #expect(recorder.notices.withLock { $0 } == [.exportDone])

        let refused = notices.handle(ControlRequest(command: .shutter))
        #expect(!refused.ok)
    }

    private func notices() -> (ExportNotices, Recorder) {
        let recorder = Recorder()
        let notices = ExportNotices(
            show: { notice, _ in recorder.shown.withLock { $0.append(notice) } }, feedback: recorder,
            logger: Logger(label: "test"))
        return (notices, recorder)
    }

    /// A real process standing in for the export: the hold follows its life.
    private func exporter() throws -> Process {
        let child = Process()
        child.executableURL = URL(fileURLWithPath: "/bin/sleep")
        child.arguments = ["60"]
        try child.run()
        return child
    }

    @Test func doNotRemoveStaysUntilTheExportEndsWhateverAnotherStickSays() throws {
        let (notices, recorder) = notices()
        let child = try exporter()
        defer { child.killAndReap() }
        #expect(notices.current() == nil)
        #expect(notices.handle(.exportStarted(books: 412, device: "sda1", pid: child.processIdentifier)).ok)
        let writing = try #require(notices.current())
        #expect(writing.title == "EXPORTING")
        #expect(writing.detail == "Writing 412 books to the USB stick — do not remove it.")

        // A second stick refused meanwhile: logged and named under the first's notice, which stays.
        let busy = "Already exporting to another stick. Plug this one in again after it."
        #expect(notices.handle(.exportFailed(reason: busy, device: "sdb1")).ok)
        let still = try #require(notices.current())
        #expect(still.title == "EXPORTING")
        #expect(still.detail.contains("do not remove") && still.detail.contains("sdb1 was left alone"))
        #expect(recorder.shown.withLock { $0 }.isEmpty)

        // Its own end takes it down.
        #expect(
            notices.handle(.exportFinished(books: 412, file: "SwiftWing_Library_2026-11-23.csv", device: "sda1")).ok)
        #expect(notices.current() == nil)
        #expect(recorder.shown.withLock { $0 } == [.exportFinished(books: 412, safeToRemove: true)])
    }

    @Test func anExportThatEndsWithoutAWordReleasesThePanelWithAMessage() throws {
        let (notices, recorder) = notices()
        let child = try exporter()
        #expect(notices.handle(.exportStarted(books: 3, device: "sda1", pid: child.processIdentifier)).ok)
        #expect(notices.current()?.title == "EXPORTING")
        #expect(notices.current()?.title == "EXPORTING")
        child.killAndReap()
        #expect(notices.current() == nil)
        let shown = recorder.shown.withLock { $0 }
        #expect(shown.count == 1)
        #expect(shown.first?.title == "EXPORT FAILED")
        #expect(shown.first?.detail.contains("stopped without finishing") == true)
    }

    @Test func itsOwnFailureEndsTheHoldAndShows() throws {
        let (notices, recorder) = notices()
        let child = try exporter()
        defer { child.killAndReap() }
        #expect(notices.handle(.exportStarted(books: 3, device: "sda1", pid: child.processIdentifier)).ok)
        #expect(notices.handle(.exportFailed(reason: "The stick is damaged.", device: "sda1")).ok)
        #expect(notices.current() == nil)
        #expect(recorder.shown.withLock { $0 } == [.message(title: "EXPORT FAILED", detail: "The stick is damaged.")])
    }
}
