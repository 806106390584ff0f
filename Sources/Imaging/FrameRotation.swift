import SwiftWingCore

/// How far to turn a picture clockwise, for a camera mounted sideways or upside down.
public enum FrameRotation: Int, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case none = 0
    case clockwise90 = 90
    case upsideDown = 180
    case clockwise270 = 270

    /// The rotation for `degrees` clockwise (0, 90, 180 or 270; -90 and 360 are accepted as 270, 0).
    /// - Throws: ``ImagingError/invalidRotation(degrees:)`` naming the allowed values otherwise.
    public init(degrees: Int) throws(ImagingError) {
        let normalized = ((degrees % 360) + 360) % 360
        guard let rotation = FrameRotation(rawValue: normalized) else { throw .invalidRotation(degrees: degrees) }
        self = rotation
    }

    public var degrees: Int { rawValue }

    /// Whether the output's width and height are the input's height and width.
    public var swapsDimensions: Bool { self == .clockwise90 || self == .clockwise270 }

    /// The rotation that undoes this one.
    public var inverse: FrameRotation { FrameRotation(rawValue: (360 - rawValue) % 360)! }

    public var description: String { "\(rawValue)°" }
}

/// `frame` turned clockwise by `rotation`, in a new buffer (from `pool` when given), or `frame`
/// itself for ``FrameRotation/none``. Meant for the processing worker, not the capture loop.
/// - Throws: ``ImagingError/noFreeBuffer(neededBytes:poolBufferSize:)`` when the pool has none.
public func rotated(_ frame: YUV420Frame, by rotation: FrameRotation, pool: BufferPool? = nil) throws(ImagingError)
    -> YUV420Frame
{
    if rotation == .none { return frame }
    let source = frame.layout
    let layout =
        rotation.swapsDimensions
        ? YUV420Layout(width: source.height, height: source.width)
        : YUV420Layout(width: source.width, height: source.height)
    let buffer: PixelBuffer
    if let pool {
        buffer = try acquireBuffer(from: pool, bytes: layout.byteCount)
    } else {
        buffer = PixelBuffer(capacity: layout.byteCount)
    }
    let output = YUV420Frame(layout: layout, buffer: buffer, timestamp: frame.timestamp, sequence: frame.sequence)
    let from = UnsafeRawPointer(frame.buffer.bytes.baseAddress!)
    let to = output.buffer.bytes.baseAddress!
    rotatePlane(
        from, width: source.width, height: source.height, stride: source.lumaStride,
        into: to, stride: layout.lumaStride, by: rotation)
    for (sourceOffset, targetOffset) in [(source.cbOffset, layout.cbOffset), (source.crOffset, layout.crOffset)] {
        rotatePlane(
            from + sourceOffset, width: source.chromaWidth, height: source.chromaHeight,
            stride: source.chromaStride, into: to + targetOffset, stride: layout.chromaStride, by: rotation)
    }
    return output
}

/// Turns one plane; works in 32x32 tiles so both the reads and the writes stay in cache.
private func rotatePlane(
    _ source: UnsafeRawPointer, width: Int, height: Int, stride sourceStride: Int,
    into target: UnsafeMutableRawPointer, stride targetStride: Int, by rotation: FrameRotation
) {
    let src = source.assumingMemoryBound(to: UInt8.self)
    let dst = target.assumingMemoryBound(to: UInt8.self)
    if rotation == .upsideDown {
        for y in 0..<height {
            let from = src + y * sourceStride
            let to = dst + (height - 1 - y) * targetStride
            for x in 0..<width { to[width - 1 - x] = from[x] }
        }
        return
    }
    let tile = 32
    for tileY in stride(from: 0, to: height, by: tile) {
        for tileX in stride(from: 0, to: width, by: tile) {
            for y in tileY..<min(tileY + tile, height) {
                let from = src + y * sourceStride
                for x in tileX..<min(tileX + tile, width) {
                    // Clockwise 90: (x, y) goes to column height-1-y, row x.
                    // Clockwise 270: (x, y) goes to column y, row width-1-x.
                    if rotation == .clockwise90 {
                        dst[x * targetStride + (height - 1 - y)] = from[x]
                    } else {
                        dst[(width - 1 - x) * targetStride + y] = from[x]
                    }
                }
            }
        }
    }
}
