import Foundation
import Testing

@testable import Appliance

/// The STATUS= line and the first line of `swiftwing status`: words a person reads at a glance.
@Suite struct StatusHeadlineTests {
    func report(
        uplink: UplinkStatus?, camera: String = "streaming", queue: [String: Int] = [:], books: Int = 0
    ) -> StatusReport {
        let status = DaemonStatus(
            pid: 1, version: "0", startedAt: Date(), camera: "/dev/video0", cameraState: "", pressesAccepted: 0,
            pressesRefused: 0, processing: 0, lastError: nil, uplink: uplink, cameraAvailability: camera)
        var report = StatusReport(stateDirectory: "/var/lib/swiftwing", daemon: .init(status))
        report.queue = queue
        report.library = .init(books: books)
        return report
    }

    func uplink(_ connectivity: String, keyMissing: Bool = false) -> UplinkStatus {
        UplinkStatus(
            connectivity: connectivity, rateLimitRemainingSeconds: 0, jobsInFlight: 0, concurrency: 3,
            backend: "https://talaria.example/", lastProblem: nil, apiKeyMissing: keyMissing)
    }

    @Test func onlineWithScansWaiting() {
        let line = report(uplink: uplink("online"), queue: ["queued": 2, "uploading": 1, "done": 9], books: 412)
            .headline
        #expect(line == "Online · 3 queued · 412 books")
    }

    @Test func offlineForWantOfAKeyOrABackend() {
        #expect(
            report(uplink: uplink("unauthorized", keyMissing: true), queue: ["queued": 2], books: 40).headline
                == "Offline (no API key) · 2 queued · 40 books")
        #expect(report(uplink: nil, books: 1).headline == "Offline (no backend.url) · 0 queued · 1 book")
        #expect(report(uplink: uplink("unauthorized")).headline.hasPrefix("Unauthorized (API key refused)"))
    }

    @Test func aPauseSaysWhetherTheBackendRateLimitsOrIsBusy() {
        #expect(report(uplink: uplink("rate-limited")).headline.hasPrefix("Rate limited · "))
        #expect(report(uplink: uplink("busy")).headline.hasPrefix("Backend busy · "))
    }

    @Test func aMissingCameraComesFirstAndFailuresAreCounted() {
        let line = report(
            uplink: uplink("offline"), camera: "missing", queue: ["queued": 1, "failed": 2, "needs_attention": 1]
        ).headline
        #expect(line == "Camera missing · Offline · 1 queued · 2 failed · 1 to check · 0 books")
    }

    @Test func noDaemonSaysSo() {
        #expect(
            StatusReport(stateDirectory: "/x", daemon: .init(running: false, reason: "no socket")).headline
                == "Not running")
    }
}
