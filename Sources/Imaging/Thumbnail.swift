import SwiftWingCore

/// A small picture of a scan for the status panel: the frame shrunk (area average) so its long
/// edge is at most 160 pixels, and the same picture as a JPEG.
public struct Thumbnail: Sendable {
    /// The long edge of a thumbnail unless told otherwise: 160 pixels.
    public static let defaultLongEdge = 160

    /// The shrunk picture, for drawing straight onto the panel.
    public let frame: YUV420Frame
    /// The shrunk picture as a JPEG file, for storing next to the scan.
    public let jpeg: [UInt8]

    public var width: Int { frame.width }
    public var height: Int { frame.height }

    /// Makes the thumbnail of `frame` with `encoder` (at the encoder's quality).
    /// - Parameters:
    ///   - longEdge: the long edge at most; 160 by default. A smaller frame is not enlarged.
    ///   - encoder: the worker's encoder (it is reused; thumbnails cost a fraction of a scan).
    ///   - scaler: the scaler, with the worker's pool if any.
    public init(
        of frame: YUV420Frame, longEdge: Int = Thumbnail.defaultLongEdge, encoder: JPEGEncoder,
        scaler: YUV420Scaler = YUV420Scaler()
    ) throws(ImagingError) {
        let small = try scaler.downscaled(frame, maxLongEdge: longEdge)
        self.frame = small
        self.jpeg = try encoder.encode(small)
    }
}
