import Imaging
import SwiftWingCore
import SwiftWingTesting
import Testing

@Suite("Thumbnail")
struct ThumbnailTests {
    @Test("a 1920x1080 scan gives a 160x90 thumbnail JPEG")
    func thumbnail() throws {
        let thumbnail = try Thumbnail(
            of: ImagingFixtures.gradientFrame(width: 1920, height: 1080),
            encoder: JPEGEncoder())
        #expect(thumbnail.width == 160 && thumbnail.height == 90)
        let info = try JPEGInfo(thumbnail.jpeg)
        #expect(info.width == 160 && info.height == 90)
    }
}
