import Imaging
import SwiftWingCore
import SwiftWingTesting
import Testing

@Suite("JPEG decoder")
struct JPEGDecoderTests {
    @Test("the shelf photo decodes to a full-size YUV420 frame with plausible content")
    func decodesShelfPhoto() throws {
        let path = try #require(ImagingFixtures.shelfPhoto(), "Fixtures/shelves/one_shelf.jpg is missing from the checkout")
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

@Suite("JPEG decoder errors")
struct JPEGDecoderErrorTests {
    @Test("garbage is reported as not a JPEG, naming the source")
    func garbage() {
        let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + Array(repeating: 7, count: 100)
        #expect {
            try JPEGDecoder().decode(png, source: "shelf.png")
        } throws: { error in
            guard case .notJPEG(let source, _) = error as? ImagingError else { return false }
            return source == "shelf.png" && "\(error)".contains("shelf.png") && "\(error)".contains("89 50")
        }
        #expect(throws: ImagingError.self) { try JPEGInfo([], source: "empty") }
        // Starts like a JPEG, then nonsense: libjpeg's own error, not exit().
        #expect(throws: ImagingError.self) {
            try JPEGDecoder().decode([0xFF, 0xD8] + Array(repeating: 0x42, count: 64))
        }
    }

    @Test("a truncated JPEG is a corruptJPEG error, not a grey-bottomed picture or a crash")
    func truncated() throws {
        let encoder = try JPEGEncoder()
        let jpeg = try encoder.encode(ImagingFixtures.gradientFrame(width: 320, height: 240))
        for keep in [jpeg.count / 2, jpeg.count - 10, 700] {
            #expect {
                try JPEGDecoder().decode(Array(jpeg.prefix(keep)), source: "frame 12")
            } throws: { error in
                guard case .corruptJPEG(let source, _) = error as? ImagingError else { return false }
                return source == "frame 12"
            }
        }
        // The untouched file still decodes.
        #expect(try JPEGDecoder().decode(jpeg).width == 320)
    }

    @Test("a truncated shelf photo file is reported with its path")
    func truncatedFile() throws {
        let path = try #require(ImagingFixtures.shelfPhoto())
        let whole = try #require(FileBytes.read(path))
        let truncatedPath = FileBytes.temporaryPath("truncated.jpg")
        try #require(FileBytes.write(Array(whole.prefix(whole.count / 3)), to: truncatedPath))
        defer { FileBytes.remove(truncatedPath) }
        #expect {
            try JPEGDecoder().decode(contentsOf: truncatedPath)
        } throws: { error in
            guard case .corruptJPEG(let source, _) = error as? ImagingError else { return false }
            return source == truncatedPath && "\(error)".contains(truncatedPath)
        }
        // The header is intact, so the size can still be read.
        #expect(try JPEGInfo(contentsOf: truncatedPath).width == 4624)
    }

    @Test("a missing file is unreadableFile with the path")
    func missingFile() {
        #expect(
            throws: ImagingError.unreadableFile(path: "/nonexistent/x.jpg", reason: "open: No such file or directory")
        ) {
            try JPEGDecoder().decode(contentsOf: "/nonexistent/x.jpg")
        }
    }
}

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

@Suite("Imaging fixtures")
struct ImagingFixturesTests {
    @Test("a shelf frame has exactly the camera size asked for")
    func shelfFrame() throws {
        let frame = try #require(try ImagingFixtures.shelfFrame(width: 1280, height: 720))
        #expect(frame.width == 1280 && frame.height == 720)
    }
}
