import Imaging
import SwiftWingCore
import SwiftWingTesting
import Testing

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
