import SwiftWingCore

/// Made-worse copies of a frame — out of focus, underexposed — for calibrating and testing the
/// quality check on real pictures. Only the Y plane changes; chroma is copied.
public enum FrameDegradation {
    /// The frame as a lens out of focus would give it: each luma pixel the mean of the
    /// (2·radius+1)² box around it.
    public static func blurred(_ frame: YUV420Frame, radius: Int) -> YUV420Frame {
        let copy = copied(frame)
        let layout = frame.layout
        let source = UnsafeRawBufferPointer(frame.luma)
        let grey = GreyImage(source, width: layout.width, height: layout.height, stride: layout.lumaStride)
            .boxBlurred(radius: radius)
        let target = copy.luma
        for row in 0..<layout.height {
            for column in 0..<layout.width {
                target[row * layout.lumaStride + column] = grey.pixels[row * layout.width + column]
            }
        }
        return copy
    }

    /// The frame as a sensor with `gain` times the light would give it (0.25: two stops under).
    public static func darkened(_ frame: YUV420Frame, gain: Double) -> YUV420Frame {
        let copy = copied(frame)
        let layout = frame.layout
        let target = copy.luma
        for row in 0..<layout.height {
            for column in 0..<layout.width {
                let index = row * layout.lumaStride + column
                target[index] = UInt8(clamping: Int((Double(target[index]) * gain).rounded()))
            }
        }
        return copy
    }

    private static func copied(_ frame: YUV420Frame) -> YUV420Frame {
        let copy = YUV420Frame(layout: frame.layout, timestamp: frame.timestamp, sequence: frame.sequence)
        let planes = UnsafeRawBufferPointer(rebasing: frame.buffer.bytes[0..<frame.layout.byteCount])
        copy.buffer.bytes.copyMemory(from: planes)
        return copy
    }
}
