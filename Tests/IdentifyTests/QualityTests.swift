import Identify
import SwiftWingCore
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
}
