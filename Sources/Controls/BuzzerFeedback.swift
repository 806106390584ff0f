import Logging
import SwiftWingCore
import Synchronization

/// Press feedback on a buzzer (and optionally a light) through a ``PatternPlayer``, recording the
/// press-to-buzzer latency of every press.
///
/// | event | buzzer | light |
/// |---|---|---|
/// | `pressAccepted` | click (15 ms) | on, until the frame is captured (at most `lightMaximum`) |
/// | `frameCaptured` | — | off |
/// | `pressRefused` | error (one long, 600 ms) | off |
/// | `scanSaved` | nothing: the click already said "taken"; a second sound per press would blur with the next press's click | — |
/// | `longPress` | two long | — |
/// | `notice(.booksLanded)` | success (two short) | — |
/// | `notice(.scanFailed)` | error | — |
/// | `notice(.rateLimited)` | three quick | — |
/// | `notice(.exportDone)` | short, short, long | — |
///
/// Every call returns at once: the first step of a pattern is one ioctl on the caller's thread, the
/// rest runs on the player's timer thread.
public final class BuzzerFeedback: PressFeedback {
    public let player: PatternPlayer
    private let lightMaximum: Int64
    private let latencies = Mutex(LatencyHistogram())

    /// - Parameter lightMaximumNanoseconds: the longest the light stays on waiting for a frame
    ///   (set it to the capture timeout).
    public init(player: PatternPlayer, lightMaximumNanoseconds: Int64 = 3_000_000_000) {
        self.player = player
        self.lightMaximum = lightMaximumNanoseconds
    }

    /// Press (the kernel's event timestamp) to buzzer line set, over every GPIO and key press so far.
    /// Control-socket presses are not recorded: their timestamp is the request's arrival, not an edge.
    public var latency: LatencyHistogram { latencies.withLock { $0 } }

    public func pressAccepted(_ press: ShutterPress) {
        player.play(.click)
        // The press is stamped by the kernel: the time to the buzzer is read on the kernel's clock.
        let buzzerSet = MonotonicInstant.now()
        player.lightOn(forAtMost: lightMaximum)
        guard press.source != .controlSocket else { return }
        let latency = buzzerSet.nanoseconds(since: press.time)
        latencies.withLock { $0.record(nanoseconds: latency) }
    }

    public func pressRefused(_ press: ShutterPress, reason: String) {
        player.lightOff()
        player.play(.error)
    }

    public func scanSaved(_ press: ShutterPress) {}

    public func frameCaptured(_ press: ShutterPress) {
        player.lightOff()
    }

    public func longPress(_ press: ShutterPress) {
        player.play(.longPress)
    }

    public func notice(_ notice: FeedbackNotice) {
        switch notice {
        case .booksLanded: player.play(.success)
        case .scanFailed: player.play(.error)
        case .rateLimited: player.play(.rateLimited)
        case .exportDone: player.play(.exportDone)
        }
    }
}
