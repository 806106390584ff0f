// SwiftWingBench: what one shutter press costs on this machine, stage by stage, against
// libjpeg-turbo's own encoder (TurboJPEG) as the floor. `swift run -c release SwiftWingBench
// [--quick] [--iterations N] [--fixture PATH]`. Method and figures: Benchmarks/README.md.
import CTurboJPEG
import Imaging
import SwiftWingCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

// MARK: - Options

struct Options {
    var iterations = 30
    var fixture: String?

    static func parse(_ commandLine: [String]) -> Options {
        var options = Options()
        var arguments = commandLine.dropFirst()
        while let argument = arguments.popFirst() {
            switch argument {
            case "--quick": options.iterations = 5
            case "--iterations": options.iterations = max(1, Int(arguments.popFirst() ?? "") ?? options.iterations)
            case "--fixture": options.fixture = arguments.popFirst()
            default:
                print("usage: SwiftWingBench [--quick] [--iterations N] [--fixture PATH/TO/one_shelf.jpg]")
                exit(argument == "--help" || argument == "-h" ? 0 : 2)
            }
        }
        return options
    }
}

func findFixture(_ fixture: String?) -> String? {
    let shipped = ShippedFiles.folder("shelves").map { $0 + "/one_shelf.jpg" }
    return [fixture, shipped].compactMap { $0 }.first { access($0, R_OK) == 0 }
}

// MARK: - Measuring

struct Stats {
    var samples: [Double]  // wall-clock milliseconds
    var cpuSamples: [Double] = []  // this thread's CPU milliseconds (less disturbed by other load)
    var median: Double { percentile(0.5) }
    var cpuMedian: Double { cpuSamples.sorted()[cpuSamples.count / 2] }
    /// The fastest run: the cost with the least interference from other processes.
    var minimum: Double { samples.min() ?? 0 }
    var p90: Double { percentile(0.9) }
    func percentile(_ p: Double) -> Double {
        let sorted = samples.sorted()
        let rank = Int((p * Double(sorted.count - 1)).rounded(.up))
        return sorted[min(rank, sorted.count - 1)]
    }
}

/// Runs `body` `warmUp` times unmeasured, then `count` times measured.
func measure(_ count: Int, warmUp: Int = 2, _ body: () throws -> Void) rethrows -> Stats {
    for _ in 0..<warmUp { try body() }
    var samples: [Double] = []
    var cpuSamples: [Double] = []
    for _ in 0..<count {
        let cpuStart = threadCPUTime()
        let start = MonotonicInstant.now()
        try body()
        samples.append(Double(MonotonicInstant.now().nanoseconds(since: start)) / 1e6)
        cpuSamples.append(Double(threadCPUTime() - cpuStart) / 1e6)
    }
    return Stats(samples: samples, cpuSamples: cpuSamples)
}

/// Measures `first` and `second` alternately, so load from other processes hits both alike and
/// their ratio stays meaningful on a shared machine.
func measurePair(_ count: Int, warmUp: Int = 2, _ first: () throws -> Void, _ second: () throws -> Void) rethrows
    -> (Stats, Stats)
{
    var a = Stats(samples: [])
    var b = Stats(samples: [])
    for _ in 0..<warmUp {
        try first()
        try second()
    }
    for _ in 0..<count {
        let one = try measure(1, warmUp: 0, first)
        let two = try measure(1, warmUp: 0, second)
        a.samples += one.samples
        a.cpuSamples += one.cpuSamples
        b.samples += two.samples
        b.cpuSamples += two.cpuSamples
    }
    return (a, b)
}

/// Nanoseconds of CPU this thread has used. The corresponding C function is `clock_gettime`.
func threadCPUTime() -> Int64 {
    var ts = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
    return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
}

func ms(_ value: Double) -> String {
    let rounded = (value * 100).rounded() / 100
    return value >= 100 ? String(Int(value.rounded())) : String(rounded)
}

func ratio(_ a: Double, _ b: Double) -> String { String((a / b * 100).rounded() / 100) }

// MARK: - The durable write (as the spool does it: tmp, fsync, rename, fsync dir)

struct BenchFailure: Error, CustomStringConvertible {
    var description: String
}

