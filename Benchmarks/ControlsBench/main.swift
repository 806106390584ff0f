// Press → buzzer-on latency on the in-process path. Goal: p99 < 2 ms.
//
// 1. "direct": the press detector, the feedback and the pattern player on one thread: from an edge
//    handed to the detector to the buzzer output's set call returning (the output does one write(2)
//    to /dev/null, standing in for the GPIO set ioctl).
// 2. "thread wake-up": as the GPIO shutter runs: a poll loop on a thread of its own, blocked in
//    poll(2), woken by a pipe carrying the edge's timestamp (taken just before the write, standing
//    in for the kernel's stamp), then detector → feedback → output. Adds the wake-up of a blocked
//    thread, which dominates on a real board.
// Both with the glitch filter at 0 (the press is the edge itself); with the default 8 ms filter the
// click comes 8 ms after the last edge by design, plus the timerfd wake-up measured in (3).
// 3. "timer": the timerfd wake-up lateness of the poll loop at a deadline.
//
// Run: swift run -c release ControlsBench [presses] [--realtime]
import CShim
import Controls
import Foundation
import SwiftWingCore
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// An output that costs one syscall, like `gpiod_line_set_value`'s ioctl.
final class SyscallOutput: DigitalOutput, @unchecked Sendable {
    let fd = open("/dev/null", O_WRONLY)
    var byte: UInt8 = 0
    func set(active: Bool) throws(SystemCallError) {
        byte = active ? 1 : 0
        _ = write(fd, &byte, 1)
    }
}

func report(_ name: String, _ nanoseconds: [Int64]) {
    let sorted = nanoseconds.sorted()
    func at(_ q: Double) -> Double { Double(sorted[min(sorted.count - 1, Int(Double(sorted.count) * q))]) / 1000 }
    print(
        String(
            format: "%-34@ n=%6d  p50 %8.1f µs  p99 %8.1f µs  p99.9 %8.1f µs  max %8.1f µs",
            name as NSString, sorted.count, at(0.5), at(0.99), at(0.999), Double(sorted.last!) / 1000))
}

/// The press is the edge itself and a release counts at once: every loop iteration is a new press.
let timing = PressTiming(glitchMilliseconds: 0, debounceMilliseconds: 0)
let presses = CommandLine.arguments.dropFirst().compactMap { Int($0) }.first ?? 10_000
print("ControlsBench: \(presses) presses per case, \(ProcessInfo.processInfo.activeProcessorCount) CPUs")

// 1. direct
do {
    let output = SyscallOutput()
    let feedback = BuzzerFeedback(player: PatternPlayer(buzzer: output))
    var detector = PressDetector(timing: timing, source: .gpio)
    var samples: [Int64] = []
    samples.reserveCapacity(presses)
    for _ in 0..<presses {
        let t0 = MonotonicInstant.now()
        for event in detector.edge(active: true, at: t0) {
            if case .press(let press) = event { feedback.pressAccepted(press) }
        }
        samples.append(MonotonicInstant.now().nanoseconds(since: t0))
        _ = detector.edge(active: false, at: t0.advanced(byNanoseconds: 1000))
        _ = detector.advance(to: MonotonicInstant.now())
    }
    report("direct (detector→feedback→set)", samples)
    let summary = feedback.latency.summary
    print(
        "  recorded by the daemon's histogram: p50 ≤ \(summary.p50Microseconds ?? 0) µs, p99 ≤ \(summary.p99Microseconds ?? 0) µs"
    )
}

// 2. thread wake-up
do {
    var fds: [Int32] = [0, 0]
    _ = pipe(&fds)
    let (readFD, writeFD) = (fds[0], fds[1])
    let output = SyscallOutput()
    let player = PatternPlayer(buzzer: output)
    try player.start()
    let feedback = BuzzerFeedback(player: player)
    let done = DispatchSemaphore(value: 0)
    let samples = Mutex<[Int64]>([])
    let realtime = CommandLine.arguments.contains("--realtime")
    // As the daemon's GPIO thread does (SCHED_FIFO 10, needs root or LimitRTPRIO): --realtime.
    let thread = DeviceThread(name: "bench-gpio", realtimePriority: realtime ? 10 : nil) {
        if realtime {
            print("  loop thread SCHED_FIFO: \(DeviceThread.isCurrentThreadRealtime ? "yes" : "no (not permitted)")")
        }
        var detector = PressDetector(timing: timing, source: .gpio)
        var stamp: UInt64 = 0
        while true {
            var pfd = pollfd(fd: readFD, events: Int16(POLLIN), revents: 0)
            _ = poll(&pfd, 1, -1)
            guard read(readFD, &stamp, 8) == 8, stamp != 0 else { break }
            let t0 = MonotonicInstant(nanoseconds: stamp)
            for event in detector.edge(active: true, at: t0) {
                if case .press(let press) = event { feedback.pressAccepted(press) }
            }
            let latency = MonotonicInstant.now().nanoseconds(since: t0)
            samples.withLock { $0.append(latency) }
            _ = detector.edge(active: false, at: t0.advanced(byNanoseconds: 1000))
            _ = detector.advance(to: MonotonicInstant.now())
            done.signal()
        }
    }
    for _ in 0..<presses {
        var stamp = MonotonicInstant.now().nanoseconds
        _ = write(writeFD, &stamp, 8)
        done.wait()
        usleep(200)  // presses are apart; the loop thread goes back to sleep in poll
    }
    var zero: UInt64 = 0
    _ = write(writeFD, &zero, 8)
    thread.join()
    player.stop()
    report("thread wake-up (write→poll→…→set)", samples.withLock { $0 })
    let summary = feedback.latency.summary
    print(
        "  recorded by the daemon's histogram: n=\(summary.count) p50 ≤ \(summary.p50Microseconds ?? 0) µs, p99 ≤ \(summary.p99Microseconds ?? 0) µs"
    )
}

// 3. timerfd lateness (the glitch-filter and debounce deadlines)
do {
    let timer = timerfd_create(CLOCK_MONOTONIC, Int32(TFD_CLOEXEC))
    var samples: [Int64] = []
    for _ in 0..<min(presses, 2000) {
        let deadline = MonotonicInstant.now().advanced(byNanoseconds: 2_000_000)
        _ = sw_timerfd_arm_absolute(timer, deadline.nanoseconds)
        var pfd = pollfd(fd: timer, events: Int16(POLLIN), revents: 0)
        _ = poll(&pfd, 1, -1)
        samples.append(MonotonicInstant.now().nanoseconds(since: deadline))
        var expirations: UInt64 = 0
        _ = read(timer, &expirations, 8)
    }
    report("timerfd deadline lateness", samples)
}
