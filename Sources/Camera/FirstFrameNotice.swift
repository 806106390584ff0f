import Logging
import SwiftWingCore

/// Logs the first good frame after a camera opens or reopens, stamped on `CLOCK_MONOTONIC`, so the
/// time from a start (or a reconnect) to a usable frame can be measured from outside the process
/// (scripts/bench-startup.sh) and read in the journal.
struct FirstFrameNotice {
    private var openingSince: MonotonicInstant?

    /// The camera starts opening now; the next ``frame(at:sequence:logger:)`` is the first one.
    mutating func opening(at instant: MonotonicInstant = .now()) {
        openingSince = instant
    }

    /// Logs once per opening; later frames cost one comparison.
    mutating func frame(at timestamp: MonotonicInstant, sequence: UInt32, logger: Logger) {
        guard let since = openingSince else { return }
        openingSince = nil
        let milliseconds = Double(MonotonicInstant.now().nanoseconds(since: since)) / 1_000_000
        logger.notice(
            "first frame",
            metadata: [
                "monotonic_ns": "\(timestamp.nanoseconds)", "sequence": "\(sequence)",
                "since_open_ms": "\((milliseconds * 10).rounded() / 10)",
            ])
    }
}
