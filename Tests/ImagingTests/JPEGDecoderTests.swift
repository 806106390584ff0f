import Imaging
import SwiftWingCore
import SwiftWingTesting
import Testing

@Suite("JPEG decoder")
struct JPEGDecoderTests {
    @Test("the shelf photo decodes to a full-size YUV420 frame with plausible content")
    func decodesShelfPhoto() throws {
        let path = try #require(
            ImagingFixtures.shelfPhoto(), "Fixtures/shelves/one_shelf.jpg is missing from the checkout")
        let info = try JPEGInfo(contentsOf: path)
        let frame = try JPEGDecoder().decode(contentsOf: path)
        #expect(frame.width == info.width && frame.height == info.height)
        #expect(info.width == 4624 && info.height == 3468)
        // A real photo is not flat: luma spreads over a wide range.
        var low = 255
        var high = 0
        for y in stride(from: 0, to: frame.height, by: 97) {
            for x in stride(from: 0, to: frame.width, by: 89) {
                let v = Int(ImagingFixtures.luma(frame, x, y))
                low = min(low, v)
                high = max(high, v)
            }
        }
        #expect(high - low > 100)
    }

    @Test(
        "a minimum size picks the smallest DCT scale that is still big enough",
        arguments: [
            (1920, 1080, 2312, 1734),  // 4/8
            (1000, 700, 1156, 867),  // 2/8
            (100, 100, 578, 434),  // 1/8
            (4056, 3040, 4624, 3468),  // 8/8: 7/8 would be 4046 wide
            (9000, 9000, 4624, 3468),  // never enlarges
        ])
    func scaledDecode(minWidth: Int, minHeight: Int, width: Int, height: Int) throws {
        let path = try #require(ImagingFixtures.shelfPhoto())
        let frame = try JPEGDecoder().decode(contentsOf: path, minimumWidth: minWidth, minimumHeight: minHeight)
        #expect(frame.width == width && frame.height == height)
    }
}
