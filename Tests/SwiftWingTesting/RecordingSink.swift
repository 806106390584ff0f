import Glibc
import Panel
import Synchronization

/// A 320×240 panel output that records each presented frame's damage, centre pixel and monotonic time.
public final class RecordingSink: PanelOutputSink, @unchecked Sendable {
    public let width = 320
    public let height = 240
    public let summary = "memory"
    public struct Frame {
        public var damage: [PanelRect]
        public var centre: PanelColor
        public var time: timespec
    }
    public let frames = Mutex<[Frame]>([])

    public init() {}

    public func present(_ image: PanelImage, damage: [PanelRect]) throws(PanelError) {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let centre = image.pixel(x: 160, y: 120)
        frames.withLock { $0.append(Frame(damage: damage, centre: centre, time: now)) }
    }
}
