import Controls
import Foundation
import Logging
import Panel
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
            ControlRequest.exportStarted(books: 412), .exportFinished(books: 412, file: "SwiftWing_Library_2026-11-23.csv"),
            .exportFailed(reason: "The stick is full (1.2 MB needed). Free some space."),
        ] {
            let reply = try await offThePool { try ControlClient.send(request, to: path) }
            #expect(reply.ok)
        }
        let shown = recorder.shown.withLock { $0 }
        #expect(shown.count == 3)
        #expect(shown[0].title == "EXPORTING")
        #expect(shown[0].detail.contains("412 books") && shown[0].detail.contains("do not remove"))
        #expect(shown[1] == .exportFinished(books: 412, safeToRemove: true))
        #expect(shown[1].detail == "Exported 412 books — safe to remove")
        #expect(shown[2] == .message(title: "EXPORT FAILED", detail: "The stick is full (1.2 MB needed). Free some space."))
        #expect(recorder.notices.withLock { $0 } == [.exportDone])

        let refused = notices.handle(ControlRequest(command: .shutter))
        #expect(!refused.ok)
    }
}
