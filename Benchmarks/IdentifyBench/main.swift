// IdentifyBench: what identifying a 1920x1080 frame on the device costs, beside what the frame
// costs anyway (its JPEG encode; a plain pass over its Y plane), measured in one run, interleaved;
// the barcode pass rates on the fixture sets; the quality check's verdicts on the calibration set.
// `swift run -c release IdentifyBench [--iterations N]`. Figures: Benchmarks/README.md, "Identify".
import Foundation
import Identify
import Imaging
import SwiftWingCore

var iterations = 40
var arguments = CommandLine.arguments.dropFirst()
while let argument = arguments.popFirst() {
    switch argument {
    case "--iterations": iterations = max(1, Int(arguments.popFirst() ?? "") ?? iterations)
    default:
        print("usage: IdentifyBench [--iterations N]")
        exit(argument == "--help" || argument == "-h" ? 0 : 2)
    }
}

let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().path
let barcodes = repository + "/Fixtures/barcodes"
let shelves = repository + "/Fixtures/shelves"

func frame(_ path: String) -> YUV420Frame {
    do {
        return try PictureFile.frame(contentsOf: path)
    } catch {
        print("IdentifyBench: \(error)")
        exit(1)
    }
}

func fullHD(_ frame: YUV420Frame) -> YUV420Frame {
    do {
        return try YUV420Scaler().resized(frame, width: 1920, height: 1080)
    } catch {
        print("IdentifyBench: \(error)")
        exit(1)
    }
}

/// `picture`'s luma pasted into the middle of `background` (chroma left as it was).
func pasted(_ picture: YUV420Frame, into background: YUV420Frame) -> YUV420Frame {
    let result = FrameDegradation.darkened(background, gain: 1)
    let x0 = (background.width - picture.width) / 2
    let y0 = (background.height - picture.height) / 2
    for row in 0..<picture.height {
        for column in 0..<picture.width {
            result.luma[(y0 + row) * result.layout.lumaStride + x0 + column] =
                picture.luma[row * picture.layout.lumaStride + column]
        }
    }
    return result
}

/// Test sets: `NN.png` beside `NN.txt`.
func fixtureSet(_ name: String) -> [(path: String, digits: String)] {
    let directory = barcodes + "/" + name
    let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
    return names.filter { $0.hasSuffix(".png") }.sorted().compactMap { name in
        let path = directory + "/" + name
        let expected = path.replacingOccurrences(of: ".png", with: ".txt")
        guard let digits = try? String(contentsOfFile: expected, encoding: .utf8) else { return nil }
        return (path, digits.trimmingCharacters(in: .whitespacesAndNewlines))
    }
}

func milliseconds(_ body: () throws -> Void) rethrows -> Double {
    let start = MonotonicInstant.now()
    try body()
    return Double(MonotonicInstant.now().nanoseconds(since: start)) / 1_000_000
}

func percentile(_ values: [Double], _ fraction: Double) -> Double {
    let sorted = values.sorted()
    return sorted[min(sorted.count - 1, Int((Double(sorted.count - 1) * fraction).rounded()))]
}

func row(_ name: String, _ values: [Double], baseline: [Double]) -> String {
    let median = percentile(values, 0.5)
    return "| \(name) | "
        + String(
            format: "%.2f | %.2f | %.2fx |", median, percentile(values, 0.99),
            median / percentile(baseline, 0.5))
}

let cores = ProcessInfo.processInfo.activeProcessorCount
print("IdentifyBench: \(BarcodeReader.libraryVersions), \(iterations) iterations, \(cores) cores")

// MARK: - Time per 1920x1080 frame

let shelf = fullHD(frame(shelves + "/one_shelf.jpg"))
let shelfWithCode = pasted(frame(barcodes + "/ean13-1/1.png"), into: shelf)
let encoder = try JPEGEncoder()
let reader = try BarcodeReader()
// With no pixels to scan, the reader only locates candidate regions: the locator's own cost.
let locatorOnly = try BarcodeReader(budget: .init(scannedPixels: 0))
let meter = QualityMeter()
let identifier = try FrameIdentifier()

