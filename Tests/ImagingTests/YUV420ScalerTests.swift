import Imaging
import SwiftWingCore
import SwiftWingTesting
import Testing

@Suite("YUV420 scaler")
struct YUV420ScalerTests {
    @Test(
        "the long edge ends at most 1920, even, aspect kept within a pixel",
        arguments: [
            (4056, 3040), (4608, 2592), (3040, 4056), (4624, 3468), (1921, 1081), (2000, 30),
        ])
    func downscaledSize(width: Int, height: Int) {
        let size = YUV420Scaler.downscaledSize(width: width, height: height)
        #expect(max(size.width, size.height) <= 1920)
        #expect(max(size.width, size.height) == 1920)
        #expect(size.width % 2 == 0 && size.height % 2 == 0)
        // The short side is within one pixel of the exact proportional size.
        if width >= height {
            #expect(abs(Double(size.height) - Double(height) * Double(size.width) / Double(width)) <= 1)
        } else {
            #expect(abs(Double(size.width) - Double(width) * Double(size.height) / Double(height)) <= 1)
        }
    }

    @Test("real frames come out at the computed size", arguments: [(4056, 3040), (3040, 4056), (4608, 2592)])
    func downscaledFrames(width: Int, height: Int) throws {
        let frame = ImagingFixtures.gradientFrame(width: width, height: height)
        let small = try YUV420Scaler().downscaled(frame)
        let expected = YUV420Scaler.downscaledSize(width: width, height: height)
        #expect(small.width == expected.width && small.height == expected.height)
        #expect(small.timestamp == frame.timestamp)
    }

    @Test(
        "scaling out of a borrowed buffer (a driver's) gives the frame's own result, and a copy when it fits",
        arguments: [(4608, 2592, 1920), (203, 151, 97), (640, 480, 1920)])
    func fromBorrowedBytes(width: Int, height: Int, longEdge: Int) throws {
        let frame = ImagingFixtures.frame(
            width: width, height: height, lumaStride: width + 5,
            luma: { x, y in UInt8(truncatingIfNeeded: x &* 7 &+ y &* 13 &+ (x * y) % 11) })
        let expected = try YUV420Scaler().downscaled(frame, maxLongEdge: longEdge)
        let pool = BufferPool(bufferSize: expected.layout.byteCount, maximumBuffers: 1)
        let borrowed = try YUV420Scaler(pool: pool).downscaled(
            UnsafeRawBufferPointer(frame.buffer.bytes), layout: frame.layout, timestamp: frame.timestamp,
            sequence: 7, maxLongEdge: longEdge)
        #expect(borrowed.layout.width == expected.width && borrowed.layout.height == expected.height)
        #expect(borrowed.sequence == 7)
        #expect(borrowed.buffer !== frame.buffer, "the result must not share the borrowed memory")
        #expect(Self.differingSamples(borrowed, expected) == 0)
    }

    /// How many luma, Cb and Cr samples differ between two frames of one size (strides may differ).
    static func differingSamples(_ a: YUV420Frame, _ b: YUV420Frame) -> Int {
        func plane(
            _ p: UnsafeMutableRawBufferPointer, _ stride: Int, _ q: UnsafeMutableRawBufferPointer,
            _ otherStride: Int, width: Int, height: Int
        ) -> Int {
            var count = 0
            for y in 0..<height {
                for x in 0..<width where p[y * stride + x] != q[y * otherStride + x] { count += 1 }
            }
            return count
        }
        let (la, lb) = (a.layout, b.layout)
        return plane(a.luma, la.lumaStride, b.luma, lb.lumaStride, width: la.width, height: la.height)
            + plane(a.cb, la.chromaStride, b.cb, lb.chromaStride, width: la.chromaWidth, height: la.chromaHeight)
            + plane(a.cr, la.chromaStride, b.cr, lb.chromaStride, width: la.chromaWidth, height: la.chromaHeight)
    }

