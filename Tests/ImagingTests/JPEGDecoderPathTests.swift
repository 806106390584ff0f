import Imaging
import SwiftWingCore
import SwiftWingTesting
import Testing

@Suite("JPEG decoder paths agree")
struct JPEGDecoderPathTests {
    @Test("half-scale decode (YCbCr scanlines, chroma averaged) matches full decode (raw planes) halved")
    func scanlinePathMatchesRawPath() throws {
        let path = try #require(ImagingFixtures.shelfPhoto())
        let full = try JPEGDecoder().decode(contentsOf: path)  // raw 4:2:0 planes
        let half = try JPEGDecoder().decode(contentsOf: path, minimumWidth: 2312, minimumHeight: 1734)
        #expect(half.width == 2312 && half.height == 1734)
        let halved = try YUV420Scaler().resized(full, width: 2312, height: 1734)  // exact 2x box
        #expect(ImagingFixtures.meanAbsoluteLumaDifference(half, halved) < 3)
        // Chroma in the same place and scale: compare a coarse grid.
        var chromaError = 0
        var samples = 0
        for y in stride(from: 0, to: half.layout.chromaHeight, by: 31) {
            for x in stride(from: 0, to: half.layout.chromaWidth, by: 29) {
                chromaError += abs(Int(ImagingFixtures.cb(half, x, y)) - Int(ImagingFixtures.cb(halved, x, y)))
                chromaError += abs(Int(ImagingFixtures.cr(half, x, y)) - Int(ImagingFixtures.cr(halved, x, y)))
                samples += 2
            }
        }
        #expect(Double(chromaError) / Double(samples) < 3)
    }
}
