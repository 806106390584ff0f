/// A packed 8-bit grey picture of its own (no stride), and the cheap enhancements a barcode reader
/// retries with: contrast stretch, unsharp mask, 2x up- and downscaling, cropping.
struct GreyImage: Sendable {
    let width: Int
    let height: Int
    var pixels: [UInt8]

    init(width: Int, height: Int, pixels: [UInt8]) {
        precondition(width > 0 && height > 0 && pixels.count == width * height)
        self.width = width
        self.height = height
        self.pixels = pixels
    }

    /// A packed copy of `width` x `height` pixels of a plane whose rows are `stride` bytes apart.
    init(_ plane: UnsafeRawBufferPointer, width: Int, height: Int, stride: Int) {
        self.init(plane, region: PixelRect(x: 0, y: 0, width: width, height: height), stride: stride)
    }

    /// A packed copy of `region` of a plane whose rows are `stride` bytes apart.
    init(_ plane: UnsafeRawBufferPointer, region: PixelRect, stride: Int) {
        let pixels = [UInt8](unsafeUninitializedCapacity: region.width * region.height) { output, count in
            for row in 0..<region.height {
                let source = (region.y + row) * stride + region.x
                let target = output.baseAddress! + row * region.width
                UnsafeMutableRawPointer(target).copyMemory(from: plane.baseAddress! + source, byteCount: region.width)
            }
            count = region.width * region.height
        }
        self.init(width: region.width, height: region.height, pixels: pixels)
    }

    /// Levels stretched so the darkest and brightest 1 % become 0 and 255: faded print and dim
    /// frames get the edge contrast ZBar's edge detector needs.
    func contrastStretched() -> GreyImage {
        var histogram = [Int](repeating: 0, count: 256)
        for value in pixels { histogram[Int(value)] += 1 }
        let tail = pixels.count / 100
        var low = 0
        var seen = 0
        while low < 255, seen + histogram[low] <= tail {
            seen += histogram[low]
            low += 1
        }
        var high = 255
        seen = 0
        while high > low, seen + histogram[high] <= tail {
            seen += histogram[high]
            high -= 1
        }
        let span = max(1, high - low)
        var table = [UInt8](repeating: 0, count: 256)
        for value in 0..<256 { table[value] = UInt8(clamping: (value - low) * 255 / span) }
        return GreyImage(width: width, height: height, pixels: pixels.map { table[Int($0)] })
    }

    /// Each pixel the mean of the (2·radius+1)² box around it (clipped at the borders).
    func boxBlurred(radius: Int) -> GreyImage {
        sharpened(radius: radius, amount: -1)
    }

    /// An unsharp mask: each pixel pushed away from the mean of its (2r+1)² box by `amount` times
    /// the difference. Brings back bar edges a slightly blurred or soft camera smeared.
    func sharpened(radius: Int = 4, amount: Int = 2) -> GreyImage {
        let sums = integral()
        let stride = width + 1
        var output = [UInt8](repeating: 0, count: pixels.count)
        pixels.withUnsafeBufferPointer { source in
            sums.withUnsafeBufferPointer { integral in
                output.withUnsafeMutableBufferPointer { target in
                    for y in 0..<height {
                        let top = max(0, y - radius)
                        let bottom = min(height, y + radius + 1)
                        for x in 0..<width {
                            let left = max(0, x - radius)
                            let right = min(width, x + radius + 1)
                            let sum =
                                integral[bottom * stride + right] - integral[top * stride + right]
                                - integral[bottom * stride + left] + integral[top * stride + left]
                            let count = (bottom - top) * (right - left)
                            let value = Int(source[y * width + x])
                            target[y * width + x] = UInt8(clamping: value + amount * (value * count - sum) / count)
                        }
                    }
                }
            }
        }
        return GreyImage(width: width, height: height, pixels: output)
    }

    /// Half the size, each pixel the mean of a 2x2 block: a far or very large code reads better
    /// with its noise averaged out, and at a quarter of the cost.
    func halved() -> GreyImage? {
        let halfWidth = width / 2
        let halfHeight = height / 2
        guard halfWidth > 0, halfHeight > 0 else { return nil }
        var output = [UInt8](repeating: 0, count: halfWidth * halfHeight)
        pixels.withUnsafeBufferPointer { source in
            output.withUnsafeMutableBufferPointer { target in
                for y in 0..<halfHeight {
                    let upper = 2 * y * width
                    let lower = upper + width
                    for x in 0..<halfWidth {
                        let sum =
                            Int(source[upper + 2 * x]) + Int(source[upper + 2 * x + 1])
                            + Int(source[lower + 2 * x]) + Int(source[lower + 2 * x + 1])
                        target[y * halfWidth + x] = UInt8((sum + 2) / 4)
                    }
                }
            }
        }
        return GreyImage(width: halfWidth, height: halfHeight, pixels: output)
    }

