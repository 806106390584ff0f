import Logging
import SwiftWingCore
import Synchronization

/// Where a finished picture goes.
public protocol PanelOutputSink: AnyObject {
    var width: Int { get }
    var height: Int { get }
    /// Shows `image`, of which only `damage` changed since the last call.
    func present(_ image: PanelImage, damage: [PanelRect]) throws(PanelError)
    /// A line for the log: what is being drawn to.
    var summary: String { get }
}

/// The panel on a Linux framebuffer: damaged rectangles are converted and copied into video memory.
public final class FramebufferSink: PanelOutputSink {
    public let device: FramebufferDevice
    private var first = true

    public init(device: FramebufferDevice) {
        self.device = device
    }

    public var width: Int { device.format.width }
    public var height: Int { device.format.height }
    public var summary: String { "\(device.path) (\(device.driverName), \(device.format))" }

    public func present(_ image: PanelImage, damage: [PanelRect]) throws(PanelError) {
        if first {
            device.clear()
            first = false
        }
        device.present(image, rects: damage)
    }
}

/// The panel as a PNG file, rewritten atomically on every change (development, tests, screenshots).
public final class PNGSink: PanelOutputSink {
    public let path: String
    public let width: Int
    public let height: Int

    public init(path: String, width: Int = 800, height: Int = 480) {
        self.path = path
        self.width = width
        self.height = height
    }

    public var summary: String { "\(path) (PNG, \(width)x\(height))" }

    public func present(_ image: PanelImage, damage: [PanelRect]) throws(PanelError) {
        try image.writePNG(to: path)
    }
}

/// The running status panel: holds the latest ``PanelModel``, and a thread of its own ("swiftwing-panel")
/// redraws it whenever it changes, at most `maximumFramesPerSecond` times a second, copying only
/// the changed rectangles to the output. Updates never block on drawing.
public final class StatusPanel: Sendable {
    /// At most this many redraws per second: 15.
    public static let defaultMaximumFramesPerSecond = 15
    /// How long a press's white flash stays up: 120 ms.
    public static let flashDuration = Duration.milliseconds(120)

    public struct Statistics: Sendable, Equatable {
        /// Frames drawn and presented.
        public var frames = 0
        /// Pixels copied to the output in total (damage area).
        public var pixelsPresented = 0
        /// Output errors (logged once per distinct message).
        public var errors = 0
    }

    private struct State {
        var model = PanelModel()
        var flashUntil: ErasedClock.Instant?
        /// A flash asked for and not drawn yet: it skips the frame limiter (it is the press feedback).
        var flashPending = false
        var dirty = true
        var stopped = false
        var statistics = Statistics()
    }

    private let state = Mutex(State())
    /// Wakes the panel thread's wait: a change, a flash, a stop.
    private let wake: WakeEvent
    private let minimumInterval: Duration
    /// Times flashes and the frame limit: the daemon's `ContinuousClock`, in tests a clock they advance.
    private let clock: ErasedClock
    private let logger: Logger
    /// The sink and renderer belong to the panel thread alone.
    private struct ThreadOwned: @unchecked Sendable {
        let sink: any PanelOutputSink
        let renderer: PanelRenderer
    }
    private let owned: ThreadOwned
    private let thread = Mutex<DeviceThread?>(nil)

    /// A panel drawing to `sink`. Call ``start()`` to begin drawing.
    public init(
        sink: any PanelOutputSink, maximumFramesPerSecond: Int = defaultMaximumFramesPerSecond,
        clock: any Clock<Duration> = ContinuousClock(), logger: Logger
    ) throws(PanelError) {
        owned = ThreadOwned(sink: sink, renderer: try PanelRenderer(width: sink.width, height: sink.height))
        do {
            wake = try WakeEvent()
        } catch {
            throw .system(error)
        }
        minimumInterval = .nanoseconds(1_000_000_000 / Int64(max(1, maximumFramesPerSecond)))
        self.clock = ErasedClock(clock)
        self.logger = logger
    }

