import Imaging
import SwiftWingCore
import SwiftWingTesting
import Testing

@Suite("Frame rotation")
struct FrameRotationTests {
    let frame = ImagingFixtures.frame(
        width: 6, height: 4, luma: { x, y in UInt8(10 * y + x) },
        chroma: { x, y in (UInt8(100 + 10 * y + x), UInt8(200 + 10 * y + x)) })

    @Test("90 then 270 is the identity; 180 twice too")
    func identities() throws {
        let odd = ImagingFixtures.gradientFrame(width: 37, height: 21, lumaStride: 40, chromaStride: 24)
        for picture in [frame, odd] {
            #expect(
                ImagingFixtures.samePixels(try rotated(rotated(picture, by: .clockwise90), by: .clockwise270), picture))
            #expect(
                ImagingFixtures.samePixels(try rotated(rotated(picture, by: .upsideDown), by: .upsideDown), picture))
            #expect(try rotated(picture, by: .none).buffer === picture.buffer)
        }
    }

    @Test("90 clockwise moves the top-left pixel to the top-right")
    func knownPixel() throws {
        let turned = try rotated(frame, by: .clockwise90)
        #expect(turned.width == 4 && turned.height == 6)
        #expect(ImagingFixtures.luma(turned, 3, 0) == ImagingFixtures.luma(frame, 0, 0))  // top-left → top-right
        #expect(ImagingFixtures.luma(turned, 0, 0) == ImagingFixtures.luma(frame, 0, 3))  // bottom-left → top-left
        // bottom-right → bottom-left
        #expect(ImagingFixtures.luma(turned, 0, 5) == ImagingFixtures.luma(frame, 5, 3))
        #expect(ImagingFixtures.cb(turned, 1, 0) == ImagingFixtures.cb(frame, 0, 0))
        let flipped = try rotated(frame, by: .upsideDown)
        #expect(ImagingFixtures.luma(flipped, 5, 3) == ImagingFixtures.luma(frame, 0, 0))
    }

    @Test("degrees are validated, listing the allowed values")
    func validation() throws {
        #expect(try FrameRotation(degrees: 90) == .clockwise90)
        #expect(try FrameRotation(degrees: -90) == .clockwise270)
        #expect(try FrameRotation(degrees: 360) == FrameRotation.none)
        #expect(throws: ImagingError.invalidRotation(degrees: 45)) { try FrameRotation(degrees: 45) }
        #expect("\(ImagingError.invalidRotation(degrees: 45))".contains("0, 90, 180 or 270"))
    }
}
