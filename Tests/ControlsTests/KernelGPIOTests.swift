import Controls
import Foundation
import SwiftWingCore
import SwiftWingTesting
import Synchronization
import Testing

/// The GPIO layer against the real kernel: libgpiod 1.6 on a gpio-sim chip in the VM rig's guest
/// (`Tests/VMRig/shutter-gpio.sh` creates the chip and sets these variables). Skipped elsewhere.
enum GPIOSim {
    static let environment = ProcessInfo.processInfo.environment
    /// The chip's label, e.g. `pinctrl-bcm2835`.
    static let label = environment["SWIFTWING_GPIOSIM_LABEL"]
    /// The chip's device name, e.g. `gpiochip0`.
    static let chipName = environment["SWIFTWING_GPIOSIM_CHIP"]
    /// sysfs directory of the SHUTTER line's controls (`…/sim_gpio0`), holding `pull` and `value`.
    static let shutterControls = environment["SWIFTWING_GPIOSIM_SHUTTER"]
    /// sysfs directory of the BUZZER line's controls.
    static let buzzerControls = environment["SWIFTWING_GPIOSIM_BUZZER"]
    static var available: Bool { label != nil && shutterControls != nil && buzzerControls != nil }

    /// Presses (pull-down: the line reads low, active with active-low) or releases the simulated button.
    static func button(pressed: Bool) {
        let path = shutterControls! + "/pull"
        let fd = open(path, O_WRONLY)
        precondition(fd >= 0, "open \(path): \(errno)")
        let text = pressed ? "pull-down" : "pull-up"
        _ = text.withCString { write(fd, $0, strlen($0)) }
        close(fd)
    }

    static func buzzerLevel() -> String {
        (try? String(contentsOfFile: buzzerControls! + "/value", encoding: .utf8))?.trimmingCharacters(
            in: .whitespacesAndNewlines) ?? "?"
    }

    /// Real time between the simulator's edges: the kernel stamps them, and debounce and long press read the stamps.
    static func sleep(ms: Double) { usleep(UInt32(ms * 1000)) }

    static var shutter: GPIOLineSpec { GPIOLineSpec(chip: label!, line: "SHUTTER", activeLow: true, bias: .pullUp) }
    static var buzzer: GPIOLineSpec { GPIOLineSpec(chip: label!, line: "BUZZER", activeLow: false) }
}

@Suite(
    .serialized,
    .enabled(if: GPIOSim.available, "needs a gpio-sim chip: runs in the VM rig (Tests/VMRig/gpio-kernel.sh)"))
struct KernelGPIOTests {
    @Test func theChipIsFoundByLabelAndByNameAndLinesByNameAndOffset() throws {
        let byLabel = try GPIOInputLine(spec: GPIOSim.shutter)
        #expect(byLabel.chipName == GPIOSim.chipName)
        byLabel.release()
        let byName = try GPIOInputLine(
            spec: GPIOLineSpec(chip: GPIOSim.chipName!, line: "0", activeLow: true, bias: .pullUp))
        #expect(byName.chipLabel == GPIOSim.label)
        byName.release()
    }