    @Test("a borrowed buffer shorter than its layout is refused, not read past its end")
    func shortBorrowedBuffer() throws {
        let frame = ImagingFixtures.gradientFrame(width: 64, height: 48)
        let short = UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(frame.buffer.bytes)[0..<100])
        #expect(throws: ImagingError.self) {
            _ = try YUV420Scaler().downscaled(short, layout: frame.layout, timestamp: frame.timestamp, maxLongEdge: 32)
        }
    }

    @Test("never upscales: a frame that fits comes back untouched")
    func neverUpscales() throws {
        for (width, height) in [(1920, 1080), (640, 480), (1079, 1920), (3, 5)] {
            let frame = ImagingFixtures.gradientFrame(width: width, height: height)
            let result = try YUV420Scaler().downscaled(frame)
            #expect(result.buffer === frame.buffer)
            #expect(result.width == width && result.height == height)
        }
        let thumb = try YUV420Scaler().downscaled(
            ImagingFixtures.gradientFrame(width: 100, height: 60), maxLongEdge: 160)
        #expect(thumb.width == 100)
    }

    @Test("a 4x4 checker averages to flat grey at 2x2 (fast 2x path) and 1x1 (4x path)")
    func checkerAveragesToGrey() throws {
        let checker = ImagingFixtures.frame(
            width: 4, height: 4, luma: { x, y in (x + y) % 2 == 0 ? 0 : 200 },
            chroma: { x, y in (x + y) % 2 == 0 ? (10, 250) : (30, 50) })
        let half = try YUV420Scaler().resized(checker, width: 2, height: 2)
        for y in 0..<2 { for x in 0..<2 { #expect(ImagingFixtures.luma(half, x, y) == 100) } }
        #expect(ImagingFixtures.cb(half, 0, 0) == 20 && ImagingFixtures.cr(half, 0, 0) == 150)
        let big = ImagingFixtures.frame(width: 64, height: 32, luma: { x, y in (x + y) % 2 == 0 ? 0 : 200 })
        let quarter = try YUV420Scaler().resized(big, width: 16, height: 8)
        #expect(ImagingFixtures.luma(quarter, 5, 3) == 100)
    }

    @Test("the general path averages stripes at 2.5x exactly to their coverage-weighted mean")
    func fractionalCoverage() throws {
        // 10 columns onto 4: output 0 covers source [0, 2.5), output 1 covers [2.5, 5).
        let edge = ImagingFixtures.frame(width: 10, height: 10, luma: { x, _ in x < 2 ? 250 : 0 })
        let scaledEdge = try YUV420Scaler().resized(edge, width: 4, height: 4)
        #expect(ImagingFixtures.luma(scaledEdge, 0, 0) == 200)  // (250 + 250 + 0/2) / 2.5
        #expect(ImagingFixtures.luma(scaledEdge, 1, 0) == 0)
        // Column 2 is split half and half between outputs 0 and 1.
        let split = ImagingFixtures.frame(width: 10, height: 10, luma: { x, _ in x == 2 ? 250 : 0 })
        let scaledSplit = try YUV420Scaler().resized(split, width: 4, height: 4)
        #expect(ImagingFixtures.luma(scaledSplit, 0, 3) == 50 && ImagingFixtures.luma(scaledSplit, 1, 3) == 50)
        #expect(ImagingFixtures.luma(scaledSplit, 2, 3) == 0)
        // Flat stays exactly flat whatever the ratio.
        let flat = ImagingFixtures.frame(width: 4056, height: 3040, luma: { _, _ in 77 }, chroma: { _, _ in (90, 160) })
        let small = try YUV420Scaler().downscaled(flat)
        for (x, y) in [(0, 0), (1919, 1439), (777, 333)] { #expect(ImagingFixtures.luma(small, x, y) == 77) }
        #expect(ImagingFixtures.cb(small, 959, 719) == 90 && ImagingFixtures.cr(small, 0, 0) == 160)
    }

    @Test("a linear gradient stays linear")
    func gradientStaysLinear() throws {
        // luma = x over 0...239, scaled 240 → 80 (3x, general path): output x is the mean of 3x...3x+2.
        let ramp = ImagingFixtures.frame(width: 240, height: 30, luma: { x, _ in UInt8(x) })
        let scaled = try YUV420Scaler().resized(ramp, width: 80, height: 10)
        for x in 0..<80 {
            #expect(ImagingFixtures.luma(scaled, x, 5) == UInt8(3 * x + 1))
        }
        // A non-integer ratio (240 → 100): steps of 2.4 with at most rounding error.
        let odd = try YUV420Scaler().resized(ramp, width: 100, height: 10)
        for x in 0..<100 {
            let exact = 2.4 * Double(x) + 1.2 - 0.5
            #expect(abs(Double(ImagingFixtures.luma(odd, x, 3)) - exact) <= 0.51)
        }
    }

    @Test("padded source strides give the same result as tight ones")
    func paddedStrides() throws {
        let tight = ImagingFixtures.gradientFrame(width: 4056, height: 3040)
        let padded = ImagingFixtures.gradientFrame(width: 4056, height: 3040, lumaStride: 4096, chromaStride: 2048)
        let a = try YUV420Scaler().downscaled(tight)
        let b = try YUV420Scaler().downscaled(padded)
        #expect(ImagingFixtures.samePixels(a, b))
        let c = try YUV420Scaler().resized(padded, width: 2028, height: 1520)  // 2x fast path
        let d = try YUV420Scaler().resized(tight, width: 2028, height: 1520)
        #expect(ImagingFixtures.samePixels(c, d))
    }

    @Test("resized center-crops to the target aspect")
    func centerCrop() throws {
        // Left third black, middle third grey, right third white: cropping a square keeps the middle.
        let bands = ImagingFixtures.frame(
            width: 300, height: 100, luma: { x, _ in x < 100 ? 0 : (x < 200 ? 128 : 255) })
        let square = try YUV420Scaler().resized(bands, width: 50, height: 50)
        #expect(square.width == 50 && square.height == 50)
        for x in [0, 25, 49] { #expect(ImagingFixtures.luma(square, x, 25) == 128) }
        // Enlarging works too (exact target sizes for a synthetic camera).
        let bigger = try YUV420Scaler().resized(bands, width: 600, height: 200)
        #expect(
            bigger.width == 600 && ImagingFixtures.luma(bigger, 10, 10) == 0
                && ImagingFixtures.luma(bigger, 590, 10) == 255)
    }

    @Test("output from a pool, and a clear error when the pool is exhausted or too small")
    func pool() throws {
        let frame = ImagingFixtures.gradientFrame(width: 400, height: 300)
        let size = YUV420Layout(width: 200, height: 150).byteCount
        let pool = BufferPool(bufferSize: size, maximumBuffers: 1)
        let scaler = YUV420Scaler(pool: pool)
        let first = try scaler.resized(frame, width: 200, height: 150)
        #expect(pool.inUse == 1)
        #expect(throws: ImagingError.noFreeBuffer(neededBytes: size, poolBufferSize: size)) {
            try scaler.resized(frame, width: 200, height: 150)
        }
        _ = first
        #expect(throws: ImagingError.self) {
            try YUV420Scaler(pool: BufferPool(bufferSize: 10, maximumBuffers: 2)).resized(
                frame, width: 200, height: 150)
        }
        #expect(throws: ImagingError.self) { try YUV420Scaler().resized(frame, width: 0, height: 150) }
    }
}
