import Controls
import Foundation
import SwiftWingCore
import SwiftWingTesting
import Synchronization
import Testing

/// Collects events from an input's thread.
final class EventLog: Sendable {
    private let events = Mutex<[ShutterEvent]>([])
    var handler: @Sendable (ShutterEvent) -> Void { { [self] event in events.withLock { $0.append(event) } } }
    var all: [ShutterEvent] { events.withLock { $0 } }
    var presses: Int { all.filter { if case .press = $0 { true } else { false } }.count }
    var longPresses: Int { all.filter { if case .longPress = $0 { true } else { false } }.count }

    /// Waits up to `seconds` for `count` events.
    func wait(for count: Int, seconds: Double = 3) async {
        let deadline = Date().addingTimeInterval(seconds)
        // polls the shutter's thread
        while all.count < count, Date() < deadline { try? await Task.sleep(for: .milliseconds(5)) }
    }
}
