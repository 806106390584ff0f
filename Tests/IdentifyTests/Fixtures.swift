import Foundation
import Identify
import SwiftWingCore
import Testing

/// The repository's picture fixtures (Fixtures/), and frames made from them.
enum Fixtures {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path
    static let barcodes = repository + "/Fixtures/barcodes"
    static let shelves = repository + "/Fixtures/shelves"

    /// The pictures of a ZXing test set with the digits each encodes; fails the test when the set
    /// is missing or incomplete.
    static func barcodeSet(_ name: String, expectedCount: Int) throws -> [(path: String, digits: String)] {
        let directory = barcodes + "/" + name
        let names = try #require(
            try? FileManager.default.contentsOfDirectory(atPath: directory),
            "the barcode fixtures are missing: \(directory)")
        let cases = try names.filter { $0.hasSuffix(".png") }.sorted().map { name in
            let path = directory + "/" + name
            let digits = try #require(
                try? String(contentsOfFile: path.replacingOccurrences(of: ".png", with: ".txt"), encoding: .utf8),
                "\(path) has no .txt with its digits beside it")
            return (path, digits.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        try #require(cases.count == expectedCount, "\(directory) should hold \(expectedCount) pictures")
        return cases
    }

    static func frame(_ path: String) throws -> YUV420Frame {
        try PictureFile.frame(contentsOf: path)
    }

    /// `picture`'s luma pasted into the middle of a copy of `background` (chroma left as it was).
    static func pasted(_ picture: YUV420Frame, into background: YUV420Frame) -> YUV420Frame {
        let result = YUV420Frame(layout: background.layout)
        result.buffer.bytes.copyMemory(
            from: UnsafeRawBufferPointer(rebasing: background.buffer.bytes[0..<background.layout.byteCount]))
        let x0 = (background.width - picture.width) / 2
        let y0 = (background.height - picture.height) / 2
        for row in 0..<picture.height {
            for column in 0..<picture.width {
                result.luma[(y0 + row) * result.layout.lumaStride + x0 + column] =
                    picture.luma[row * picture.layout.lumaStride + column]
            }
        }
        return result
    }

    /// `pictures` side by side on a mid-grey frame (a table top), `gap` pixels apart (luma only;
    /// chroma neutral).
    static func sideBySide(_ pictures: [YUV420Frame], gap: Int = 40) -> YUV420Frame {
        let width = pictures.map(\.width).reduce(gap, +) + gap * pictures.count
        let height = pictures.map(\.height).max()! + 2 * gap
        let frame = YUV420Frame(layout: YUV420Layout(width: width, height: height))
        frame.buffer.bytes.initializeMemory(as: UInt8.self, repeating: 128)
        frame.cb.initializeMemory(as: UInt8.self, repeating: 128)
        frame.cr.initializeMemory(as: UInt8.self, repeating: 128)
        var x0 = gap
        for picture in pictures {
            for row in 0..<picture.height {
                for column in 0..<picture.width {
                    frame.luma[(gap + row) * width + x0 + column] =
                        picture.luma[row * picture.layout.lumaStride + column]
                }
            }
            x0 += picture.width + gap
        }
        return frame
    }
}
