import Imaging
import SwiftWingCore
import SwiftWingTesting
import Testing

@Suite("JPEG encoder, zero-copy")
struct JPEGEncoderLendingTests {
    @Test("withJPEG lends the same bytes encode returns")
    func lendsSameBytes() throws {
        let encoder = try JPEGEncoder()
        let frame = ImagingFixtures.gradientFrame(width: 320, height: 240)
        let copied = try encoder.encode(frame)
        let lent = try encoder.withJPEG(of: frame) { Array($0) }
        #expect(lent == copied)
        #expect(throws: ImagingError.invalidQuality(0)) { try encoder.withJPEG(of: frame, quality: 0) { $0.count } }
    }
}
