import Controls
import Foundation
import Logging
import SwiftWingCore
import Synchronization

/// The daemon's shutter inputs and press feedback, built from `[shutter]` and `[buzzer]`.
///
/// Nothing here stops the daemon: a line that cannot be requested or a buzzer that cannot be
/// driven is logged once with the fix, and the daemon runs on with what works (at the least the
/// control socket, `swiftwing shutter`).
final class ShutterControls: Sendable {
    let feedback: BuzzerFeedback
    private let player: PatternPlayer
    private let outputs: [GPIOOutputLine]
    private let inputs: [any ShutterInput]
    private let running = Mutex<[String]>([])
    /// The handler given to ``start(_:)``, for inputs started later by ``retryFailedInputs(clock:backoff:show:)``.
    private let handler = Mutex<(@Sendable (ShutterEvent) -> Void)?>(nil)
    private let logger: Logger

    /// `inputs` replaces the ones `configuration` names (tests).
    init(configuration: ApplianceConfiguration, logger: Logger, inputs replacement: [any ShutterInput]? = nil) {
        self.logger = logger
        let shutter = configuration.shutter
        let buzzer = configuration.buzzer
        let chip = buzzer.gpioChip.isEmpty ? shutter.gpioChip : buzzer.gpioChip
        func output(_ line: String, activeLow: Bool, what: String) -> GPIOOutputLine? {
            guard !line.isEmpty else { return nil }
            guard !chip.isEmpty else {
                logger.error(
                    "\(what) line \(line) is set but no GPIO chip: set buzzer.gpio_chip or shutter.gpio_chip",
                    metadata: ["device": "gpio line \(line)"])
                return nil
            }
            do {
                return try GPIOOutputLine(spec: GPIOLineSpec(chip: chip, line: line, activeLow: activeLow))
            } catch {
                logger.error("no \(what): \(error)", metadata: ["device": "\(chip) line \(line)"])
                return nil
            }
        }
        let buzzerLine = output(buzzer.gpioLine, activeLow: buzzer.activeLow, what: "buzzer")
        let lightLine = output(buzzer.lightLine, activeLow: buzzer.lightActiveLow, what: "light")
        outputs = [buzzerLine, lightLine].compactMap { $0 }
        let priority: RealtimePriority? =
            shutter.realtimePriority == 0 ? nil : RealtimePriority(shutter.realtimePriority)
        player = PatternPlayer(
            buzzer: buzzerLine ?? NoOutput(), light: lightLine, realtimePriority: priority,
            logger: Logger(label: "feedback"))
        feedback = BuzzerFeedback(
            player: player, lightMaximumNanoseconds: Int64(configuration.camera.captureTimeoutSeconds * 1e9))

        var inputs: [any ShutterInput] = []
        let longPress = shutter.longPressMilliseconds == 0 ? nil : shutter.longPressMilliseconds
        let extendedHold = Self.extendedHoldMilliseconds(configuration)
        if !shutter.gpioChip.isEmpty {
            let spec = GPIOLineSpec(
                chip: shutter.gpioChip, line: shutter.gpioLine, activeLow: shutter.activeLow,
                bias: LineBias(rawValue: shutter.bias) ?? .pullUp)
            let timing = PressTiming(
                glitchMilliseconds: shutter.glitchMilliseconds, debounceMilliseconds: shutter.debounceMilliseconds,
                longPressMilliseconds: longPress, extendedHoldMilliseconds: extendedHold)
            inputs.append(GPIOShutter(spec: spec, timing: timing, realtimePriority: priority, logger: logger))
        }
        let keys = (try? KeyCodes.parse(shutter.keys)) ?? []
        if !keys.isEmpty {
            inputs.append(
                KeyShutter(
                    directory: shutter.keyDirectory, keys: keys, longPressMilliseconds: longPress,
                    extendedHoldMilliseconds: extendedHold,
                    realtimePriority: priority,
                    allowList: KeyDeviceAllowList(parsing: shutter.keyDevices), logger: logger))
        }
        self.inputs = replacement ?? inputs
    }

    /// How long a hold pairs a browser: ``PairingDisplay/holdMilliseconds``, or 1 s past a long press set longer
    /// than that (so the two stay apart); nil while the library in a browser is off.
    static func extendedHoldMilliseconds(_ configuration: ApplianceConfiguration) -> Int? {
        guard configuration.web.enabled else { return nil }
        return max(PairingDisplay.holdMilliseconds, configuration.shutter.longPressMilliseconds + 1000)
    }

    /// The inputs that started, by name.
    var runningInputs: [String] { running.withLock { $0 } }

    func start(_ handler: @escaping @Sendable (ShutterEvent) -> Void) {
        do {
            try player.start()
        } catch {
            logger.error("the buzzer timer did not start: \(error); clicks still sound but patterns will not end")
        }
        self.handler.withLock { $0 = handler }
        for input in inputs {
            do {
                try input.start(handler)
                running.withLock { $0.append(input.name) }
            } catch {
                logger.error(
                    "shutter input off: \(error); trying again by itself", metadata: ["device": "\(input.name)"])
            }
        }
        if runningInputs.isEmpty {
            logger.notice("no shutter button or key device: presses come only through `swiftwing shutter`")
        }
    }

    /// The inputs that did not start (a GPIO chip not there yet, a line another program holds), with why.
    var failedInputs: [String] { inputs.map(\.name).filter { !runningInputs.contains($0) } }

    /// Starts again, 2 s doubling to 5 min apart, the inputs that did not start, until each has: a GPIO
    /// chip whose overlay loads late or a line another program releases needs no restart of the daemon.
    /// `show` puts each failure (title, what to do) on the panel. Returns when every input runs, or when
    /// the task is cancelled.
    func retryFailedInputs(
        clock: any Clock<Duration>, backoff: StartupRetry.Backoff = StartupRetry.Backoff(),
        show: @Sendable (String, String) -> Void
    ) async {
        var failures = 0
        while true {
            let missing = inputs.filter { !runningInputs.contains($0.name) }
            guard !missing.isEmpty, let handler = handler.withLock({ $0 }) else { return }
            failures += 1
            let delay = backoff.delay(afterFailures: failures)
            do {
                try await clock.sleep(for: delay)
            } catch {
                return
            }
            let next = backoff.delay(afterFailures: failures + 1).components.seconds
            for input in missing {
                do {
                    try input.start(handler)
                    running.withLock { $0.append(input.name) }
                    logger.notice("shutter input started after all", metadata: ["device": "\(input.name)"])
                } catch {
                    logger.warning(
                        "shutter input still off: \(error); trying again in \(next) s",
                        metadata: ["device": "\(input.name)"])
                    show("SHUTTER NOT FOUND", "\(error). Trying again by itself; `swiftwing shutter` still works.")
                }
            }
        }
    }

    func stop() {
        for input in inputs { input.stop() }
        player.stop()
        for output in outputs { output.release() }
    }
}
