import Logging
import Panel
import Synchronization
import SwiftWingTesting
import Testing
import Glibc

/// An output as slow as a busy machine: each present takes 200 ms.
final class SlowSink: PanelOutputSink, @unchecked Sendable {
    let width = 160
    let height = 120
    let summary = "slow"
    let centres = Mutex<[PanelColor]>([])
    func present(_ image: PanelImage, damage: [PanelRect]) throws(PanelError) {
        usleep(200_000)
        let centre = image.pixel(x: 80, y: 60)
        centres.withLock { $0.append(centre) }
    }
}

@Suite("Status panel on a slow output")
struct SlowStatusPanelTests {
    @Test("a flash that ends while the panel thread is busy is still drawn once, then taken down")
    func lateFlashIsDrawn() async throws {
        let sink = SlowSink()
        let panel = try StatusPanel(sink: sink, logger: Logger(label: "test"))
        panel.start()
        try await Task.sleep(for: .milliseconds(50))  // the first frame is being presented (200 ms)
        panel.flash()  // ends after 120 ms, before the thread is free
        try await Task.sleep(for: .milliseconds(900))
        panel.stop()
        let centres = sink.centres.withLock { $0 }
        #expect(centres.contains(.white), "\(centres)")
        #expect(centres.last != .white)
    }
}