func durableWrite(_ bytes: UnsafeRawBufferPointer, folder: String, name: String) throws {
    let temporary = folder + "/." + name + ".tmp"
    let final = folder + "/" + name
    let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
    guard fd >= 0 else { throw BenchFailure(description: "open \(temporary): errno \(errno)") }
    var done = 0
    while done < bytes.count {
        let count = write(fd, bytes.baseAddress! + done, bytes.count - done)
        if count < 0 && errno == EINTR { continue }
        guard count > 0 else {
            close(fd)
            throw BenchFailure(description: "write: errno \(errno)")
        }
        done += count
    }
    guard fsync(fd) == 0 else {
        close(fd)
        throw BenchFailure(description: "fsync: errno \(errno)")
    }
    close(fd)
    guard rename(temporary, final) == 0 else { throw BenchFailure(description: "rename: errno \(errno)") }
    let dir = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    guard dir >= 0 else { throw BenchFailure(description: "open dir: errno \(errno)") }
    defer { close(dir) }
    guard fsync(dir) == 0 else { throw BenchFailure(description: "fsync dir: errno \(errno)") }
}

// MARK: - The floor: TurboJPEG's encoder on the same planes

final class TurboEncoder {
    let handle: tjhandle
    var buffer: UnsafeMutablePointer<UInt8>
    var capacity: UInt

    init(width: Int, height: Int) {
        handle = tjInitCompress()
        capacity = tjBufSize(Int32(width), Int32(height), Int32(TJSAMP_420.rawValue))
        buffer = tjAlloc(Int32(capacity))
    }

    deinit {
        tjFree(buffer)
        tjDestroy(handle)
    }

    /// Encodes `frame` at `quality`; returns the JPEG's size. Accurate DCT unless `fast`.
    func encode(_ frame: YUV420Frame, quality: Int, fast: Bool = false) throws -> Int {
        let layout = frame.layout
        let base = UnsafePointer(frame.buffer.bytes.baseAddress!.assumingMemoryBound(to: UInt8.self))
        var planes: [UnsafePointer<UInt8>?] = [base, base + layout.cbOffset, base + layout.crOffset]
        var strides: [Int32] = [Int32(layout.lumaStride), Int32(layout.chromaStride), Int32(layout.chromaStride)]
        var size = capacity
        var output: UnsafeMutablePointer<UInt8>? = buffer
        let flags = TJFLAG_NOREALLOC | (fast ? TJFLAG_FASTDCT : TJFLAG_ACCURATEDCT)
        let status = planes.withUnsafeMutableBufferPointer { planes in
            tjCompressFromYUVPlanes(
                handle, planes.baseAddress, Int32(layout.width), &strides, Int32(layout.height),
                Int32(TJSAMP_420.rawValue), &output, &size, Int32(quality), Int32(flags))
        }
        guard status == 0 else { throw BenchFailure(description: String(cString: tjGetErrorStr2(handle))) }
        return Int(size)
    }
}

// MARK: - A naive reference scaler: per output sample, Double coverage over the source area

func naiveDownscale(_ frame: YUV420Frame, width: Int, height: Int) -> YUV420Frame {
    let output = YUV420Frame(layout: YUV420Layout(width: width, height: height))
    let source = frame.layout
    let target = output.layout
    func plane(_ src: Int, _ sw: Int, _ sh: Int, _ sstride: Int, _ dst: Int, _ dw: Int, _ dh: Int, _ dstride: Int) {
        let sx = Double(sw) / Double(dw)
        let sy = Double(sh) / Double(dh)
        for y in 0..<dh {
            let y0 = Double(y) * sy
            let y1 = y0 + sy
            for x in 0..<dw {
                let x0 = Double(x) * sx
                let x1 = x0 + sx
                var sum = 0.0
                var j = Int(y0)
                while Double(j) < y1 && j < sh {
                    let cy = min(Double(j + 1), y1) - max(Double(j), y0)
                    var i = Int(x0)
                    while Double(i) < x1 && i < sw {
                        let cx = min(Double(i + 1), x1) - max(Double(i), x0)
                        sum += cx * cy * Double(frame.buffer.bytes[src + j * sstride + i])
                        i += 1
                    }
                    j += 1
                }
                output.buffer.bytes[dst + y * dstride + x] = UInt8((sum / (sx * sy)).rounded())
            }
        }
    }
    plane(0, source.width, source.height, source.lumaStride, 0, width, height, target.lumaStride)
    for (s, d) in [(source.cbOffset, target.cbOffset), (source.crOffset, target.crOffset)] {
        plane(
            s, source.chromaWidth, source.chromaHeight, source.chromaStride,
            d, target.chromaWidth, target.chromaHeight, target.chromaStride)
    }
    return output
}