var encode: [Double] = []
var barcodeNoCode: [Double] = []
var barcodeWithCode: [Double] = []
var locating: [Double] = []
var quality: [Double] = []
var plainPass: [Double] = []
var checksum = 0
for _ in 0..<iterations {
    encode.append(try milliseconds { checksum &+= try encoder.encode(shelfWithCode).count })
    for (target, sample) in [(shelf, 0), (shelfWithCode, 1)] {
        let luma = UnsafeRawBufferPointer(target.luma)
        let time = try milliseconds {
            checksum &+= try reader.read(luma: luma, width: 1920, height: 1080, stride: target.layout.lumaStride).count
        }
        if sample == 0 { barcodeNoCode.append(time) } else { barcodeWithCode.append(time) }
    }
    let luma = UnsafeRawBufferPointer(shelfWithCode.luma)
    locating.append(
        try milliseconds {
            checksum &+= try locatorOnly.read(luma: luma, width: 1920, height: 1080, stride: 1920).count
        })
    quality.append(
        try milliseconds {
            checksum &+= Int(try meter.measure(luma: luma, width: 1920, height: 1080, stride: 1920).sharpness)
        })
    plainPass.append(
        milliseconds {
            var sum = 0
            for value in luma { sum &+= Int(value) }
            checksum &+= sum
        })
}
let found = try identifier.identify(frame: shelfWithCode).barcodes.map(\.text)
print("\n1920x1080 frames (ms; ratio = median / median of the baseline in the same run):\n")
print("| step | median | p99 | ratio |")
print("|---|---:|---:|---:|")
print(row("JPEG encode, q85 (Imaging.JPEGEncoder) — baseline", encode, baseline: encode))
print(row("barcode pass, shelf without a code", barcodeNoCode, baseline: encode))
print(row("barcode pass, shelf with an EAN-13 pasted in (read: \(found.joined()))", barcodeWithCode, baseline: encode))
print(row("of which locating the candidate regions (same frame, nothing scanned)", locating, baseline: encode))
print(row("plain sum over the Y plane — baseline", plainPass, baseline: plainPass))
print(row("quality check (Laplacian variance + exposure)", quality, baseline: plainPass))

// MARK: - Pass rates

print("\nPass rates through FrameIdentifier (the path of `swiftwing identify` and the daemon):\n")
for set in ["ean13-1", "ean13-3"] {
    let cases = fixtureSet(set)
    var passed = 0
    var times: [Double] = []
    var missed: [String] = []
    for (path, digits) in cases {
        let identification = try identifier.identify(frame: frame(path))
        times.append(identification.milliseconds)
        if identification.barcodes.contains(where: { $0.text == digits }) {
            passed += 1
        } else {
            missed.append(URL(fileURLWithPath: path).lastPathComponent)
        }
    }
    print(
        "- \(set): \(passed)/\(cases.count) (missed: \(missed.joined(separator: ", "))); "
            + String(format: "median %.1f ms, p99 %.1f ms a picture", percentile(times, 0.5), percentile(times, 0.99)))
}

// MARK: - Pass rates after the daemon's scaling

// The daemon reads barcodes on the frame after ScanPipeline has scaled it to a long edge of at most
// imaging.max_long_edge (1920): a camera with more pixels gets its codes shrunk by 1920 / its long edge.
// Each picture keeps its own pixel size (the code covers as many sensor pixels as in the photo) in the
// middle of a shelf frame of the camera's size; the frame goes through the same scaler call, then is read.
print(
    "\nPass rates after the daemon's scaling (picture in a shelf frame of the camera's size, "
        + "YUV420Scaler.downscaled to <= 1920, then FrameIdentifier):\n")
print(
    "| camera frame | codes shrunk to | ean13-1 scaled | ean13-3 scaled | ean13-1 scaled + re-read | "
        + "ean13-3 scaled + re-read | ean13-1 full frame | ean13-3 full frame "
        + "| ms a frame, scaled / scaled + re-read / full (median) | of the re-read: building the detail, ms "
        + "(its kB) | encode of the scaled frame (median ms) | (scaled + re-read) ÷ encode |")
