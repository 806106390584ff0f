import Logging
import SwiftWingCore
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A source of shutter events: a GPIO button, key devices, or a test double.
///
/// `start` delivers events on the input's own thread; the handler must return at once (give the
/// feedback, hand the press to the pipeline) and never block.
public protocol ShutterInput: AnyObject, Sendable {
    /// What it listens to, for logs and the status ("GPIO17 of pinctrl-bcm2835", "key devices").
    var name: String { get }
    func start(_ handler: @escaping @Sendable (ShutterEvent) -> Void) throws
    /// Stops promptly (wakes the poll loop) and releases the line or devices. Safe to call twice.
    func stop()
}

/// Counters a shutter input keeps, for the log and the status.
public struct ShutterStatistics: Sendable, Equatable {
    public var edges = 0
    public var presses = 0
    public var longPresses = 0
    /// Pulses shorter than the glitch filter.
    public var glitches = 0
    /// Reads that returned a full batch: the kernel's event buffer may have overflowed.
    public var possibleOverflows = 0
    /// Deadlines at which the line's real level differed from the last event's (a merged or lost edge).
    public var resynchronisations = 0
    /// Presses dropped for coming sooner than the shortest interval after the last one from the same device.
    public var throttled = 0
}

/// The shutter button on a GPIO line: libgpiod both-edge events with kernel timestamps, debounced
/// by ``PressDetector`` on a thread of its own ("swiftwing-gpio").
///
/// The thread polls the line's event descriptor, a timerfd for the detector's next deadline (the
/// glitch filter, the release debounce, the long press) and an eventfd that `stop()` signals.
public final class GPIOShutter: ShutterInput {
    public let spec: GPIOLineSpec
    public let timing: PressTiming
    private let logger: Logger
    private let stats = Mutex(ShutterStatistics())
    private let running = Mutex<PollLoopThread?>(nil)

    private let realtimePriority: RealtimePriority?

    public init(
        spec: GPIOLineSpec, timing: PressTiming = PressTiming(), realtimePriority: RealtimePriority? = nil,
        logger: Logger = Logger(label: "shutter")
    ) {
        self.spec = spec
        self.realtimePriority = realtimePriority
        self.timing = timing
        self.logger = logger
    }

    public var name: String { "GPIO line \(spec.line) of \(spec.chip)" }

    public var statistics: ShutterStatistics { stats.withLock { $0 } }

    /// Requests the line (throws ``GPIOError`` with the fix when it cannot) and starts the thread.
    public func start(_ handler: @escaping @Sendable (ShutterEvent) -> Void) throws {
        let line = try GPIOInputLine(spec: spec)
        let timer = try DeadlineTimer()
        let held = (try? line.isActive()) ?? false
        logger.info(
            "shutter on GPIO",
            metadata: [
                "chip": "\(line.chipName) [\(line.chipLabel)]", "line": "\(spec.line)",
                "active_low": "\(spec.activeLow)",
                "bias": "\(spec.bias.rawValue)", "held_at_start": "\(held)",
            ])
        let thread = try PollLoopThread(name: "swiftwing-gpio", realtimePriority: realtimePriority) { [self] wake in
            run(line: line, wake: wake, timer: timer, handler: handler)
            line.release()
        }
        running.withLock { $0 = thread }
    }

    /// Wakes the loop and waits until it has released the line (milliseconds).
    public func stop() {
        running.withLock { $0.take() }?.stop()
    }

    /// Whether the loop got `SCHED_FIFO` (nil before it started).
    public var isRealtime: Bool? { running.withLock { $0?.isRealtime } }

    private func run(
        line: GPIOInputLine, wake: WakeEvent, timer: DeadlineTimer, handler: @Sendable (ShutterEvent) -> Void
    ) {
        var detector = PressDetector(timing: timing, source: .gpio)
        let lineFD = line.fileDescriptor
        if realtimePriority != nil, !DeviceThread.isCurrentThreadRealtime {
            logger.notice(
                "the GPIO shutter thread could not get SCHED_FIFO and runs at normal priority. Fix: LimitRTPRIO=10 in the systemd unit (or CAP_SYS_NICE)"
            )
        }
        func deliver(_ events: [ShutterEvent]) {
            for event in events {
                logger.trace("gpio \(event)")
                handler(event)
                stats.withLock {
                    switch event {
                    case .press: $0.presses += 1
                    case .longPress: $0.longPresses += 1
                    case .extendedHold: break
                    }
                }
            }
        }
        func readLine() -> Bool {
            do {
                let (edges, batchFull) = try line.readEdges()
                let readAt = MonotonicInstant.now()
                for edge in edges {
                    // Kernel stamp beside read time: the evidence for how late edges reach the loop.
                    logger.trace(
                        "gpio edge",
                        metadata: [
                            "active": "\(edge.active)", "at_ns": "\(edge.time.nanoseconds)",
                            "read_at_ns": "\(readAt.nanoseconds)",
                        ])
                    deliver(detector.edge(active: edge.active, at: edge.time))
                }
                stats.withLock {
                    $0.edges += edges.count
                    $0.glitches = detector.ignoredGlitches
                    if batchFull { $0.possibleOverflows += 1 }
                }
                if batchFull {
                    let message =
                        "GPIO events came faster than they were read (a full batch of \(GPIOInputLine.batchSize)): edges may "
                        + "have been lost in the kernel's buffer; libgpiod 1.6 (v1 uAPI) has no sequence numbers to prove it. "
                        + "A noisy line? Check the wiring and the pull-up"
                    logger.warning(
                        "\(message)",
                        metadata: ["line": "\(spec.line)"])
                }
                return true
            } catch {
                logger.error(
                    "the GPIO shutter stopped: \(error). Fix: check the chip is still there (gpiodetect); restart swiftwing"
                )
                return false
            }
        }
        while true {
            timer.arm(detector.nextDeadline)
            let ready: [Int32: Int16]
            do {
                ready = try waitReadable([lineFD, timer.fd, wake.descriptor])
            } catch {
                logger.error("the GPIO shutter stopped: \(error)")
                return
            }
            if ready[wake.descriptor] != nil { return }
            if ready[lineFD] != nil {
                guard readLine() else { return }
            }
            if ready[timer.fd] != nil {
                timer.drain()
                // An edge stamped before the deadline may be queued but unread: read it first.
                if let revents = try? waitReadable([lineFD], until: .now()), revents[lineFD] != nil {
                    guard readLine() else { return }
                }
                // The v1 uAPI reads the level in its IRQ thread, and changes that come faster than that
                // thread runs are merged: the settling edge of a bouncy contact can be missing. At each
                // deadline the line's real level is checked; a difference counts as an edge now.
                let now = MonotonicInstant.now()
                if detector.nextDeadline.map({ $0 <= now }) == true, let actual = try? line.isActive(),
                    actual != detector.level
                {
                    stats.withLock { $0.resynchronisations += 1 }
                    logger.trace("gpio resync", metadata: ["active": "\(actual)", "at_ns": "\(now.nanoseconds)"])
                    deliver(detector.edge(active: actual, at: now))
                    continue
                }
                deliver(detector.advance(to: now))
                stats.withLock { $0.glitches = detector.ignoredGlitches }
            }
        }
    }
}
