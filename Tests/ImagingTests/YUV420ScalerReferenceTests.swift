import Imaging
import SwiftWingCore
import SwiftWingTesting
import Testing

@Suite("YUV420 scaler against a reference")
struct YUV420ScalerReferenceTests {
    /// The area average computed the obvious way, in Double, over the same center crop as `resized`.
    static func referenceLuma(_ frame: YUV420Frame, width: Int, height: Int, x: Int, y: Int) -> Double {
        var cropX = 0.0
        var cropY = 0.0
        var cropWidth = Double(frame.width)
        var cropHeight = Double(frame.height)
        if frame.width * height > width * frame.height {
            cropWidth = Double(frame.height) * Double(width) / Double(height)
            cropX = (Double(frame.width) - cropWidth) / 2
        } else if frame.width * height < width * frame.height {
            cropHeight = Double(frame.width) * Double(height) / Double(width)
            cropY = (Double(frame.height) - cropHeight) / 2
        }
        let sx = cropWidth / Double(width)
        let sy = cropHeight / Double(height)
        let x0 = cropX + Double(x) * sx
        let x1 = x0 + sx
        let y0 = cropY + Double(y) * sy
        let y1 = y0 + sy
        var sum = 0.0
        for j in Int(y0)..<min(frame.height, Int(y1.rounded(.up))) {
            let cy = min(Double(j + 1), y1) - max(Double(j), y0)
            for i in Int(x0)..<min(frame.width, Int(x1.rounded(.up))) {
                let cx = min(Double(i + 1), x1) - max(Double(i), x0)
                sum += cx * cy * Double(ImagingFixtures.luma(frame, i, j))
            }
        }
        return sum / (sx * sy)
    }

    @Test(
        "noise scaled by awkward ratios stays within one level of an exact area average",
        arguments: [
            (203, 151, 97, 61),  // ~2.1x and ~2.5x: two rows at once with an odd last row, a scalar tail
            (576, 324, 240, 135),  // 2.4x, as 4608x2592 → 1920x1080: 16-byte rows, 3- and 4-row spans
            (507, 380, 240, 180),  // ~2.11x, as 4056x3040 → 1920x1440
            (640, 480, 150, 110),  // >4 taps: the per-row path
            (33, 17, 30, 16),  // barely smaller
            (41, 29, 97, 67),  // enlarged: outputs inside one source pixel (a lone full weight)
        ])
    func matchesReference(sourceWidth: Int, sourceHeight: Int, width: Int, height: Int) throws {
        var seed: UInt32 = 12345
        let noise = ImagingFixtures.frame(
            width: sourceWidth, height: sourceHeight, lumaStride: sourceWidth + 3,
            luma: { _, _ in
                seed = seed &* 1_103_515_245 &+ 12345
                return UInt8(truncatingIfNeeded: seed >> 16)
            })
        let scaled = try YUV420Scaler().resized(noise, width: width, height: height)
        var worst = 0.0
        for y in 0..<height {
            for x in 0..<width {
                let exact = Self.referenceLuma(noise, width: width, height: height, x: x, y: y)
                worst = max(worst, abs(exact - Double(ImagingFixtures.luma(scaled, x, y))))
            }
        }
        #expect(worst <= 1.0, "largest difference from the exact area average: \(worst)")
    }
}
