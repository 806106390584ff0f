import Imaging
import SwiftWingCore
import SwiftWingTesting
import Testing

@Suite("Imaging fixtures")
struct ImagingFixturesTests {
    @Test("a shelf frame has exactly the camera size asked for")
    func shelfFrame() throws {
        let frame = try #require(try ImagingFixtures.shelfFrame(width: 1280, height: 720))
        #expect(frame.width == 1280 && frame.height == 720)
    }
}
