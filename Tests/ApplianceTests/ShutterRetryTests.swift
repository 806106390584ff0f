import Controls
import Foundation
import Logging
import SwiftWingCore
import SwiftWingTesting
import Synchronization
import Testing

@testable import Appliance

/// A shutter input that does not start (a GPIO chip not there yet) is said on the panel and tried again,
/// 2 s doubling, until it starts, with no restart of the daemon. The GPIO input is the real one, on a chip
/// that is not there; time is a clock the test advances.
@Suite struct ShutterRetryTests {
    @Test func anInputThatDidNotStartIsTriedAgainUntilItStarts() async throws {
        let clock = ManualClock()
        let gpio = GPIOShutter(spec: GPIOLineSpec(chip: "/dev/gpiochip-swiftwing-absent", line: "17", activeLow: true))
        let late = LateInput()
        let controls = ShutterControls(
            configuration: ApplianceConfiguration(), logger: Logger(label: "test"), inputs: [gpio, late])
        controls.start { _ in }
        defer { controls.stop() }
        #expect(controls.failedInputs == [gpio.name, late.name])

        let shown = Shown()
        let task = Task { await controls.retryFailedInputs(clock: clock) { shown.add($0, $1) } }
        defer { task.cancel() }
        try await sleeping(clock)
        clock.advance(by: .seconds(1))
        #expect(late.tries == 1, "not tried again before 2 s")
        clock.advance(by: .seconds(1))
        try await until { shown.count == 2 && clock.sleeperCount > 0 }
        #expect(late.tries == 2)
        #expect(shown.all.first?.0 == "SHUTTER NOT FOUND")
        #expect(shown.all.first?.1.contains("gpiochip-swiftwing-absent") == true, "the real error: \(shown.all)")

        late.available.withLock { $0 = true }  // the device appears
        clock.advance(by: .seconds(3))
        #expect(late.tries == 2, "the second wait is 4 s")
        clock.advance(by: .seconds(1))
        try await until { late.tries == 3 && clock.sleeperCount > 0 }
        #expect(controls.failedInputs == [gpio.name], "the late input runs; the absent chip is still tried")
        #expect(controls.runningInputs == [late.name])
        #expect(shown.count == 3)
    }

    private func sleeping(_ clock: ManualClock) async throws {
        try await until { clock.sleeperCount > 0 }
    }

    private func until(_ condition: () -> Bool) async throws {
        // The retry runs on a task of its own: nothing to await.
        for _ in 0..<2000 where !condition() { try await Task.sleep(for: .milliseconds(5)) }
        try #require(condition())
    }
}

/// An input whose device is missing until the test makes it appear.
private final class LateInput: ShutterInput {
    let available = Mutex(false)
    private let attempts = Mutex(0)
    var name: String { "late key device" }
    var tries: Int { attempts.withLock { $0 } }

    func start(_ handler: @escaping @Sendable (ShutterEvent) -> Void) throws {
        attempts.withLock { $0 += 1 }
        guard available.withLock({ $0 }) else { throw CancellationError() }
    }

    func stop() {}
}

private final class Shown: Sendable {
    private let notices = Mutex<[(String, String)]>([])
    var all: [(String, String)] { notices.withLock { $0 } }
    var count: Int { all.count }
    func add(_ title: String, _ detail: String) { notices.withLock { $0.append((title, detail)) } }
}
