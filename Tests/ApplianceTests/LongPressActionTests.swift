import Controls
import Foundation
import Logging
import Panel
import Store
import SwiftWingCore
import SwiftWingTesting
import Synchronization
import Testing

@testable import Appliance

/// The long press from an input (the fake GPIO shutter of SwiftWingTesting, delivering events as the
/// GPIO thread does) through the daemon's router: the long-press pattern, the retry hook, the notice.
@Suite struct LongPressActionTests {
    /// What the router's collaborators saw.
    final class Record: Sendable {
        let retries = Atomic<Int>(0)
        let presses = Mutex<[ShutterPress]>([])
        let shown = Mutex<[(PanelNotice, Duration)]>([])
    }

    /// Records the feedback calls (the buzzer's long-press pattern is `longPress`).
    final class RecordingFeedback: PressFeedback {
        let calls = Mutex<[String]>([])
        func pressAccepted(_ press: ShutterPress) { calls.withLock { $0.append("accepted") } }
        func pressRefused(_ press: ShutterPress, reason: String) { calls.withLock { $0.append("refused") } }
        func scanSaved(_ press: ShutterPress) { calls.withLock { $0.append("saved") } }
        func longPress(_ press: ShutterPress) { calls.withLock { $0.append("long") } }
    }

    private func until(_ condition: () -> Bool) async {
        let deadline = ContinuousClock.now + .seconds(10)
        // Polls the router's tasks: nothing to await.
        while !condition(), ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(5)) }
    }

    private func router(_ record: Record, feedback: RecordingFeedback) -> ShutterEventRouter {
        let action = LongPressAction(
            retryFailedScans: {
                record.retries.add(1, ordering: .relaxed)
                return 2
            },
            queueCounts: { [.queued: 5, .failed: 0] },
            addresses: { [NetworkAddress(interface: "eth0", family: .ipv4, address: "192.168.1.20")] },
            hostname: { "swiftwing-test" },
            show: { notice, duration in record.shown.withLock { $0.append((notice, duration)) } },
            logger: Logger(label: "test"))
        return ShutterEventRouter(
            feedback: feedback, press: { press in record.presses.withLock { $0.append(press) } }, longPress: action)
    }

    @Test func aLongPressRetriesFailedScansAndShowsTheAddressForTenSeconds() async throws {
        let record = Record()
        let feedback = RecordingFeedback()
        let shutter = FakeShutter()
        try shutter.start(router(record, feedback: feedback).handle)
        let press = ShutterPress(time: .now(), source: .gpio)

        #expect(shutter.emit(.press(press)))
        #expect(shutter.emit(.longPress(press)))
        // The pattern sounds on the input's thread, before emit returns; the rest runs in a task.
        #expect(feedback.calls.withLock { $0 } == ["accepted", "long"])
        await until { !record.shown.withLock { $0 }.isEmpty && !record.presses.withLock { $0 }.isEmpty }

        #expect(record.retries.load(ordering: .relaxed) == 1)
        #expect(
            record.presses.withLock { $0 } == [press],
            "the press before the long press is one scan, the long press none")
        let shown = record.shown.withLock { $0 }
        #expect(shown.count == 1)
        #expect(shown.first?.1 == .seconds(10))
        #expect(
            shown.first?.0
                == .message(
                    title: "THIS DEVICE",
                    detail: "swiftwing-test · 192.168.1.20 (eth0) · 5 queued · 2 failed scans retried"))
    }

    @Test func aPlainPressNeverRetries() async throws {
        let record = Record()
        let feedback = RecordingFeedback()
        let shutter = FakeShutter()
        try shutter.start(router(record, feedback: feedback).handle)
        shutter.emit(.press(ShutterPress(time: .now(), source: .key)))
        await until { !record.presses.withLock { $0 }.isEmpty }
        try await Task.sleep(for: .milliseconds(50))  // no clock here: time for a wrong retry's task to run
        #expect(record.retries.load(ordering: .relaxed) == 0)
        #expect(record.shown.withLock { $0 }.isEmpty)
        #expect(feedback.calls.withLock { $0 } == ["accepted"])
    }
}
