import SwiftWingCore

/// A book's own picture for the library when it has no cover URL: the scan's photo cut to the book's bounding box
/// and shrunk to a tile. The box comes from the backend and is treated as hostile: it is clamped to the photo, and a
/// box that is not finite, has no area or leaves fewer than ``minimumEdge`` pixels inside the photo gives no crop.
public enum SpineCrop {
    /// The long edge of a crop: a library tile is at most about 200 CSS pixels tall on a phone, and at 2–5 KB a
    /// spine (Benchmarks/README.md) 10,000 books keep 25–40 MB of them, a small part of the SD card.
    public static let longEdge = 320
    /// Enough for the words on a spine at tile size, at about a third of the bytes of quality 95.
    public static let quality = 80
    /// A box narrower or shorter than this in the photo's pixels is a point or a line, not a book.
    public static let minimumEdge = 8

    /// Where on a photo the backend saw a book: fractions 0–1 of its width and height.
    public struct Box: Hashable, Sendable {
        public var x: Double
        public var y: Double
        public var width: Double
        public var height: Double

        public init(x: Double, y: Double, width: Double, height: Double) {
            self.x = x
            self.y = y
            self.width = width
            self.height = height
        }
    }

    /// A crop: the JPEG and its size in pixels.
    public struct Crop: Hashable, Sendable {
        public var jpeg: [UInt8]
        public var width: Int
        public var height: Int
    }

    /// The part of a `width` x `height` picture inside `box`, in whole pixels, or `nil` when the box is not finite,
    /// has no area, or leaves less than ``minimumEdge`` pixels of the photo either way (`minimumEdge` counts pixels
    /// of `photoWidth`, so a picture decoded smaller keeps the same boxes).
    public static func region(
        of box: Box, width: Int, height: Int, photoWidth: Int? = nil, photoHeight: Int? = nil
    ) -> (x: Int, y: Int, width: Int, height: Int)? {
        guard width > 0, height > 0, [box.x, box.y, box.width, box.height].allSatisfy(\.isFinite),
            box.width > 0, box.height > 0
        else { return nil }
        // Clamped in fractions first: x + width may overflow to infinity, which min() turns back into 1.
        let left = min(max(box.x, 0), 1)
        let top = min(max(box.y, 0), 1)
        let right = min(max(box.x + box.width, 0), 1)
        let bottom = min(max(box.y + box.height, 0), 1)
        let fullWidth = Double(photoWidth ?? width)
        let fullHeight = Double(photoHeight ?? height)
        guard (right - left) * fullWidth >= Double(minimumEdge), (bottom - top) * fullHeight >= Double(minimumEdge)
        else { return nil }
        let x = Int((left * Double(width)).rounded(.down))
        let y = Int((top * Double(height)).rounded(.down))
        let r = min(Int((right * Double(width)).rounded(.up)), width)
        let b = min(Int((bottom * Double(height)).rounded(.up)), height)
        guard r > x, b > y else { return nil }
        return (x, y, r - x, b - y)
    }

    /// The crops of `boxes` on the JPEG file at `path` (read whole), in order; errors name the file.
    public static func crops(photoAt path: String, boxes: [Box]) throws(ImagingError) -> [Crop?] {
        try crops(photo: try readWholeFile(path), boxes: boxes, source: path)
    }

    /// The crops of `boxes` on the JPEG `photo`, in order, `nil` for a box that gives none. The photo is decoded
    /// once, only as large as the largest crop needs (libjpeg's DCT scaling: a 12 MP photo does not cost 18 MB of
    /// pixels for a few tiles). Throws when the photo cannot be decoded; `source` names it in errors.
    public static func crops(photo: [UInt8], boxes: [Box], source: String) throws(ImagingError) -> [Crop?] {
        let info = try JPEGInfo(photo, source: source)
        let regions = boxes.map { region(of: $0, width: info.width, height: info.height) }
        guard regions.contains(where: { $0 != nil }) else { return regions.map { _ in nil } }
        // The smallest decode in which every box still covers its tile's pixels.
        var minimumWidth = 0
        var minimumHeight = 0
        for case let full? in regions {
            let tile = YUV420Scaler.downscaledSize(width: full.width, height: full.height, maxLongEdge: longEdge)
            minimumWidth = max(minimumWidth, Int((Double(tile.width * info.width) / Double(full.width)).rounded(.up)))
            minimumHeight = max(
                minimumHeight, Int((Double(tile.height * info.height) / Double(full.height)).rounded(.up)))
        }
        let frame = try JPEGDecoder().decode(
            photo, minimumWidth: min(minimumWidth, info.width), minimumHeight: min(minimumHeight, info.height),
            source: source)
        let encoder = try JPEGEncoder(quality: quality)
        let scaler = YUV420Scaler()
        return try boxes.map { (box) throws(ImagingError) -> Crop? in
            guard
                let part = region(
                    of: box, width: frame.width, height: frame.height, photoWidth: info.width,
                    photoHeight: info.height)
            else { return nil }
            let small = try scaler.cropped(
                frame, x: part.x, y: part.y, width: part.width, height: part.height, maxLongEdge: longEdge)
            return Crop(jpeg: try encoder.encode(small), width: small.width, height: small.height)
        }
    }
}