func maximumDifference(_ a: YUV420Frame, _ b: YUV420Frame) -> Int {
    var worst = 0
    for y in 0..<a.height {
        for x in 0..<a.width {
            worst = max(
                worst,
                abs(
                    Int(a.buffer.bytes[y * a.layout.lumaStride + x])
                        - Int(b.buffer.bytes[y * b.layout.lumaStride + x])))
        }
    }
    return worst
}

// MARK: - The run

func cpuModel() -> String {
    guard let file = fopen("/proc/cpuinfo", "r") else { return "unknown" }
    defer { fclose(file) }
    var line = [CChar](repeating: 0, count: 512)
    while fgets(&line, Int32(line.count), file) != nil {
        let text = line.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        if text.hasPrefix("model name") || text.hasPrefix("Model") {
            return text.split(separator: ":", maxSplits: 1).last.map { String($0.drop { $0 == " " }.dropLast()) }
                ?? text
        }
    }
    return "unknown"
}

func run(_ options: Options) throws {
    let iterations = options.iterations
    guard let path = findFixture(options.fixture) else {
        throw BenchFailure(
            description: "one_shelf.jpg not found in Fixtures/shelves: set SWIFTWING_DATA_DIR or pass --fixture PATH")
    }
    var folderTemplate = Array("/tmp/swiftwing-bench-XXXXXX".utf8CString)
    guard let folderPointer = mkdtemp(&folderTemplate) else { throw BenchFailure(description: "mkdtemp failed") }
    let folder = String(cString: folderPointer)
    defer {
        unlink(folder + "/scan.jpg")
        unlink(folder + "/floor.jpg")
        rmdir(folder)
    }

    print(
        "SwiftWingBench: \(iterations) iterations after 2 warm-ups; nproc \(sysconf(Int32(_SC_NPROCESSORS_ONLN))), "
            + "CPU \(cpuModel()); fixture \(path); spool dir \(folder)\n")
    let decoder = JPEGDecoder()
    let scaler = YUV420Scaler()
    let encoder = try JPEGEncoder(quality: 85)
    let fastEncoder = try JPEGEncoder(quality: 85, dctMethod: .fast)

    var table = [
        "| frame | stage | median ms | p90 ms | min ms | CPU median ms | note |", "|---|---|---:|---:|---:|---:|---|",
    ]
    var summary = [
        "| frame | ours / floor encode (target ≤ 1.15) | press→durable / floor pipeline (target ≤ 1.5) "
            + "| same, from minimums | same, from CPU medians | scaler vs naive Double "
            + "| fast DCT / accurate DCT (ours) | JPEG bytes ours / floor |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]

    for (width, height) in [(1920, 1080), (4056, 3040), (4608, 2592)] {
        // The camera frame: the shelf photo, decoded at the smallest DCT scale that still covers the
        // size, then fitted to exactly that size.
        let photo = try decoder.decode(contentsOf: path, minimumWidth: width, minimumHeight: height)
        let frame = try scaler.resized(photo, width: width, height: height)
        let name = "\(width)x\(height)"
        let decodeStats = measure(max(3, iterations / 5), warmUp: 1) {
            _ = try? decoder.decode(contentsOf: path, minimumWidth: width, minimumHeight: height)
        }

        // 1. The full-size copy out of the driver buffer into a pooled buffer: what the capture loop
        //    does for a frame it does not scale (a camera already at ≤ 1920, or no limit set).
        let pool = BufferPool(bufferSize: frame.layout.byteCount, maximumBuffers: 2)
        let copyStats = measure(iterations) {
            let buffer = pool.acquire()!
            buffer.bytes.baseAddress!.copyMemory(
                from: frame.buffer.bytes.baseAddress!, byteCount: frame.layout.byteCount)
        }
        // 2. Scale to ≤ 1920 (a no-op for 1920x1080).
        var scaled = frame
        let scaleStats = try measure(iterations) { scaled = try scaler.downscaled(frame) }
        // The same into a pooled output buffer (no fresh pages to fault in), as a worker with a pool.
        let scaledSize = YUV420Scaler.downscaledSize(width: width, height: height)
        let outputPool = BufferPool(
            bufferSize: YUV420Layout(width: scaledSize.width, height: scaledSize.height).byteCount, maximumBuffers: 2)
        let pooledScaler = YUV420Scaler(pool: outputPool)
        let pooledScaleStats = try measure(iterations) { _ = try pooledScaler.downscaled(frame) }
        // 3. Our encoder, q85, accurate DCT, alternating with 5. the floor: TurboJPEG on the same
        //    planes, same quality, same subsampling, same (accurate) DCT.
        let turbo = TurboEncoder(width: scaled.width, height: scaled.height)
        var floorSize = 0
        var jpeg: [UInt8] = []
        // Ours lends its bytes like TurboJPEG does (no copy); the [UInt8] variant is measured too.
        let (encodeStats, floorStats) = try measurePair(
            iterations, { _ = try encoder.withJPEG(of: scaled) { $0.count } },
            { floorSize = try turbo.encode(scaled, quality: 85) })
        let arrayStats = try measure(iterations) { jpeg = try encoder.encode(scaled) }
        let identical =
            try turbo.encode(scaled, quality: 85) == jpeg.count
            && jpeg.withUnsafeBytes { memcmp($0.baseAddress!, turbo.buffer, jpeg.count) == 0 }
        // Our encoder with the fast DCT, alternating with the accurate one (for the DCT choice).
        let (fastStats, accurateStats) = try measurePair(
            iterations, { _ = try fastEncoder.encode(scaled) }, { _ = try encoder.encode(scaled) })
        // 4. Durable write of the result.
        let writeStats = try measure(iterations) {
            try jpeg.withUnsafeBytes { try durableWrite($0, folder: folder, name: "scan.jpg") }
        }
        // 6. Whole press → durable, end to end, alternating with the floor pipeline (tj encode of
        //    the already-scaled picture + the same durable write). A press is what the daemon does:
        //    the camera thread scales the frame straight out of the driver's mapped buffer into a
        //    pooled ≤ 1920 buffer (V4L2Camera with `deliveredLongEdge`), then the worker encodes
        //    and writes it. The driver cycles through its buffers (4 by default), so the pipeline
        //    reads a different one each time: 4 x 18 MB do not stay in cache, as a frame the
        //    camera just wrote would not.
        // Inside the pipeline each step is also timed, since a cold frame scales slower than the
        // warm one the stage figures above use.
        let driverBuffers = (0..<4).map { _ in
            let buffer = PixelBuffer(capacity: frame.layout.byteCount)
            buffer.bytes.copyMemory(from: UnsafeRawBufferPointer(frame.buffer.bytes))
            return buffer
        }
        var nextDriverBuffer = 0
        var inside = [[Double]](repeating: [], count: 3)
        func lap(_ since: inout MonotonicInstant, _ index: Int) {
            let now = MonotonicInstant.now()
            inside[index].append(Double(now.nanoseconds(since: since)) / 1e6)
            since = now
        }
        let (pipelineStats, floorPipelineStats) = try measurePair(
            iterations,
            {
                var t = MonotonicInstant.now()
                let driverBuffer = driverBuffers[nextDriverBuffer]
                nextDriverBuffer = (nextDriverBuffer + 1) % driverBuffers.count
                // A frame that already fits is copied with one memcpy, as the capture loop does.
                let small: YUV420Frame
                if scaled.width == frame.width && scaled.height == frame.height {
                    let buffer = pool.acquire()!
                    buffer.bytes.copyMemory(from: UnsafeRawBufferPointer(driverBuffer.bytes))
                    small = YUV420Frame(layout: frame.layout, buffer: buffer, timestamp: frame.timestamp)
                } else {
                    small = try pooledScaler.downscaled(
                        UnsafeRawBufferPointer(driverBuffer.bytes), layout: frame.layout, timestamp: frame.timestamp)
                }
                lap(&t, 0)
                let written = try encoder.withJPEG(of: small) { bytes in
                    lap(&t, 1)
                    return Result { try durableWrite(bytes, folder: folder, name: "scan.jpg") }
                }
                try written.get()
                lap(&t, 2)
            },
            {
                let size = try turbo.encode(scaled, quality: 85)
                try durableWrite(
                    UnsafeRawBufferPointer(start: turbo.buffer, count: size), folder: folder, name: "floor.jpg")
            })
        let insideMedians = inside.map { ms(Stats(samples: Array($0.suffix(iterations))).median) }
        // 7. The scaler against a naive per-pixel Double area average (few runs: it is slow).
        var naiveStats: Stats?
        var naiveDifference = 0
        if frame.width > 1920 {
            var reference = frame
            naiveStats = measure(max(2, iterations / 10), warmUp: 0) {
                reference = naiveDownscale(frame, width: scaled.width, height: scaled.height)
            }
            naiveDifference = maximumDifference(reference, scaled)
        }

        let rows: [(String, Stats, String)] =
            [
                (
                    "decode fixture (setup, not in pipeline)", decodeStats,
                    "\(photo.width)x\(photo.height) via DCT scaling"
                ),
                (
                    "full-size frame copy (capture loop, frames it does not scale)", copyStats,
                    "\(frame.layout.byteCount / 1024) KiB memcpy into pool buffer"
                ),
                ("scale to ≤1920", scaleStats, "→ \(scaled.width)x\(scaled.height)"),
                ("scale to ≤1920, pooled output (used below)", pooledScaleStats, ""),
                ("encode q85 ours (ISLOW), withJPEG (no copy)", encodeStats, "\(jpeg.count / 1024) KiB"),
                ("encode q85 ours (ISLOW), encode → [UInt8]", arrayStats, "adds a copy of the output"),
                ("encode q85 ours (IFAST)", fastStats, ""),
                (
                    "encode q85 floor: tjCompressFromYUVPlanes", floorStats,
                    "\(floorSize) bytes; ours \(jpeg.count) bytes, \(identical ? "byte-identical" : "differs")"
                ),
                ("durable write (tmp+fsync+rename+fsync dir)", writeStats, ""),
                (
                    "press→durable (scale out of driver buffer+encode+write)", pipelineStats,
                    "end to end; inside: scale (copy at 1920) \(insideMedians[0]) + encode \(insideMedians[1]) "
                        + "+ write \(insideMedians[2])"
                ),
                ("floor pipeline (tj encode + write)", floorPipelineStats, "end to end"),
            ]
            + (naiveStats.map {
                [("naive Double area average (reference)", $0, "max luma diff vs ours: \(naiveDifference)")]
            } ?? [])
        for (stage, stats, note) in rows {
            table.append(
                "| \(name) | \(stage) | \(ms(stats.median)) | \(ms(stats.p90)) | \(ms(stats.minimum)) "
                    + "| \(ms(stats.cpuMedian)) | \(note) |")
        }
        let naiveRatio = naiveStats.map { ratio($0.median, scaleStats.median) + "x faster" } ?? "n/a (no scaling)"
        summary.append(
            "| \(name) | \(ratio(encodeStats.median, floorStats.median)) "
                + "| \(ratio(pipelineStats.median, floorPipelineStats.median)) "
                + "| \(ratio(pipelineStats.minimum, floorPipelineStats.minimum)) "
                + "| \(ratio(pipelineStats.cpuMedian, floorPipelineStats.cpuMedian)) | \(naiveRatio) "
                + "| \(ratio(fastStats.median, accurateStats.median)) "
                + "| \(ratio(Double(jpeg.count), Double(floorSize))) |"
        )
    }
    print(table.joined(separator: "\n"))
    print()
    print(summary.joined(separator: "\n"))
}

do {
    try run(Options.parse(CommandLine.arguments))
} catch {
    print("SwiftWingBench failed: \(error)")
    exit(1)
}
