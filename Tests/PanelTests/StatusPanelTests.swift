import Logging
import Panel
import Synchronization
import Testing
import Glibc

/// An output that records what it was given.
final class RecordingSink: PanelOutputSink, @unchecked Sendable {
    let width = 320
    let height = 240
    let summary = "memory"
    struct Frame {
        var damage: [PanelRect]
        var centre: PanelColor
        var time: timespec
    }
    let frames = Mutex<[Frame]>([])

    func present(_ image: PanelImage, damage: [PanelRect]) throws(PanelError) {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let centre = image.pixel(x: 160, y: 120)
        frames.withLock { $0.append(Frame(damage: damage, centre: centre, time: now)) }
    }
}

@Suite("Status panel thread")
struct StatusPanelTests {
    @Test("a burst of updates is drawn at most 15 times a second, and the last state is shown")
    func rateLimit() async throws {
        let sink = RecordingSink()
        let panel = try StatusPanel(sink: sink, logger: Logger(label: "test"))
        panel.start()
        let clock = ContinuousClock()
        let start = clock.now
        for i in 1...200 {
            panel.update { $0.queued = i }
            try await Task.sleep(for: .milliseconds(2))
        }
        try await Task.sleep(for: .milliseconds(300))
        let elapsed = clock.now - start
        panel.stop()
        let frames = sink.frames.withLock { $0 }
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        #expect(frames.count >= 2)
        #expect(Double(frames.count) <= seconds * 15 + 2, "\(frames.count) frames in \(seconds) s")
        for pair in zip(frames, frames.dropFirst()) {
            let gap = Double(pair.1.time.tv_sec - pair.0.time.tv_sec) + Double(pair.1.time.tv_nsec - pair.0.time.tv_nsec) / 1e9
            #expect(gap >= 0.060, "frames \(gap) s apart")
        }
        #expect(panel.model.queued == 200)
        #expect(panel.statistics.frames == frames.count)
    }

    @Test("a press flashes white, then the status comes back by itself")
    func flash() async throws {
        let sink = RecordingSink()
        let panel = try StatusPanel(sink: sink, logger: Logger(label: "test"))
        panel.start()
        try await Task.sleep(for: .milliseconds(100))
        panel.flash()
        try await Task.sleep(for: .milliseconds(400))
        panel.stop()
        let centres = sink.frames.withLock { $0.map(\.centre) }
        #expect(centres.contains(.white))
        #expect(centres.last != .white)
        #expect(centres.first != .white)
    }
}
