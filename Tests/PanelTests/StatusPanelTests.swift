import Logging
import Panel
import Synchronization
import SwiftWingTesting
import Testing
import Glibc

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
