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
        // Frames start at least 66 ms apart; a present can end late (a slow render), so the gap between
        // two presents may be shorter, but not between presents two frames apart.
        var gaps: [Double] = []
        for pair in zip(frames, frames.dropFirst(2)) {
            gaps.append(Double(pair.1.time.tv_sec - pair.0.time.tv_sec) + Double(pair.1.time.tv_nsec - pair.0.time.tv_nsec) / 1e9)
        }
        #expect(gaps.allSatisfy { $0 >= 0.066 }, "gaps between frames two apart: \(gaps)")
        #expect(panel.model.queued == 200)
        #expect(panel.statistics.frames == frames.count)
    }

    @Test("a press flashes white at once, even right after a frame, then the status comes back by itself")
    func flash() async throws {
        let sink = RecordingSink()
        let panel = try StatusPanel(sink: sink, logger: Logger(label: "test"))
        panel.start()
        try await Task.sleep(for: .milliseconds(100))
        // A frame just drawn: the limiter would hold the next one for 66 ms, but not the flash.
        panel.update { $0.queued = 7 }
        try await Task.sleep(for: .milliseconds(5))
        var pressed = timespec()
        clock_gettime(CLOCK_MONOTONIC, &pressed)
        panel.flash()
        try await Task.sleep(for: .milliseconds(400))
        panel.stop()
        let frames = sink.frames.withLock { $0 }
        let centres = frames.map(\.centre)
        #expect(centres.contains(.white))
        if let white = frames.first(where: { $0.centre == .white }) {
            let latency = Double(white.time.tv_sec - pressed.tv_sec) + Double(white.time.tv_nsec - pressed.tv_nsec) / 1e9
            #expect(latency < 0.040, "flash drawn \(latency * 1000) ms after the press")
        }
        #expect(centres.last != .white)
        #expect(centres.first != .white)
    }
}

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