    @Test func aMissingLineAndABusyLineAreTypedErrors() throws {
        #expect {
            _ = try GPIOInputLine(spec: GPIOLineSpec(chip: GPIOSim.label!, line: "NO_SUCH_LINE", activeLow: true))
        } throws: { error in
            guard let error = error as? GPIOError, case .lineNotFound = error.kind else { return false }
            return error.description.contains(GPIOSim.chipName!)
        }
        let held = try GPIOInputLine(spec: GPIOSim.shutter)
        defer { held.release() }
        #expect {
            _ = try GPIOInputLine(spec: GPIOSim.shutter, consumer: "second")
        } throws: { error in
            guard let error = error as? GPIOError, case .busy(let consumer) = error.kind else { return false }
            return consumer == "swiftwing" && error.description.contains("SHUTTER")
        }
    }

    @Test func edgesCarryMonotonicKernelTimestamps() throws {
        let line = try GPIOInputLine(spec: GPIOSim.shutter)
        defer { line.release() }
        let before = MonotonicInstant.now()
        GPIOSim.button(pressed: true)
        GPIOSim.sleep(ms: 20)
        GPIOSim.button(pressed: false)
        let after = MonotonicInstant.now()
        var edges: [GPIOEdge] = []
        for _ in 0..<50 where edges.count < 2 {
            var fds = [pollfd(fd: line.fileDescriptor, events: Int16(POLLIN), revents: 0)]
            if poll(&fds, 1, 100) > 0 { edges += try line.readEdges().edges }
        }
        #expect(edges.map(\.active) == [true, false])
        #expect(
            edges.allSatisfy { $0.time >= before && $0.time <= after },
            "stamps \(edges.map(\.time)) outside \(before)…\(after)")
        #expect(EventClock.realtimeStampsConverted == 0, "the kernel stamped v1 events with CLOCK_REALTIME")
    }

    @Test func oneCleanPressIsOnePressStampedWithTheEdge() async throws {
        let shutter = GPIOShutter(spec: GPIOSim.shutter)
        let log = EventLog()
        try shutter.start(log.handler)
        defer { shutter.stop() }
        GPIOSim.sleep(ms: 50)
        let before = MonotonicInstant.now()
        GPIOSim.button(pressed: true)
        GPIOSim.sleep(ms: 100)
        GPIOSim.button(pressed: false)
        await log.wait(for: 1)
        GPIOSim.sleep(ms: 100)
        #expect(log.presses == 1)
        if case .press(let press)? = log.all.first {
            #expect(press.time >= before && press.source == .gpio)
        }
    }

    @Test func bouncyContactsAreOnePress() async throws {
        let shutter = GPIOShutter(spec: GPIOSim.shutter)
        let log = EventLog()
        try shutter.start(log.handler)
        defer { shutter.stop() }
        GPIOSim.sleep(ms: 50)
        for pressed in [true, false, true, false, true, false, true] { GPIOSim.button(pressed: pressed) }
        GPIOSim.sleep(ms: 100)
        for pressed in [false, true, false, true, false] { GPIOSim.button(pressed: pressed) }
        GPIOSim.sleep(ms: 200)
        #expect(log.presses == 1)
        #expect(shutter.statistics.edges >= 2)  // gpio-sim under TCG merges changes faster than its IRQ thread
    }

    @Test func aHeldButtonIsOnePressAndOneLongPress() async throws {
        let shutter = GPIOShutter(spec: GPIOSim.shutter, timing: PressTiming(longPressMilliseconds: 1000))
        let log = EventLog()
        try shutter.start(log.handler)
        defer { shutter.stop() }
        GPIOSim.sleep(ms: 50)
        GPIOSim.button(pressed: true)
        GPIOSim.sleep(ms: 2500)
        GPIOSim.button(pressed: false)
        GPIOSim.sleep(ms: 100)
        #expect(log.presses == 1)
        #expect(log.longPresses == 1)
    }

    @Test func twentyQuickPressesAreTwentyPresses() async throws {
        let shutter = GPIOShutter(spec: GPIOSim.shutter)
        let log = EventLog()
        try shutter.start(log.handler)
        defer { shutter.stop() }
        GPIOSim.sleep(ms: 50)
        for _ in 0..<20 {
            GPIOSim.button(pressed: true)
            GPIOSim.sleep(ms: 40)
            GPIOSim.button(pressed: false)
            GPIOSim.sleep(ms: 60)
        }
        await log.wait(for: 20)
        GPIOSim.sleep(ms: 100)
        #expect(log.presses == 20)
        #expect(shutter.statistics.possibleOverflows == 0)
    }

    @Test func stopIsPromptAndGivesTheLineBack() async throws {
        let shutter = GPIOShutter(spec: GPIOSim.shutter)
        try shutter.start(EventLog().handler)
        GPIOSim.sleep(ms: 50)
        let stopped = Date()
        shutter.stop()
        var again: GPIOInputLine?
        while again == nil, Date().timeIntervalSince(stopped) < 2 {
            again = try? GPIOInputLine(spec: GPIOSim.shutter)
            if again == nil { GPIOSim.sleep(ms: 2) }
        }
        #expect(again != nil)
        #expect(Date().timeIntervalSince(stopped) < 0.5)
        again?.release()
    }

    @Test func theBuzzerLineFollowsThePatternAndActiveLowInverts() async throws {
        let buzzer = try GPIOOutputLine(spec: GPIOSim.buzzer)
        #expect(GPIOSim.buzzerLevel() == "0")
        let player = PatternPlayer(buzzer: buzzer)
        try player.start()
        player.play(.error)  // 600 ms on
        GPIOSim.sleep(ms: 100)
        #expect(GPIOSim.buzzerLevel() == "1")
        GPIOSim.sleep(ms: 700)
        #expect(GPIOSim.buzzerLevel() == "0")
        player.stop()
        buzzer.release()

        let inverted = try GPIOOutputLine(spec: GPIOLineSpec(chip: GPIOSim.label!, line: "BUZZER", activeLow: true))
        #expect(GPIOSim.buzzerLevel() == "1")  // inactive = high
        try inverted.set(active: true)
        #expect(GPIOSim.buzzerLevel() == "0")
        inverted.release()
    }

    @Test func aHeldPressSoundsTheClickThenTheLongPressPatternOnTheBuzzerLine() async throws {
        let buzzer = try GPIOOutputLine(spec: GPIOSim.buzzer)
        defer { buzzer.release() }
        let player = PatternPlayer(buzzer: buzzer)
        try player.start()
        defer { player.stop() }
        let feedback = BuzzerFeedback(player: player)
        let shutter = GPIOShutter(spec: GPIOSim.shutter, timing: PressTiming(longPressMilliseconds: 1000))
        try shutter.start { event in
            switch event {
            case .press(let press): feedback.pressAccepted(press)
            case .longPress(let press): feedback.longPress(press)
            case .extendedHold: break
            }
        }
        defer { shutter.stop() }
        GPIOSim.sleep(ms: 50)
        let start = Date()
        GPIOSim.button(pressed: true)
        // Sample the line as the outside world sees it (sysfs) for 2 s.
        var timeline: [(Double, String)] = []
        while Date().timeIntervalSince(start) < 2 {
            let level = GPIOSim.buzzerLevel()
            if timeline.last?.1 != level { timeline.append((Date().timeIntervalSince(start) * 1000, level)) }
            GPIOSim.sleep(ms: 5)
        }
        GPIOSim.button(pressed: false)
        print("BUZZER while held: " + timeline.map { String(format: "%.0fms=%@", $0.0, $0.1) }.joined(separator: " "))
        // The long-press pattern's 200 ms on-phases start ~1 s after the press.
        let lateOns = timeline.filter { $0.1 == "1" && $0.0 > 900 }
        #expect(lateOns.count == 2, "two on-phases of the long-press pattern after 0.9 s")
        #expect(GPIOSim.buzzerLevel() == "0")
    }

    @Test func pressToBuzzerOnTheRealLinesIsRecorded() async throws {
        // The whole in-process path on real lines: kernel edge → detector → feedback → buzzer ioctl.
        let buzzer = try GPIOOutputLine(spec: GPIOSim.buzzer)
        defer { buzzer.release() }
        let player = PatternPlayer(buzzer: buzzer)
        try player.start()
        defer { player.stop() }
        let feedback = BuzzerFeedback(player: player)
        let shutter = GPIOShutter(spec: GPIOSim.shutter, timing: PressTiming(glitchMilliseconds: 0))
        let log = EventLog()
        try shutter.start { event in
            if case .press(let press) = event { feedback.pressAccepted(press) }
            log.handler(event)
        }
        defer { shutter.stop() }
        GPIOSim.sleep(ms: 50)
        for _ in 0..<10 {
            GPIOSim.button(pressed: true)
            GPIOSim.sleep(ms: 40)
            GPIOSim.button(pressed: false)
            GPIOSim.sleep(ms: 60)
        }
        await log.wait(for: 10)
        let summary = feedback.latency.summary
        #expect(summary.count == 10)
        print(
            "gpio-sim press→buzzer (glitch filter 0, under QEMU TCG): p50 \(summary.p50Microseconds ?? -1) µs, "
                + "p99 \(summary.p99Microseconds ?? -1) µs, max \(summary.maxMicroseconds ?? -1) µs")
    }
}