print("|---|---:|---|---|---|---|---:|---:|---|---|---:|---:|")
let shelfSource = frame(shelves + "/one_shelf.jpg")
for (cameraWidth, cameraHeight) in [(1920, 1080), (2592, 1944), (3280, 2464), (3840, 2160), (4624, 3468)] {
    let background = try YUV420Scaler().resized(shelfSource, width: cameraWidth, height: cameraHeight)
    var cells: [String] = []
    var rereadCells: [String] = []
    var fullCells: [String] = []
    var scaledTimes: [Double] = []
    var rereadTimes: [Double] = []
    var fullTimes: [Double] = []
    var encodeTimes: [Double] = []
    var detailTimes: [Double] = []
    var detailPixels: [Double] = []
    for set in ["ean13-1", "ean13-3"] {
        let cases = fixtureSet(set)
        var missed: [String] = []
        var rereadMissed: [String] = []
        var fullPassed = 0
        for (path, digits) in cases {
            let camera = pasted(frame(path), into: background)
            let scaled = try YUV420Scaler().downscaled(camera, maxLongEdge: 1920)
            let onScaled = try identifier.identify(frame: scaled)
            scaledTimes.append(onScaled.milliseconds)
            if !onScaled.barcodes.contains(where: { $0.text == digits }) {
                missed.append(URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent)
            }
            // The daemon's path: located on the scaled frame, failing regions read again from the camera frame.
            let reread = try identifier.identify(frame: scaled, fullResolution: camera)
            rereadTimes.append(reread.milliseconds)
            if !reread.barcodes.contains(where: { $0.text == digits }) {
                rereadMissed.append(URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent)
            }
            encodeTimes.append(try milliseconds { checksum &+= try encoder.encode(scaled).count })
            // Of the re-read: building the detail (on the device, the camera thread's part).
            detailTimes.append(
                milliseconds {
                    let detail = BarcodeReader.detail(
                        captured: UnsafeRawBufferPointer(camera.luma), width: camera.width, height: camera.height,
                        stride: camera.layout.lumaStride)
                    detailPixels.append(Double(detail?.byteCount ?? 0))
                })
            // For comparison: the same camera frame read before scaling.
            let onFull = try identifier.identify(frame: camera)
            fullTimes.append(onFull.milliseconds)
            if onFull.barcodes.contains(where: { $0.text == digits }) { fullPassed += 1 }
        }
        cells.append(
            "\(cases.count - missed.count)/\(cases.count)"
                + (missed.isEmpty || missed.count > 8 ? "" : " (missed \(missed.joined(separator: ", ")))"))
        rereadCells.append(
            "\(cases.count - rereadMissed.count)/\(cases.count)"
                + (rereadMissed.isEmpty || rereadMissed.count > 8
                    ? "" : " (missed \(rereadMissed.joined(separator: ", ")))"))
        fullCells.append("\(fullPassed)/\(cases.count)")
    }
    let shrink = 1920.0 / Double(max(cameraWidth, cameraHeight, 1920))
    print(
        "| \(cameraWidth)x\(cameraHeight) | " + String(format: "%.0f %%", shrink * 100) + " | "
            + (cells + rereadCells + fullCells).joined(separator: " | ")
            + String(
                format: " | %.1f / %.1f / %.1f | %.1f (%.0f) | %.1f | %.2fx |", percentile(scaledTimes, 0.5),
                percentile(rereadTimes, 0.5), percentile(fullTimes, 0.5), percentile(detailTimes, 0.5),
                percentile(detailPixels, 0.5) / 1000, percentile(encodeTimes, 0.5),
                percentile(rereadTimes, 0.5) / percentile(encodeTimes, 0.5)))
}

// MARK: - Quality calibration

print("\nQuality verdicts on the calibration set (defaults: \(identifier.thresholds)):\n")
var calibration: [(name: String, frame: YUV420Frame)] = [
    ("one_shelf (1080p)", shelf), ("two_shelves (1080p)", fullHD(frame(shelves + "/two_shelves.jpg"))),
]
for set in ["ean13-1", "ean13-3"] {
    for (path, _) in fixtureSet(set) { calibration.append((set, frame(path))) }
}
print("| pictures | as taken: good / blurry / dark | box-blurred (r=3): blurry | darkened (x0.2): dark |")
print("|---|---|---|---|")
var groups: [String: [[QualityVerdict]]] = [:]
var sharpnessFigures: [String: [Double]] = [:]
for (name, picture) in calibration {
    let blurred = FrameDegradation.blurred(picture, radius: 3)
    let darkened = FrameDegradation.darkened(picture, gain: 0.2)
    let verdicts = try [picture, blurred, darkened].map { try identifier.identify(frame: $0) }
    groups[name, default: []].append(verdicts.map(\.verdict))
    sharpnessFigures[name + " sharp", default: []].append(verdicts[0].quality.sharpness)
    sharpnessFigures[name + " blurred", default: []].append(verdicts[1].quality.sharpness)
}
for name in groups.keys.sorted() {
    let verdicts = groups[name]!
    func count(_ column: Int, _ verdict: QualityVerdict) -> Int { verdicts.filter { $0[column] == verdict }.count }
    print(
        "| \(name) (\(verdicts.count)) | \(count(0, .good)) / \(count(0, .blurry)) / \(count(0, .dark)) "
            + "| \(count(1, .blurry))/\(verdicts.count) | \(count(2, .dark))/\(verdicts.count) |")
}
print("\nLaplacian variance (min / median / max):")
for name in sharpnessFigures.keys.sorted() {
    let values = sharpnessFigures[name]!
    print("- \(name): " + String(format: "%.0f / %.0f / %.0f", values.min()!, percentile(values, 0.5), values.max()!))
}
if checksum == 42 { print("") }  // keeps the timed work from being optimised away
