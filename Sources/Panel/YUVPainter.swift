import SwiftWingCore

/// Paints a planar YUV 4:2:0 frame into a rectangle of a ``PanelImage``, converting to RGB only
/// for the pixels of that rectangle (nearest-neighbour scaling: the frame is already downscaled
/// for the viewfinder and thumbnails, so this touches each destination pixel once).
enum YUVPainter {
    enum Fit {
        /// The whole frame visible, bars around it (thumbnails).
        case fit
        /// The box filled, the frame cropped (viewfinder).
        case fill
    }

    /// BT.601 limited range ("video" levels, what V4L2 cameras and libjpeg's YCbCr deliver).
    @inline(__always)
    static func rgb(y: Int, cb: Int, cr: Int) -> UInt32 {
        let c = 298 * (y - 16) + 128
        let d = cb - 128
        let e = cr - 128
        let r = min(max((c + 409 * e) >> 8, 0), 255)
        let g = min(max((c - 100 * d - 208 * e) >> 8, 0), 255)
        let b = min(max((c + 516 * d) >> 8, 0), 255)
        return UInt32(r) << 16 | UInt32(g) << 8 | UInt32(b)
    }

    /// Paints `frame` into `box` of `image`; returns the rectangle actually covered.
    @discardableResult
    static func paint(_ frame: YUV420Frame, into box: PanelRect, of image: PanelImage, fit: Fit) -> PanelRect {
        let clippedBox = box.intersection(PanelRect(x: 0, y: 0, width: image.width, height: image.height))
        guard !clippedBox.isEmpty else { return clippedBox }
        let layout = frame.layout
        // Scale so the frame fits (or fills) the box, keeping its aspect ratio.
        let scaleX = Double(box.width) / Double(layout.width)
        let scaleY = Double(box.height) / Double(layout.height)
        let scale = fit == .fit ? min(scaleX, scaleY) : max(scaleX, scaleY)
        let drawnWidth = max(1, Int((Double(layout.width) * scale).rounded()))
        let drawnHeight = max(1, Int((Double(layout.height) * scale).rounded()))
        let drawn = PanelRect(
            x: box.x + (box.width - drawnWidth) / 2, y: box.y + (box.height - drawnHeight) / 2,
            width: drawnWidth, height: drawnHeight
        ).intersection(clippedBox)
        guard !drawn.isEmpty else { return drawn }
        let originX = box.x + (box.width - drawnWidth) / 2
        let originY = box.y + (box.height - drawnHeight) / 2

        // Source column for each destination column, computed once (16.16 fixed point).
        let stepX = (layout.width << 16) / drawnWidth
        let stepY = (layout.height << 16) / drawnHeight
        var sourceColumns = [Int](repeating: 0, count: drawn.width)
        for i in 0..<drawn.width {
            sourceColumns[i] = min(((drawn.x - originX + i) * stepX + stepX / 2) >> 16, layout.width - 1)
        }
        let luma = UnsafeRawPointer(frame.luma.baseAddress!).assumingMemoryBound(to: UInt8.self)
        let cbPlane = UnsafeRawPointer(frame.cb.baseAddress!).assumingMemoryBound(to: UInt8.self)
        let crPlane = UnsafeRawPointer(frame.cr.baseAddress!).assumingMemoryBound(to: UInt8.self)
        let stride = image.stride
        image.withPixels { pixels in
            sourceColumns.withUnsafeBufferPointer { columns in
                for row in 0..<drawn.height {
                    let sy = min(((drawn.y - originY + row) * stepY + stepY / 2) >> 16, layout.height - 1)
                    let lumaRow = luma + sy * layout.lumaStride
                    let chromaOffset = (sy >> 1) * layout.chromaStride
                    let cbRow = cbPlane + chromaOffset
                    let crRow = crPlane + chromaOffset
                    let out = (pixels + (drawn.y + row) * stride).assumingMemoryBound(to: UInt32.self) + drawn.x
                    for i in 0..<drawn.width {
                        let sx = columns[i]
                        out[i] = rgb(y: Int(lumaRow[sx]), cb: Int(cbRow[sx >> 1]), cr: Int(crRow[sx >> 1]))
                    }
                }
            }
        }
        return drawn
    }
}
