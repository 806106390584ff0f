import Foundation
import Logging
import Panel
import SwiftWingCore
import SwiftWingTesting
import Synchronization
import Testing

@testable import Appliance

/// A start that fails on a setting (a configuration that does not load, a camera setting refused) is held
/// with the problem on the panel and the watchdog fed, until the configuration file changes or 5 min pass,
/// instead of a restart every few seconds. Time is a clock the test advances; the file is real.
@Suite struct StartupHoldTests {
    @Test func aChangedConfigurationEndsTheHold() async throws {
        let clock = ManualClock()
        let path = NSTemporaryDirectory() + "swiftwing-hold-\(UUID().uuidString).toml"
        try "[camera]\nwidth = \"1920\"\n".write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let pings = Counter()
        let hold = StartupHold(clock: clock, configurationPath: path) { pings.add() }
        let task = Task { await hold.wait() }
        try await advance(clock, by: .seconds(2))
        try await advance(clock, by: .seconds(2))
        try await sleeping(clock)
        #expect(pings.value == 2, "the watchdog is fed at every look")

        try "[camera]\nwidth = 1920\n".write(toFile: path, atomically: true, encoding: .utf8)  // the owner's fix
        clock.advance(by: .seconds(2))
        #expect(await task.value == .configurationChanged)
    }

    @Test func withNoChangeTheHoldEndsAfterFiveMinutes() async throws {
        let clock = ManualClock()
        let path = NSTemporaryDirectory() + "swiftwing-hold-absent-\(UUID().uuidString).toml"
        let hold = StartupHold(clock: clock, configurationPath: path) {}
        let task = Task { await hold.wait() }
        for _ in 0..<149 { try await advance(clock, by: .seconds(2)) }
        try await sleeping(clock)
        #expect(clock.sleeperCount == 1, "still held after 298 s")
        clock.advance(by: .seconds(2))
        #expect(await task.value == .timeUp)
    }

    @Test func theFailedStartIsShownOnThePanel() async throws {
        let clock = ManualClock()
        let path = NSTemporaryDirectory() + "swiftwing-hold-\(UUID().uuidString).toml"
        let png = NSTemporaryDirectory() + "swiftwing-hold-\(UUID().uuidString).png"
        defer {
            try? FileManager.default.removeItem(atPath: path)
            try? FileManager.default.removeItem(atPath: png)
        }
        let panel = try StatusPanel(sink: PNGSink(path: png), logger: Logger(label: "test"))
        let task = Task {
            await ApplianceDaemon.holdFailedStart(
                title: "SETTINGS PROBLEM", problem: "\(path):2: camera.width must be a number. Fix: width = 1920",
                configurationPath: path, panel: panel, clock: clock, logger: Logger(label: "test"))
        }
        try await sleeping(clock)
        #expect(panel.model.notice?.title == "SETTINGS PROBLEM")
        #expect(panel.model.notice?.detail.contains("camera.width must be a number") == true)
        #expect(panel.model.notice?.detail.contains("starts again when it changes") == true)
        try "[camera]\nwidth = 1920\n".write(toFile: path, atomically: true, encoding: .utf8)
        clock.advance(by: .seconds(2))
        #expect(await task.value == .configurationChanged)
    }

    /// Waits until the hold sleeps on the clock (it runs on a task of its own: nothing to await).
    private func sleeping(_ clock: ManualClock) async throws {
        for _ in 0..<2000 where clock.sleeperCount == 0 { try await Task.sleep(for: .milliseconds(5)) }
        try #require(clock.sleeperCount > 0)
    }

    private func advance(_ clock: ManualClock, by duration: Duration) async throws {
        try await sleeping(clock)
        clock.advance(by: duration)
    }
}

private final class Counter: Sendable {
    private let count = Mutex(0)
    var value: Int { count.withLock { $0 } }
    func add() { count.withLock { $0 += 1 } }
}
