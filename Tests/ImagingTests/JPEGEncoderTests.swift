import Imaging
import SwiftWingCore
import SwiftWingTesting
import Testing

@Suite("JPEG encoder")
struct JPEGEncoderTests {
    @Test(
        "encode then decode keeps the size and the picture",
        arguments: [
            (1920, 1080), (642, 362), (640, 480), (17, 9), (2, 2), (1000, 1001),
        ])
    func roundTrip(width: Int, height: Int) throws {
        let original = ImagingFixtures.gradientFrame(width: width, height: height)
        let jpeg = try JPEGEncoder().encode(original)
        #expect(jpeg.starts(with: [0xFF, 0xD8]) && jpeg.suffix(2) == [0xFF, 0xD9])
        let info = try JPEGInfo(jpeg)
        #expect(info.width == width && info.height == height && info.components == 3)
        let decoded = try JPEGDecoder().decode(jpeg)
        #expect(decoded.width == width && decoded.height == height)
        let error = ImagingFixtures.meanAbsoluteLumaDifference(original, decoded)
        #expect(error < 2, "mean absolute luma error \(error) at \(width)x\(height)")
        // Chroma survives too (no RGB round trip that could shift it).
        let cx = decoded.layout.chromaWidth / 2
        let cy = decoded.layout.chromaHeight / 2
        #expect(abs(Int(ImagingFixtures.cb(decoded, cx, cy)) - Int(ImagingFixtures.cb(original, cx, cy))) <= 3)
        #expect(abs(Int(ImagingFixtures.cr(decoded, cx, cy)) - Int(ImagingFixtures.cr(original, cx, cy))) <= 3)
    }

    @Test("a sharp pattern at low quality loses more than at high quality")
    func qualityMatters() throws {
        let checker = ImagingFixtures.frame(
            width: 256, height: 128, luma: { x, y in ((x / 3 + y / 5) % 2) == 0 ? 30 : 220 })
        let encoder = try JPEGEncoder()
        let low = try encoder.encode(checker, quality: 10)
        let high = try encoder.encode(checker, quality: 95)
        #expect(low.count < high.count)
        let lowError = ImagingFixtures.meanAbsoluteLumaDifference(checker, try JPEGDecoder().decode(low))
        let highError = ImagingFixtures.meanAbsoluteLumaDifference(checker, try JPEGDecoder().decode(high))
        #expect(highError < lowError)
        #expect(highError < 6)
    }

    @Test("padded strides are honoured and the padding is never encoded")
    func paddedStrides() throws {
        let tight = ImagingFixtures.gradientFrame(width: 642, height: 362)
        let padded = ImagingFixtures.gradientFrame(width: 642, height: 362, lumaStride: 704, chromaStride: 352)
        let encoder = try JPEGEncoder()
        #expect(try encoder.encode(tight) == encoder.encode(padded))
        let tight16 = ImagingFixtures.gradientFrame(width: 640, height: 360)
        let padded16 = ImagingFixtures.gradientFrame(width: 640, height: 360, lumaStride: 768, chromaStride: 400)
        #expect(try encoder.encode(tight16) == encoder.encode(padded16))
    }

    @Test("one encoder encodes many frames of different sizes, identically to a fresh one")
    func reuse() throws {
        let encoder = try JPEGEncoder()
        let big = ImagingFixtures.gradientFrame(width: 1920, height: 1080)
        let small = ImagingFixtures.gradientFrame(width: 320, height: 200)
        let first = try encoder.encode(small)
        _ = try encoder.encode(big)
        #expect(try encoder.encode(small) == first)
        #expect(try JPEGEncoder().encode(small) == first)
    }

    @Test("quality outside 1...100 is refused with advice", arguments: [0, -5, 101, 1000])
    func invalidQuality(quality: Int) throws {
        #expect(throws: ImagingError.invalidQuality(quality)) { try JPEGEncoder(quality: quality) }
        #expect(throws: ImagingError.invalidQuality(quality)) {
            try JPEGEncoder().encode(ImagingFixtures.gradientFrame(width: 16, height: 16), quality: quality)
        }
        #expect("\(ImagingError.invalidQuality(quality))".contains("1 to 100"))
    }

    @Test("quality 1 and 100 are accepted")
    func qualityBounds() throws {
        let frame = ImagingFixtures.gradientFrame(width: 64, height: 48)
        #expect(try JPEGEncoder(quality: 1).encode(frame).count < JPEGEncoder(quality: 100).encode(frame).count)
        #expect(try JPEGEncoder(dctMethod: .fast).encode(frame).count > 0)
    }
}
