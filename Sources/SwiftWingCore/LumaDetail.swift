/// Parts of a frame's luma at the resolution the camera captured it, kept beside a frame the camera scaled down:
/// the barcode reader reads a region again from them when the scaling shrank its code below what ZBar can resolve.
/// A few hundred kilobytes instead of the whole 12 MP frame, which the capture loop never copies.
public struct LumaDetail: Sendable {
    /// A packed (stride = width) piece of the captured luma plane, placed in its pixels.
    public struct Crop: Sendable, Hashable {
        public var x: Int
        public var y: Int
        public var width: Int
        public var height: Int
        public var pixels: [UInt8]
        /// Whether the bars of the code that may be here run up and down (read along rows) or across (columns).
        public var barsVertical = true
        /// A faint candidate (few bar cells, loosely packed: lettering, grain): read only while the frame has given
        /// no code, as the reader does with such regions of the frame itself.
        public var faint = false

        public init(x: Int, y: Int, width: Int, height: Int, pixels: [UInt8]) {
            precondition(width > 0 && height > 0 && pixels.count == width * height, "a crop holds its pixels")
            self.x = x
            self.y = y
            self.width = width
            self.height = height
            self.pixels = pixels
        }

        /// Copies `width` x `height` pixels at (`x`, `y`) of a plane whose rows are `stride` bytes apart.
        public init(copying plane: UnsafeRawBufferPointer, stride: Int, x: Int, y: Int, width: Int, height: Int) {
            precondition(x >= 0 && y >= 0 && width > 0 && height > 0 && x + width <= stride)
            precondition(plane.count >= (y + height - 1) * stride + x + width, "the crop lies inside the plane")
            let pixels = [UInt8](unsafeUninitializedCapacity: width * height) { output, count in
                for row in 0..<height {
                    UnsafeMutableRawPointer(output.baseAddress! + row * width)
                        .copyMemory(from: plane.baseAddress! + (y + row) * stride + x, byteCount: width)
                }
                count = width * height
            }
            self.init(x: x, y: y, width: width, height: height, pixels: pixels)
        }

        func contains(x left: Int, y top: Int, width: Int, height: Int) -> Bool {
            left >= x && top >= y && left + width <= x + self.width && top + height <= y + self.height
        }
    }

    /// The captured frame's size, which the crops' coordinates are in.
    public var width: Int
    public var height: Int
    public var crops: [Crop]

    public init(width: Int, height: Int, crops: [Crop]) {
        self.width = width
        self.height = height
        self.crops = crops
    }

    /// The pixels of the rectangle (packed), when one crop holds all of it.
    public func pixels(x: Int, y: Int, width: Int, height: Int) -> [UInt8]? {
        guard width > 0, height > 0,
            let crop = crops.first(where: { $0.contains(x: x, y: y, width: width, height: height) })
        else { return nil }
        if crop.x == x, crop.y == y, crop.width == width, crop.height == height { return crop.pixels }
        var pixels: [UInt8] = []
        pixels.reserveCapacity(width * height)
        for row in 0..<height {
            let start = (y - crop.y + row) * crop.width + (x - crop.x)
            pixels.append(contentsOf: crop.pixels[start..<(start + width)])
        }
        return pixels
    }

    /// The same detail for the frame turned clockwise by `quarterTurns` x 90°.
    public func turned(clockwiseQuarterTurns quarterTurns: Int) -> LumaDetail {
        let turns = ((quarterTurns % 4) + 4) % 4
        guard turns != 0 else { return self }
        var result = self
        for _ in 0..<turns { result = result.turnedOnce() }
        return result
    }

    /// Turned 90° clockwise: a pixel at (x, y) of a W x H picture goes to (H - 1 - y, x).
    private func turnedOnce() -> LumaDetail {
        let crops = crops.map { crop in
            var pixels = [UInt8](repeating: 0, count: crop.pixels.count)
            for row in 0..<crop.height {
                for column in 0..<crop.width {
                    pixels[column * crop.height + (crop.height - 1 - row)] = crop.pixels[row * crop.width + column]
                }
            }
            var turned = Crop(
                x: height - crop.y - crop.height, y: crop.x, width: crop.height, height: crop.width, pixels: pixels)
            turned.barsVertical = !crop.barsVertical
            turned.faint = crop.faint
            return turned
        }
        return LumaDetail(width: height, height: width, crops: crops)
    }

    /// Bytes held by the crops.
    public var byteCount: Int { crops.reduce(0) { $0 + $1.pixels.count } }
}
