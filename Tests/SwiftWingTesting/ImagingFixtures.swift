import Imaging
import SwiftWingCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Test pictures: the shared shelf photos on disk and synthetic YUV420 frames with known content.
public enum ImagingFixtures {
    /// The path of a shipped shelf photo (e.g. "one_shelf.jpg"), or `nil` when it is missing: callers
    /// `#require` it, so a checkout without its fixtures fails instead of skipping.
    public static func shelfPhoto(_ name: String = "one_shelf.jpg") -> String? {
        let path = (ShippedFiles.folder("shelves") ?? ShippedFiles.sourceTree + "/Fixtures/shelves") + "/" + name
        return access(path, R_OK) == 0 ? path : nil
    }

    /// A shelf photo as a camera frame of exactly `width` x `height` (decoded at the cheapest DCT
    /// scale that covers the size, then center-cropped and area-scaled), or `nil` when the fixtures
    /// are not present.
    public static func shelfFrame(width: Int, height: Int, photo: String = "one_shelf.jpg") throws(ImagingError)
        -> YUV420Frame?
    {
        guard let path = shelfPhoto(photo) else { return nil }
        let decoded = try JPEGDecoder().decode(contentsOf: path, minimumWidth: width, minimumHeight: height)
        return try YUV420Scaler().resized(decoded, width: width, height: height)
    }

    /// A frame whose every sample is `value(x, y)` in luma and `chroma(x, y)` in Cb and Cr (at chroma
    /// coordinates); row padding beyond the width is filled with 0xEE so a reader that strays shows.
    public static func frame(
        width: Int, height: Int, lumaStride: Int? = nil, chromaStride: Int? = nil,
        luma: (Int, Int) -> UInt8, chroma: (Int, Int) -> (cb: UInt8, cr: UInt8) = { _, _ in (128, 128) }
    ) -> YUV420Frame {
        let layout = YUV420Layout(width: width, height: height, lumaStride: lumaStride, chromaStride: chromaStride)
        let frame = YUV420Frame(layout: layout, timestamp: MonotonicInstant(nanoseconds: 1))
        let bytes = frame.buffer.bytes
        bytes.initializeMemory(as: UInt8.self, repeating: 0xEE)
        for y in 0..<height {
            for x in 0..<width { bytes[y * layout.lumaStride + x] = luma(x, y) }
        }
        for y in 0..<layout.chromaHeight {
            for x in 0..<layout.chromaWidth {
                let (cb, cr) = chroma(x, y)
                bytes[layout.cbOffset + y * layout.chromaStride + x] = cb
                bytes[layout.crOffset + y * layout.chromaStride + x] = cr
            }
        }
        return frame
    }

    /// `picture`'s luma in the middle of a mid-grey `width`x`height` frame (a photo lying on a
    /// table), chroma neutral.
    public static func centred(_ picture: YUV420Frame, width: Int, height: Int) -> YUV420Frame {
        let (left, top) = ((width - picture.width) / 2, (height - picture.height) / 2)
        return frame(width: width, height: height) { x, y in
            let (column, row) = (x - left, y - top)
            guard (0..<picture.width).contains(column), (0..<picture.height).contains(row) else { return 128 }
            return picture.luma[row * picture.layout.lumaStride + column]
        }
    }

    /// A smooth test picture: diagonal luma gradient with a soft ripple, chroma gradients.
    public static func gradientFrame(width: Int, height: Int, lumaStride: Int? = nil, chromaStride: Int? = nil)
        -> YUV420Frame
    {
        frame(
            width: width, height: height, lumaStride: lumaStride, chromaStride: chromaStride,
            luma: { x, y in UInt8(truncatingIfNeeded: (x * 200 / max(width, 1) + y * 50 / max(height, 1)) & 0xFF) },
            chroma: { x, y in
                (UInt8(64 + x * 128 / max(width / 2, 1)), UInt8(64 + y * 128 / max(height / 2, 1)))
            })
    }

    /// Luma sample at (x, y).
    public static func luma(_ frame: YUV420Frame, _ x: Int, _ y: Int) -> UInt8 {
        frame.buffer.bytes[y * frame.layout.lumaStride + x]
    }

    /// Cb sample at chroma coordinates (x, y).
    public static func cb(_ frame: YUV420Frame, _ x: Int, _ y: Int) -> UInt8 {
        frame.buffer.bytes[frame.layout.cbOffset + y * frame.layout.chromaStride + x]
    }

    /// Cr sample at chroma coordinates (x, y).
    public static func cr(_ frame: YUV420Frame, _ x: Int, _ y: Int) -> UInt8 {
        frame.buffer.bytes[frame.layout.crOffset + y * frame.layout.chromaStride + x]
    }

    /// Mean absolute difference of the luma planes of two same-size frames (strides may differ).
    public static func meanAbsoluteLumaDifference(_ a: YUV420Frame, _ b: YUV420Frame) -> Double {
        precondition(a.width == b.width && a.height == b.height, "frames differ in size")
        var total = 0
        for y in 0..<a.height {
            for x in 0..<a.width { total += abs(Int(luma(a, x, y)) - Int(luma(b, x, y))) }
        }
        return Double(total) / Double(a.width * a.height)
    }

    /// Whether two frames have the same size and the same samples in all three planes.
    public static func samePixels(_ a: YUV420Frame, _ b: YUV420Frame) -> Bool {
        guard a.width == b.width && a.height == b.height else { return false }
        for y in 0..<a.height {
            for x in 0..<a.width where luma(a, x, y) != luma(b, x, y) { return false }
        }
        for y in 0..<a.layout.chromaHeight {
            for x in 0..<a.layout.chromaWidth where cb(a, x, y) != cb(b, x, y) || cr(a, x, y) != cr(b, x, y) {
                return false
            }
        }
        return true
    }
}
