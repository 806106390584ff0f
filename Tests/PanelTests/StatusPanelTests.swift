import Glibc
import Logging
import Panel
import SwiftWingTesting
import Synchronization
import Testing

/// Waits until `sink` has been handed `count` frames by the panel's own thread.
func waitForFrames(
    _ sink: RecordingSink, _ count: Int, sourceLocation: SourceLocation = #_sourceLocation
) async throws {
    for _ in 0..<10_000 where sink.frames.withLock({ $0.count }) < count {
        try await Task.sleep(for: .milliseconds(1))  // polls the panel's own thread: nothing to await
    }
    try #require(sink.frames.withLock { $0.count } >= count, sourceLocation: sourceLocation)
}

@Suite("Status panel thread")
struct StatusPanelTests {
    @Test("a burst of updates is drawn at most 15 times a second, and the last state is shown")
    func rateLimit() async throws {
        let sink = RecordingSink()
        let clock = ManualClock()
        let panel = try StatusPanel(sink: sink, clock: clock, logger: Logger(label: "test"))
        panel.start()
        panel.update { $0.queued = 1 }
        try await waitForFrames(sink, 1)
        // The clock stands still: a burst of updates waits for the next frame, 1/15 s after the last.
        for i in 2...100 { panel.update { $0.queued = i } }
        clock.advance(by: .nanoseconds(1_000_000_000 / 15))
        try await waitForFrames(sink, 2)
        for i in 101...200 { panel.update { $0.queued = i } }
        clock.advance(by: .nanoseconds(1_000_000_000 / 15))
        try await waitForFrames(sink, 3)
        panel.stop()
        #expect(sink.frames.withLock { $0.count } == 3, "one frame per 1/15 s on the clock, however many updates")
        #expect(panel.model.queued == 200)
        #expect(panel.statistics.frames == 3)
    }

    @Test("a press flashes white at once, even right after a frame, then the status comes back by itself")
    func flash() async throws {
        let sink = RecordingSink()
        let clock = ManualClock()
        let panel = try StatusPanel(sink: sink, clock: clock, logger: Logger(label: "test"))
        panel.start()
        panel.update { $0.queued = 7 }
        try await waitForFrames(sink, 1)
        // A frame just drawn and the clock standing still: the limiter holds the next one, but not the flash.
        panel.update { $0.queued = 8 }
        var pressed = timespec()
        clock_gettime(CLOCK_MONOTONIC, &pressed)
        panel.flash()
        try await waitForFrames(sink, 2)
        clock.advance(by: StatusPanel.flashDuration)
        try await waitForFrames(sink, 3)
        panel.stop()
        let frames = sink.frames.withLock { $0 }
        let centres = frames.map(\.centre)
        #expect(centres.contains(.white))
        if let white = frames.first(where: { $0.centre == .white }) {
            let latency =
                Double(white.time.tv_sec - pressed.tv_sec) + Double(white.time.tv_nsec - pressed.tv_nsec) / 1e9
            #expect(latency < 0.040, "flash drawn \(latency * 1000) ms after the press")
        }
        #expect(centres.last != .white)
        #expect(centres.first != .white)
    }
}
