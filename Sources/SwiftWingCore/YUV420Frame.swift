/// The geometry of a planar YUV 4:2:0 picture (I420, V4L2 `YU12`): a full-size luma plane, then
/// the Cb plane, then the Cr plane, each chroma plane half the width and height (rounded up).
public struct YUV420Layout: Hashable, Sendable, CustomStringConvertible {
    public var width: Int
    public var height: Int
    /// Bytes per luma row (at least `width`; drivers may pad rows).
    public var lumaStride: Int
    /// Bytes per chroma row (at least `chromaWidth`).
    public var chromaStride: Int

    public init(width: Int, height: Int, lumaStride: Int? = nil, chromaStride: Int? = nil) {
        precondition(width > 0 && height > 0, "a picture has at least one pixel")
        self.width = width
        self.height = height
        self.lumaStride = lumaStride ?? width
        self.chromaStride = chromaStride ?? (width + 1) / 2
        precondition(self.lumaStride >= width && self.chromaStride >= (width + 1) / 2)
    }

    public var chromaWidth: Int { (width + 1) / 2 }
    public var chromaHeight: Int { (height + 1) / 2 }
    public var lumaSize: Int { lumaStride * height }
    public var chromaSize: Int { chromaStride * chromaHeight }
    public var cbOffset: Int { lumaSize }
    public var crOffset: Int { lumaSize + chromaSize }
    /// Total bytes of the three planes.
    public var byteCount: Int { lumaSize + 2 * chromaSize }

    public var description: String { "\(width)x\(height) YUV420" }
}

/// One planar YUV 4:2:0 picture in a ``PixelBuffer``, with the time the sensor took it.
public struct YUV420Frame: Sendable {
    public var layout: YUV420Layout
    public var buffer: PixelBuffer
    /// When the frame was captured, on `CLOCK_MONOTONIC` (the driver's timestamp for a camera).
    public var timestamp: MonotonicInstant
    /// The driver's frame counter (or the source's own), for spotting dropped frames.
    public var sequence: UInt32
    /// Barcode-like regions at the resolution the camera captured, when it scaled this frame down from more pixels.
    public var detail: LumaDetail?

    public init(layout: YUV420Layout, buffer: PixelBuffer, timestamp: MonotonicInstant, sequence: UInt32 = 0) {
        precondition(buffer.capacity >= layout.byteCount, "buffer too small for \(layout)")
        self.layout = layout
        self.buffer = buffer
        self.timestamp = timestamp
        self.sequence = sequence
    }

    /// A frame in a fresh buffer of its own.
    public init(layout: YUV420Layout, timestamp: MonotonicInstant = .now(), sequence: UInt32 = 0) {
        self.init(
            layout: layout, buffer: PixelBuffer(capacity: layout.byteCount), timestamp: timestamp, sequence: sequence)
    }

    public var width: Int { layout.width }
    public var height: Int { layout.height }

    public var luma: UnsafeMutableRawBufferPointer {
        UnsafeMutableRawBufferPointer(rebasing: buffer.bytes[0..<layout.lumaSize])
    }

    public var cb: UnsafeMutableRawBufferPointer {
        UnsafeMutableRawBufferPointer(rebasing: buffer.bytes[layout.cbOffset..<(layout.cbOffset + layout.chromaSize)])
    }

    public var cr: UnsafeMutableRawBufferPointer {
        UnsafeMutableRawBufferPointer(rebasing: buffer.bytes[layout.crOffset..<(layout.crOffset + layout.chromaSize)])
    }
}
