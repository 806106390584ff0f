import Foundation
import Imaging
import Store

/// A book without a cover URL shown by its own spine: the scan's photo cut to the book's bounding box and
/// shrunk to a tile, while the photo is still in the spool.
enum SpineCover {
    /// The long edge of the picture sent: a tile is at most about 200 CSS pixels tall on a phone.
    static let longEdge = 320
    static let quality = 80

    /// Where the backend saw the spine (docs/protocol.md §3): fractions 0–1 of the photo.
    struct Box: Equatable, Decodable {
        var x: Double
        var y: Double
        var width: Double
        var height: Double
    }

    private struct Described: Decodable {
        var boundingBox: Box?
    }

    /// The bounding box in a book's raw JSON, when it is there and lies at least partly inside the photo.
    static func box(inRawJSON json: String?) -> Box? {
        guard let json, json.contains("boundingBox"),
            let box = (try? JSONDecoder().decode(Described.self, from: Data(json.utf8)))?.boundingBox
        else { return nil }
        let values = [box.x, box.y, box.width, box.height]
        guard values.allSatisfy(\.isFinite), box.width > 0, box.height > 0, box.x < 1, box.y < 1,
            box.x + box.width > 0, box.y + box.height > 0
        else { return nil }
        return box
    }

    /// The box in pixels of a `width` x `height` photo, cut to the photo's edges.
    static func pixels(of box: Box, width: Int, height: Int) -> (x: Int, y: Int, width: Int, height: Int) {
        let left = Int((max(box.x, 0) * Double(width)).rounded(.down))
        let top = Int((max(box.y, 0) * Double(height)).rounded(.down))
        let right = Int((min(box.x + box.width, 1) * Double(width)).rounded(.up))
        let bottom = Int((min(box.y + box.height, 1) * Double(height)).rounded(.up))
        return (left, top, max(right - left, 1), max(bottom - top, 1))
    }

    /// The JPEG of the spine: the photo decoded only as large as the tile needs (libjpeg's DCT scaling keeps a
    /// 12 MP photo from costing 18 MB of pixels), cut to `box`, shrunk, encoded. `source` names the photo in errors.
    static func jpeg(photo: [UInt8], box: Box, source: String) throws(ImagingError) -> [UInt8] {
        let info = try JPEGInfo(photo, source: source)
        let full = pixels(of: box, width: info.width, height: info.height)
        let tile = YUV420Scaler.downscaledSize(width: full.width, height: full.height, maxLongEdge: longEdge)
        // The smallest decode in which the box still covers the tile's pixels.
        let minimumWidth = min(
            info.width, Int((Double(tile.width) * Double(info.width) / Double(full.width)).rounded(.up)))
        let minimumHeight = min(
            info.height, Int((Double(tile.height) * Double(info.height) / Double(full.height)).rounded(.up)))
        let frame = try JPEGDecoder().decode(
            photo, minimumWidth: minimumWidth, minimumHeight: minimumHeight, source: source)
        let region = pixels(of: box, width: frame.width, height: frame.height)
        let crop = try YUV420Scaler().cropped(
            frame, x: region.x, y: region.y, width: region.width, height: region.height, maxLongEdge: longEdge)
        return try JPEGEncoder(quality: quality).encode(crop)
    }
}
