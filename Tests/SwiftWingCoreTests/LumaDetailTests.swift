import SwiftWingCore
import Testing

@Suite("Luma detail kept beside a shrunk frame")
struct LumaDetailTests {
    /// A 6x4 picture whose pixel at (x, y) is 10·y + x, and one crop of it.
    let crop = LumaDetail.Crop(x: 2, y: 1, width: 3, height: 2, pixels: [12, 13, 14, 22, 23, 24])

    @Test("a rectangle inside a crop comes out packed; one reaching past it does not")
    func pixelsOfARectangle() {
        let detail = LumaDetail(width: 6, height: 4, crops: [crop])
        #expect(detail.pixels(x: 3, y: 1, width: 2, height: 2) == [13, 14, 23, 24])
        #expect(detail.pixels(x: 2, y: 1, width: 3, height: 2) == crop.pixels)
        #expect(detail.pixels(x: 1, y: 1, width: 2, height: 2) == nil)
        #expect(detail.pixels(x: 2, y: 2, width: 3, height: 2) == nil)
    }

    @Test("copying a crop out of a padded plane keeps the right rows")
    func copyingFromAStridedPlane() {
        let stride = 8
        var plane = [UInt8](repeating: 0, count: stride * 4)
        for y in 0..<4 { for x in 0..<6 { plane[y * stride + x] = UInt8(10 * y + x) } }
        let copied = plane.withUnsafeBytes {
            LumaDetail.Crop(copying: $0, stride: stride, x: 2, y: 1, width: 3, height: 2)
        }
        #expect(copied == crop)
    }

    @Test("turning the detail 90° clockwise moves each pixel where the turned frame has it")
    func turnedClockwise() {
        let detail = LumaDetail(width: 6, height: 4, crops: [crop]).turned(clockwiseQuarterTurns: 1)
        // (x, y) of a W x H picture goes to (H - 1 - y, x) of the H x W turned one.
        #expect(detail.width == 4 && detail.height == 6)
        #expect(detail.pixels(x: 2, y: 3, width: 1, height: 1) == [13])
        #expect(detail.pixels(x: 1, y: 2, width: 1, height: 1) == [22])
        #expect(detail.pixels(x: 1, y: 2, width: 2, height: 3) == [22, 12, 23, 13, 24, 14])
    }

    @Test("four quarter turns give the detail back")
    func fullTurn() {
        let detail = LumaDetail(width: 6, height: 4, crops: [crop])
        let back = detail.turned(clockwiseQuarterTurns: 4)
        #expect(back.crops == detail.crops && back.width == 6)
        let twice = detail.turned(clockwiseQuarterTurns: 1).turned(clockwiseQuarterTurns: 3)
        #expect(twice.crops == detail.crops)
    }
}