    /// Opens the panel for `output` ("fb:/dev/fb0" → the framebuffer, "png:PATH" → a PNG file).
    /// A missing framebuffer throws ``PanelError/noFramebuffer(device:)``: the caller runs headless.
    public static func open(
        framebuffer path: String, clock: any Clock<Duration> = ContinuousClock(), logger: Logger
    ) throws(PanelError) -> StatusPanel {
        try StatusPanel(sink: FramebufferSink(device: FramebufferDevice(path: path)), clock: clock, logger: logger)
    }

    /// What the panel draws to.
    public var summary: String { owned.sink.summary }

    /// The model as last set.
    public var model: PanelModel { state.withLock { $0.model } }

    public var statistics: Statistics { state.withLock { $0.statistics } }

    /// Changes the model; the panel thread redraws what changed.
    public func update(_ body: (inout PanelModel) -> Void) {
        let changed = state.withLock { state in
            let before = state.model
            body(&state.model)
            if state.model != before { state.dirty = true }
            return state.dirty
        }
        if changed { signal() }
    }

    /// The white flash of a press: drawn at once (it does not wait for the frame limiter), for ``flashDuration``.
    public func flash() {
        state.withLock {
            $0.flashUntil = clock.now + Self.flashDuration
            $0.flashPending = true
            $0.dirty = true
        }
        signal()
    }

    private func signal() {
        wake.signal()
    }

    /// Waits on the panel thread until ``signal()`` or `timeout` seconds, whichever comes first: the
    /// same wait as the other device loops (an eventfd in `poll`, on `CLOCK_MONOTONIC`).
    private func waitForSignal(timeout: Double) {
        let nanoseconds = Int64((max(0, timeout) * 1e9).rounded(.up))
        _ = try? waitReadable([wake.descriptor], until: MonotonicInstant.now().advanced(byNanoseconds: nanoseconds))
        wake.drain()
    }

    /// Starts the panel thread.
    public func start() {
        let started = DeviceThread(name: "swiftwing-panel") { [self] in loop() }
        thread.withLock { $0 = started }
    }

    /// Stops the panel thread after its current frame and waits for it.
    public func stop() {
        state.withLock { $0.stopped = true }
        signal()
        thread.withLock { $0 }?.join()
    }

    private func loop() {
        var lastFrame: ErasedClock.Instant?
        var lastError: String?
        while true {
            // Wait for a change (or the end of a flash).
            let next: (model: PanelModel, flashEnds: ErasedClock.Instant?)? = {
                while true {
                    let (stopped, dirty, flashUntil) = state.withLock { ($0.stopped, $0.dirty, $0.flashUntil) }
                    if stopped { return nil }
                    let now = clock.now
                    let flashOver = flashUntil.map { $0 <= now } ?? false
                    if dirty || flashOver { break }
                    let timeout = flashUntil.map { ($0 - now).inSeconds } ?? 1
                    waitForSignal(timeout: max(0.001, timeout))
                }
                // At most one frame per minimumInterval, except the flash of a press, which also
                // cuts a wait short.
                while let lastFrame, clock.now < lastFrame + minimumInterval, !state.withLock({ $0.flashPending }) {
                    waitForSignal(timeout: (lastFrame + minimumInterval - clock.now).inSeconds)
                }
                return state.withLock { state in
                    state.dirty = false
                    let now = clock.now
                    if let until = state.flashUntil, until <= now { state.flashUntil = nil }
                    var model = state.model
                    // A flash is drawn at least once even when this thread was held up past its end;
                    // then the next frame takes it down.
                    model.flash = state.flashUntil != nil || state.flashPending
                    if state.flashPending && state.flashUntil == nil { state.dirty = true }
                    state.flashPending = false
                    return (model, state.flashUntil)
                }
            }()
            guard let next else { return }
            lastFrame = clock.now
            let damage = owned.renderer.render(next.model)
            guard !damage.isEmpty else { continue }
            do {
                try owned.sink.present(owned.renderer.image, damage: damage)
                lastError = nil
                state.withLock {
                    $0.statistics.frames += 1
                    $0.statistics.pixelsPresented += damage.reduce(0) { $0 + $1.area }
                }
            } catch {
                state.withLock { $0.statistics.errors += 1 }
                if lastError != error.description {
                    logger.error("panel output failed", metadata: ["error": "\(error)"])
                    lastError = error.description
                }
            }
        }
    }
}
