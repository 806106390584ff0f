// PanelBench: what a panel frame costs, against a plain memcpy of the framebuffer as the floor.
//   swift build -c release --product PanelBench && .build/release/PanelBench [--seconds 3]
// Full redraw = render every region + convert/copy the whole screen; damage-only = one change
// (a count in the top bar, or a new viewfinder frame) rendered and only its rectangle copied.
// Last: the CPU share of the idle viewfinder at 10 frames/s through StatusPanel (getrusage).
import Glibc
import Imaging
import Logging
import Panel
import SwiftWingCore
import Synchronization

/// Prints a line unbuffered (progress shows even when piped).
func say(_ text: String) {
    var line = text + "\n"
    line.withUTF8 { _ = write(1, $0.baseAddress, $0.count) }
}

func now() -> Double {
    var t = timespec()
    clock_gettime(CLOCK_MONOTONIC, &t)
    return Double(t.tv_sec) + Double(t.tv_nsec) / 1e9
}

/// Median milliseconds of `body` over enough runs to fill ~0.3 s (at least 5).
func measure(_ body: () -> Void) -> Double {
    body()
    var samples: [Double] = []
    let start = now()
    while samples.count < 5 || (now() - start < 0.3 && samples.count < 2000) {
        let t0 = now()
        body()
        samples.append((now() - t0) * 1000)
    }
    samples.sort()
    return samples[samples.count / 2]
}

func pad(_ text: String, _ width: Int) -> String {
    text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
}

func fmt(_ value: Double, _ digits: Int = 3) -> String {
    var scale = 1.0
    for _ in 0..<digits { scale *= 10 }
    let scaled = Int((value * scale).rounded())
    let whole = scaled / Int(scale)
    let fraction = abs(scaled % Int(scale))
    guard digits > 0 else { return "\(whole)" }
    let digitsText = String(fraction)
    return "\(whole)." + String(repeating: "0", count: digits - digitsText.count) + digitsText
}

say("PanelBench: median ms per frame; ratio = time / memcpy of the framebuffer (same run)")
say(
    pad("size", 11) + pad("format", 10) + pad("memcpy", 9) + pad("full", 17) + pad("damage: count", 20)
        + "damage: viewfinder")
for (width, height) in [(800, 480), (1920, 1080)] {
    for name in ["rgb565", "xrgb8888"] {
        let format: FramebufferFormat =
            name == "rgb565" ? .rgb565(width: width, height: height) : .xrgb8888(width: width, height: height)
        let source = UnsafeMutableRawPointer.allocate(byteCount: format.byteCount, alignment: 64)
        let framebuffer = UnsafeMutableRawPointer.allocate(byteCount: format.byteCount, alignment: 64)
        memset(source, 0x55, format.byteCount)
        let floor = measure { memcpy(framebuffer, source, format.byteCount) }

        let renderer = try! PanelRenderer(width: width, height: height)
        var model = PanelSamples.working
        let full = measure {
            renderer.invalidate()
            let damage = renderer.render(model)
            PixelCopier.copy(renderer.image, rects: damage, to: framebuffer, format: format)
        }
        let countDamage = measure {
            model.queued += 1
            let damage = renderer.render(model)
            PixelCopier.copy(renderer.image, rects: damage, to: framebuffer, format: format)
        }
        // Viewfinder frames as the daemon hands them over: 320x240, downscaled from the camera.
        let frames = (0..<4).map { PanelSamples.shelf(seed: $0 + 1, width: 320, height: 240, sequence: UInt32($0)) }
        var index = 0
        let viewfinderDamage = measure {
            index += 1
            model.viewfinder = frames[index % frames.count]
            let damage = renderer.render(model)
            PixelCopier.copy(renderer.image, rects: damage, to: framebuffer, format: format)
        }
        func cell(_ ms: Double) -> String { "\(fmt(ms)) (\(fmt(ms / floor, 1))x)" }
        say(
            pad("\(width)x\(height)", 11) + pad(name, 10) + pad(fmt(floor), 9) + pad(cell(full), 17)
                + pad(cell(countDamage), 20)
                + cell(viewfinderDamage))
        source.deallocate()
        framebuffer.deallocate()
    }
}

/// A framebuffer in memory: what FramebufferSink does, minus the device.
final class MemorySink: PanelOutputSink {
    let width: Int, height: Int
    let format: FramebufferFormat
    let memory: UnsafeMutableRawPointer
    var summary: String { "memory \(format)" }
    init(format: FramebufferFormat) {
        self.format = format
        width = format.width
        height = format.height
        memory = .allocate(byteCount: format.byteCount, alignment: 64)
    }
    func present(_ image: PanelImage, damage: [PanelRect]) throws(PanelError) {
        PixelCopier.copy(image, rects: damage, to: memory, format: format)
    }
}

func cpuSeconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(
        usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
}

var seconds = 3.0
if let index = CommandLine.arguments.firstIndex(of: "--seconds"), index + 1 < CommandLine.arguments.count {
    seconds = Double(CommandLine.arguments[index + 1]) ?? 3
}
say("\nIdle viewfinder at 10 frames/s through StatusPanel for \(fmt(seconds, 0)) s (320x240 frames, getrusage;")
say("'+ downscale' also shrinks a 1920x1080 camera frame to 320 px per tick, as the daemon's PanelFeeder does):")
let cameraFrame = PanelSamples.shelf(seed: 3, width: 1920, height: 1080).frame
for (width, height, downscale) in [(800, 480, false), (1920, 1080, false), (800, 480, true)] {
    for name in ["rgb565", "xrgb8888"] {
        let format: FramebufferFormat =
            name == "rgb565" ? .rgb565(width: width, height: height) : .xrgb8888(width: width, height: height)
        let panel = try! StatusPanel(sink: MemorySink(format: format), logger: Logger(label: "bench"))
        panel.update { $0 = PanelSamples.working }
        panel.start()
        usleep(200_000)
        let frames = (0..<4).map {
            PanelSamples.shelf(seed: $0 + 1, width: 320, height: 240, sequence: UInt32($0 + 10))
        }
        let startFrames = panel.statistics.frames
        let cpu0 = cpuSeconds()
        let wall0 = now()
        var i = 0
        while now() - wall0 < seconds {
            var frame = frames[i % frames.count]
            if downscale {
                var copy = cameraFrame
                copy.sequence = UInt32(i)
                frame = PanelPicture(try! YUV420Scaler().downscaled(copy, maxLongEdge: 320))
            }
            let picture = frame
            panel.update { $0.viewfinder = picture }
            i += 1
            usleep(100_000)
        }
        let cpu = cpuSeconds() - cpu0
        let wall = now() - wall0
        let drawn = panel.statistics.frames - startFrames
        panel.stop()
        say(
            "  \(pad("\(width)x\(height)", 10)) \(pad(name + (downscale ? " + downscale" : ""), 20)) \(drawn) frames in \(fmt(wall, 1)) s: CPU \(fmt(cpu * 1000 / Double(max(drawn, 1)), 2)) ms/frame, "
                + "\(fmt(100 * cpu / wall, 1)) % of one core")
    }
}

/// Records when the flash (a white centre) reached the framebuffer.
final class FlashSink: PanelOutputSink {
    let memory: MemorySink
    var width: Int { memory.width }
    var height: Int { memory.height }
    var summary: String { memory.summary }
    let flashedAt = Mutex<Double?>(nil)
    init(format: FramebufferFormat) { memory = MemorySink(format: format) }
    func present(_ image: PanelImage, damage: [PanelRect]) throws(PanelError) {
        try memory.present(image, damage: damage)
        if image.pixel(x: width / 2, y: height / 2) == .white { flashedAt.withLock { if $0 == nil { $0 = now() } } }
    }
}

say(
    "\nPress → flash in framebuffer memory (StatusPanel.flash() to the end of the copy), 40 presses while the viewfinder runs:"
)
for (width, height) in [(800, 480), (1920, 1080)] {
    let format = FramebufferFormat.rgb565(width: width, height: height)
    let sink = FlashSink(format: format)
    let panel = try! StatusPanel(sink: sink, logger: Logger(label: "bench"))
    panel.update { $0 = PanelSamples.working }
    panel.start()
    usleep(200_000)
    var latencies: [Double] = []
    for press in 0..<40 {
        panel.update {
            $0.viewfinder = PanelSamples.shelf(seed: press % 4 + 1, width: 320, height: 240, sequence: UInt32(press))
        }
        usleep(UInt32(20_000 + (press * 7919) % 50_000))  // land anywhere in the frame interval
        sink.flashedAt.withLock { $0 = nil }
        let t0 = now()
        panel.flash()
        let deadline = t0 + 2
        while sink.flashedAt.withLock({ $0 }) == nil && now() < deadline { usleep(200) }
        guard sink.flashedAt.withLock({ $0 }) != nil else {
            say("  flash \(press) never reached the framebuffer (2 s): a bug")
            exit(1)
        }
        latencies.append((sink.flashedAt.withLock { $0 }! - t0) * 1000)
        usleep(200_000)
    }
    panel.stop()
    latencies.sort()
    say(
        "  \(pad("\(width)x\(height)", 10)) rgb565: p50 \(fmt(latencies[latencies.count / 2], 2)) ms, p99 \(fmt(latencies[latencies.count * 99 / 100], 2)) ms, max \(fmt(latencies.last!, 2)) ms"
    )
}
