import Imaging
import SwiftWingCore
import SwiftWingTesting
import Testing

/// ``SpineCrop``: a book's bounding box, from a backend that may send anything, cut out of the scan's photo.
@Suite struct SpineCropTests {
    /// A 1600x1200 photo: dark, with a bright band at columns 400–559 (rows 120–1079) and a mid-grey one at
    /// 1000–1199 (rows 600–799), so a crop shows which part of the photo it holds.
    static func photo() throws -> [UInt8] {
        let frame = ImagingFixtures.frame(width: 1600, height: 1200) { x, y in
            if (400..<560).contains(x) && (120..<1080).contains(y) { return 235 }
            if (1000..<1200).contains(x) && (600..<800).contains(y) { return 128 }
            return 16
        }
        return try JPEGEncoder(quality: 90).encode(frame)
    }

    static func meanLuma(_ jpeg: [UInt8]) throws -> Int {
        let frame = try JPEGDecoder().decode(jpeg)
        var sum = 0
        for row in 0..<frame.height {
            for column in 0..<frame.width { sum += Int(ImagingFixtures.luma(frame, column, row)) }
        }
        return sum / (frame.width * frame.height)
    }

    @Test func twoBoxesGiveTwoCropsOfTheirShapeFromOneDecode() throws {
        let boxes = [
            SpineCrop.Box(x: 0.25, y: 0.1, width: 0.1, height: 0.8),  // 160x960 pixels: 1:6
            SpineCrop.Box(x: 0.625, y: 0.5, width: 0.125, height: 1.0 / 6),  // 200x200 pixels: square
        ]
        let crops = try SpineCrop.crops(photo: try Self.photo(), boxes: boxes, source: "the test photo")
        let tall = try #require(crops[0])
        let square = try #require(crops[1])
        #expect(tall.height == SpineCrop.longEdge)
        #expect(abs(tall.width - SpineCrop.longEdge / 6) <= 2, "\(tall.width)x\(tall.height)")
        #expect(square.width == square.height && square.width <= SpineCrop.longEdge)
        for crop in [tall, square] {
            let info = try JPEGInfo(crop.jpeg)
            #expect(info.width == crop.width && info.height == crop.height)
        }
        #expect(try Self.meanLuma(tall.jpeg) > 220, "only the bright band")
        #expect(abs(try Self.meanLuma(square.jpeg) - 128) < 8, "only the grey band")
    }

    @Test func aHostileBoxGivesNoCrop() throws {
        let hostile = [
            SpineCrop.Box(x: .nan, y: 0.1, width: 0.1, height: 0.5),
            SpineCrop.Box(x: 0.1, y: 0.1, width: .infinity, height: 0.5),
            SpineCrop.Box(x: -2, y: 0.1, width: 1, height: 0.5),  // wholly left of the photo
            SpineCrop.Box(x: 1.5, y: 0.1, width: 0.2, height: 0.5),  // wholly right of it
            SpineCrop.Box(x: 0.2, y: 0.1, width: 0, height: 0.5),  // no area
            SpineCrop.Box(x: 0.2, y: 0.1, width: 0.3, height: -0.5),
            SpineCrop.Box(x: 0.2, y: 0.1, width: 0.001, height: 0.5),  // under a pixel and a half wide
            SpineCrop.Box(x: -.greatestFiniteMagnitude, y: 0, width: .greatestFiniteMagnitude, height: 1),
        ]
        let crops = try SpineCrop.crops(photo: try Self.photo(), boxes: hostile, source: "the test photo")
        #expect(crops.count == hostile.count)
        #expect(crops.allSatisfy { $0 == nil })
    }

    @Test func aBoxOverTheEdgeIsClampedToThePhoto() throws {
        let edge = SpineCrop.region(of: .init(x: -0.5, y: 0.9, width: 1, height: 0.5), width: 800, height: 600)
        #expect(edge.map { [$0.x, $0.y, $0.width, $0.height] } == [0, 540, 400, 60])
        let huge = SpineCrop.region(of: .init(x: 0.5, y: 0, width: 1e308, height: 1e308), width: 800, height: 600)
        #expect(huge.map { [$0.x, $0.y, $0.width, $0.height] } == [400, 0, 400, 600])
        // The minimum counts pixels of the photo, not of a smaller decode of it.
        let thin = SpineCrop.Box(x: 0.5, y: 0, width: 0.005, height: 1)  // 8 of 1600 pixels
        #expect(SpineCrop.region(of: thin, width: 200, height: 150, photoWidth: 1600, photoHeight: 1200) != nil)
        #expect(SpineCrop.region(of: thin, width: 800, height: 600) == nil)
    }

    @Test func aPhotoThatIsNotAJPEGThrowsNamingIt() {
        #expect(throws: ImagingError.self) {
            _ = try SpineCrop.crops(photo: [1, 2, 3, 4], boxes: [.init(x: 0, y: 0, width: 1, height: 1)], source: "x")
        }
    }
}
