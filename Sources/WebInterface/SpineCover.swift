import Foundation
import Imaging
import Store

/// A book without a cover URL shown by its own spine: the picture the daemon kept when the book landed, else the
/// scan's photo cut to the book's bounding box while the photo is still in the spool.
enum SpineCover {
    /// The long edge of the picture sent.
    static let longEdge = SpineCrop.longEdge

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

    /// The JPEG of the spine, cut as the daemon cuts it when the books land (``SpineCrop``). `source` names the photo
    /// in errors.
    static func jpeg(photo: [UInt8], box: Box, source: String) throws(ImagingError) -> [UInt8] {
        let cut = SpineCrop.Box(x: box.x, y: box.y, width: box.width, height: box.height)
        guard let crop = try SpineCrop.crops(photo: photo, boxes: [cut], source: source).first ?? nil else {
            throw .invalidSize(width: 0, height: 0, reason: "the bounding box leaves too little of \(source)")
        }
        return crop.jpeg
    }
}