    /// Twice the size, bilinear: a small code's narrow bars (1-2 pixels) get the width ZBar's
    /// edge detector needs.
    func doubled() -> GreyImage {
        let outputWidth = width * 2
        let outputHeight = height * 2
        var output = [UInt8](repeating: 0, count: outputWidth * outputHeight)
        pixels.withUnsafeBufferPointer { source in
            output.withUnsafeMutableBufferPointer { target in
                for y in 0..<outputHeight {
                    // Sample centres: output pixel y sits at (y + 0.5) / 2 - 0.5 in the source, in quarters.
                    let sourceY4 = max(0, 2 * y - 1)
                    let y0 = min(sourceY4 / 4, height - 1)
                    let y1 = min(y0 + 1, height - 1)
                    let fy = sourceY4 % 4
                    for x in 0..<outputWidth {
                        let sourceX4 = max(0, 2 * x - 1)
                        let x0 = min(sourceX4 / 4, width - 1)
                        let x1 = min(x0 + 1, width - 1)
                        let fx = sourceX4 % 4
                        let top = Int(source[y0 * width + x0]) * (4 - fx) + Int(source[y0 * width + x1]) * fx
                        let bottom = Int(source[y1 * width + x0]) * (4 - fx) + Int(source[y1 * width + x1]) * fx
                        target[y * outputWidth + x] = UInt8((top * (4 - fy) + bottom * fy + 8) / 16)
                    }
                }
            }
        }
        return GreyImage(width: outputWidth, height: outputHeight, pixels: output)
    }

    /// The pixels inside `region` (clipped to the picture).
    func cropped(to region: PixelRect) -> GreyImage {
        let clipped = region.clipped(width: width, height: height)
        return pixels.withUnsafeBytes { bytes in GreyImage(bytes, region: clipped, stride: width) }
    }

    /// Summed-area table, (width+1) x (height+1), for box means in constant time.
    private func integral() -> [Int] {
        let stride = width + 1
        var sums = [Int](repeating: 0, count: stride * (height + 1))
        pixels.withUnsafeBufferPointer { source in
            sums.withUnsafeMutableBufferPointer { table in
                for y in 0..<height {
                    var rowSum = 0
                    for x in 0..<width {
                        rowSum += Int(source[y * width + x])
                        table[(y + 1) * stride + x + 1] = table[y * stride + x + 1] + rowSum
                    }
                }
            }
        }
        return sums
    }
}

/// A rectangle of pixels, in the coordinates of the picture it was found in.
struct PixelRect: Sendable, Hashable {
    var x: Int, y: Int, width: Int, height: Int

    var area: Int { width * height }

    /// The part of this rectangle inside a `width` x `height` picture (at least one pixel).
    func clipped(width pictureWidth: Int, height pictureHeight: Int) -> PixelRect {
        let left = min(max(0, x), pictureWidth - 1)
        let top = min(max(0, y), pictureHeight - 1)
        let right = max(left + 1, min(pictureWidth, x + width))
        let bottom = max(top + 1, min(pictureHeight, y + height))
        return PixelRect(x: left, y: top, width: right - left, height: bottom - top)
    }

    /// This rectangle in a picture `x` times as wide and `y` times as tall, rounded outwards.
    func scaled(x factorX: Double, y factorY: Double) -> PixelRect {
        let left = Int((Double(x) * factorX).rounded(.down))
        let top = Int((Double(y) * factorY).rounded(.down))
        let right = Int((Double(x + width) * factorX).rounded(.up))
        let bottom = Int((Double(y + height) * factorY).rounded(.up))
        return PixelRect(x: left, y: top, width: right - left, height: bottom - top)
    }

    /// Whether more than half of `other` lies inside this rectangle.
    func covers(mostOf other: PixelRect) -> Bool {
        let width = min(x + self.width, other.x + other.width) - max(x, other.x)
        let height = min(y + self.height, other.y + other.height) - max(y, other.y)
        return width > 0 && height > 0 && 2 * width * height > other.area
    }

    /// The smallest rectangle holding this one and `other`.
    func union(_ other: PixelRect) -> PixelRect {
        let left = min(x, other.x)
        let top = min(y, other.y)
        let right = max(x + width, other.x + other.width)
        let bottom = max(y + height, other.y + other.height)
        return PixelRect(x: left, y: top, width: right - left, height: bottom - top)
    }

    /// This rectangle grown by `dx` on the left and right and `dy` above and below.
    func expanded(dx: Int, dy: Int) -> PixelRect {
        PixelRect(x: x - dx, y: y - dy, width: width + 2 * dx, height: height + 2 * dy)
    }
}
