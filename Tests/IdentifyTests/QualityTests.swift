import Identify
import SwiftWingCore
import SwiftWingTesting
import Testing

@Suite("Quality check")
struct QualityTests {
    /// A made-up sharp scene: mid-grey with fine text-like detail (hashed noise in 2-pixel blocks).
    static func sharpFrame(width: Int = 640, height: Int = 480) -> YUV420Frame {
        let frame = YUV420Frame(layout: YUV420Layout(width: width, height: height))
        frame.buffer.bytes.initializeMemory(as: UInt8.self, repeating: 128)
        for y in 0..<height {
            for x in 0..<width {
                var hash = UInt32(truncatingIfNeeded: (x / 2) &* 73_856_093 ^ (y / 2) &* 19_349_663)
                hash ^= hash >> 13
                hash = hash &* 0x5bd1_e995
                frame.luma[y * width + x] = UInt8(60 + Int(hash >> 24) % 140)
            }
        }
        return frame
    }

    func verdict(_ frame: YUV420Frame) throws -> QualityVerdict {
        try FrameIdentifier().identify(frame: frame).verdict
    }

    @Test("a sharp, well-lit frame is good")
    func sharp() throws {
        #expect(try verdict(Self.sharpFrame()) == .good)
    }

    @Test("the same frame out of focus is blurry", arguments: [3, 5])
    func blurred(radius: Int) throws {
        #expect(try verdict(FrameDegradation.blurred(Self.sharpFrame(), radius: radius)) == .blurry)
    }

    @Test("the same frame two and more stops under is dark", arguments: [0.25, 0.1])
    func dark(gain: Double) throws {
        #expect(try verdict(FrameDegradation.darkened(Self.sharpFrame(), gain: gain)) == .dark)
    }

    @Test("a frame blown to white is bright")
    func bright() throws {
        let frame = Self.sharpFrame()
        frame.luma.initializeMemory(as: UInt8.self, repeating: 250)
        #expect(try verdict(frame) == .bright)
    }

    @Test("exposure figures: mean level and clipped fractions")
    func exposureFigures() throws {
        let frame = Self.sharpFrame(width: 64, height: 64)
        // Left half black, right half white.
        for y in 0..<64 {
            for x in 0..<64 { frame.luma[y * 64 + x] = x < 32 ? 0 : 255 }
        }
        let quality = try QualityMeter(rowStep: 1).measure(
            luma: UnsafeRawBufferPointer(frame.luma), width: 64, height: 64, stride: 64)
        #expect(abs(quality.exposure.mean - 127.5) < 3)
        #expect(abs(quality.exposure.shadows - 0.5) < 0.02)
        #expect(abs(quality.exposure.highlights - 0.5) < 0.02)
    }

    @Test("real photos: the shelf photo is good, its blurred copy blurry, its darkened copy dark")
    func realPhoto() throws {
        let photo = try Fixtures.frame(Fixtures.barcodes + "/ean13-3/01.png")
        #expect(try verdict(photo) == .good)
        #expect(try verdict(FrameDegradation.blurred(photo, radius: 3)) == .blurry)
        #expect(try verdict(FrameDegradation.darkened(photo, gain: 0.2)) == .dark)
    }

    /// The measure pixel by pixel in `Int`, as the meter's vector lanes must add it up.
    static func measuredOneByOne(_ plane: [UInt8], width: Int, height: Int, stride: Int, rowStep: Int) -> FrameQuality {
        var (laplacianSum, squares, levels, shadows, highlights, samples) = (0, 0, 0, 0, 0, 0)
        for y in Swift.stride(from: 1, to: height - 1, by: rowStep) {
            for x in 1..<(width - 1) {
                let index = y * stride + x
                let centre = Int(plane[index])
                let laplacian =
                    Int(plane[index - 1]) + Int(plane[index + 1]) + Int(plane[index - stride])
                    + Int(plane[index + stride]) - 4 * centre
                laplacianSum += laplacian
                squares += laplacian * laplacian
                levels += centre
                shadows += centre <= Int(FrameQuality.clippedShadow) ? 1 : 0
                highlights += centre >= Int(FrameQuality.clippedHighlight) ? 1 : 0
            }
            samples += width - 2
        }
        let count = Double(samples)
        let mean = Double(laplacianSum) / count
        return FrameQuality(
            sharpness: Double(squares) / count - mean * mean,
            exposure: .init(
                mean: Double(levels) / count, shadows: Double(shadows) / count, highlights: Double(highlights) / count))
    }

    /// Random planes: narrow, odd widths, wider than a flush of the lanes, padded rows, steep and flat.
    @Test("the meter's figures are exactly those of adding up pixel by pixel")
    func sameFiguresAsPixelByPixel() throws {
        var random = SeededGenerator(seed: 0x5eed_0a11)
        let sizes = [(3, 3), (17, 5), (18, 4), (33, 7), (35, 9), (640, 12), (1_100, 6), (2_113, 5)]
        for (width, height) in sizes {
            for rowStep in [1, 4] {
                let stride = width + Int.random(in: 0...19, using: &random)
                // Steep planes (every level, extremes often: clipped counts, large Laplacians) and flat ones.
                let steep = Bool.random(using: &random)
                let plane = (0..<(stride * height)).map { _ in
                    steep
                        ? [0, 255, UInt8.random(in: 0...255, using: &random)][Int.random(in: 0...2, using: &random)]
                        : UInt8.random(in: 100...140, using: &random)
                }
                let measured = try QualityMeter(rowStep: rowStep).measure(
                    luma: plane.withUnsafeBytes { UnsafeRawBufferPointer($0) }, width: width, height: height,
                    stride: stride)
                let expected = Self.measuredOneByOne(
                    plane, width: width, height: height, stride: stride, rowStep: rowStep)
                #expect(measured == expected, "\(width)x\(height), stride \(stride), every \(rowStep) rows")
            }
        }
        // The largest Laplacian (±1,020, a checkerboard of black and white) on every pixel of a long row: the 32-bit
        // lanes must not overflow.
        let width = 4_624
        let plane = (0..<(width * 3)).map { index in UInt8((index / width + index % width) % 2 == 1 ? 0 : 255) }
        let measured = try QualityMeter(rowStep: 1).measure(
            luma: plane.withUnsafeBytes { UnsafeRawBufferPointer($0) }, width: width, height: 3, stride: width)
        #expect(measured == Self.measuredOneByOne(plane, width: width, height: 3, stride: width, rowStep: 1))
        #expect(measured.sharpness > 1_000_000 && abs(measured.exposure.shadows - 0.5) < 0.01)
    }
}
