import Dispatch
import Logging
import Panel
import SwiftWingTesting
import Synchronization
import Testing

/// An output as slow as a busy machine: each present holds the panel thread until the test lets it go.
final class SlowSink: PanelOutputSink, @unchecked Sendable {
    let width = 160
    let height = 120
    let summary = "slow"
    let centres = Mutex<[PanelColor]>([])
    private let gate = DispatchSemaphore(value: 0)

    func present(_ image: PanelImage, damage: [PanelRect]) throws(PanelError) {
        let centre = image.pixel(x: 80, y: 60)
        centres.withLock { $0.append(centre) }
        gate.wait()
    }

    /// Ends the present in progress (or the next one).
    func finishPresent() { gate.signal() }

    /// Waits until `count` presents have begun.
    func waitForPresents(_ count: Int) async throws {
        for _ in 0..<10_000 where centres.withLock({ $0.count }) < count {
            try await Task.sleep(for: .milliseconds(1))  // polls the panel's own thread: nothing to await
        }
        try #require(centres.withLock { $0.count } >= count)
    }
}

@Suite("Status panel on a slow output")
struct SlowStatusPanelTests {
    @Test("a flash that ends while the panel thread is busy is still drawn once, then taken down")
    func lateFlashIsDrawn() async throws {
        let sink = SlowSink()
        let clock = ManualClock()
        let panel = try StatusPanel(sink: sink, clock: clock, logger: Logger(label: "test"))
        panel.start()
        try await sink.waitForPresents(1)  // the first frame is being presented
        panel.flash()
        clock.advance(by: .milliseconds(200))  // the flash ends before the thread is free
        sink.finishPresent()
        try await sink.waitForPresents(2)
        clock.advance(by: .milliseconds(100))  // past the frame limit
        sink.finishPresent()
        try await sink.waitForPresents(3)
        sink.finishPresent()
        panel.stop()
        let centres = sink.centres.withLock { $0 }
        #expect(centres.count == 3, "\(centres)")
        #expect(centres.contains(.white), "\(centres)")
        #expect(centres.last != .white)
    }
}
