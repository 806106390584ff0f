// One file on purpose: the fast paths, the weight tables and the SIMD passes share
// private layout helpers, and the scaler is benchmarked as one unit (Benchmarks/README.md).
import CShim
import SwiftWingCore
import Synchronization

/// Shrinks (and, for ``resized(_:width:height:)``, fits) YUV 4:2:0 frames by area averaging.
///
/// Every output sample is the average of the source area it covers, partial pixels weighted by
/// how much of them is covered (a box filter with fractional coverage): no aliasing on shelf text,
/// no ringing, flat areas stay exactly flat. The three planes are scaled independently, chroma on
/// its own half-size grid. Exact 2x and 4x reductions take a fast path that sums 2x2 or 4x4
/// blocks; everything else uses precomputed per-row and per-column fixed-point weights, a
/// vertical pass into 16-bit fixed-point rows, then a horizontal pass with pair multiply-adds, two
/// rows at once (see `areaAverage`); exactly 12:5 across (4608 → 1920) has a horizontal pass with
/// fixed weights (`TwelveToFiveKernel`).
/// Results are within about one level of an exact floating-point area average. See
/// Benchmarks/README.md for what it costs.
///
/// Stateless apart from the optional pool, so it is `Sendable`; the processing worker calls it.
public struct YUV420Scaler: Sendable {
    /// The long edge of a scan sent for recognition: 1920 pixels.
    public static let defaultMaxLongEdge = 1920

    /// Where output buffers come from; fresh buffers when `nil`.
    public var pool: BufferPool?

    public init(pool: BufferPool? = nil) {
        self.pool = pool
    }

    /// The size ``downscaled(_:maxLongEdge:)`` produces for a `width` x `height` picture: the long
    /// edge at most `maxLongEdge`, both sides even, aspect ratio kept to within one pixel; the
    /// input size itself when it already fits.
    public static func downscaledSize(width: Int, height: Int, maxLongEdge: Int = defaultMaxLongEdge)
        -> (width: Int, height: Int)
    {
        guard max(width, height) > maxLongEdge else { return (width, height) }
        let long = max(2, maxLongEdge & ~1)
        func evenShortSide(_ short: Int, _ longSide: Int) -> Int {
            let exact = Double(short) * Double(long) / Double(longSide)
            return max(2, Int((exact / 2).rounded()) * 2)
        }
        return width >= height ? (long, evenShortSide(height, width)) : (evenShortSide(width, height), long)
    }

    /// `frame` shrunk so its long edge is at most `maxLongEdge` (1920 by default), keeping the
    /// aspect ratio and giving even dimensions. Never enlarges: a frame that already fits is
    /// returned as it is (same buffer).
    /// - Throws: ``ImagingError/invalidSize(width:height:reason:)`` when `maxLongEdge` < 2;
    ///   ``ImagingError/noFreeBuffer(neededBytes:poolBufferSize:)`` when the pool has none.
    public func downscaled(_ frame: YUV420Frame, maxLongEdge: Int = defaultMaxLongEdge) throws(ImagingError)
        -> YUV420Frame
    {
        guard maxLongEdge >= 2 else {
            throw .invalidSize(
                width: maxLongEdge, height: maxLongEdge,
                reason: "the long edge limit must be at least 2 pixels (1920 is the default)")
        }
        let size = Self.downscaledSize(width: frame.width, height: frame.height, maxLongEdge: maxLongEdge)
        if size.width == frame.width && size.height == frame.height { return frame }
        let crop = CropRect(x: 0, y: 0, width: Double(frame.width), height: Double(frame.height))
        return try scale(
            UnsafeRawPointer(frame.buffer.bytes.baseAddress!), frame.layout, timestamp: frame.timestamp,
            sequence: frame.sequence, crop: crop, width: size.width, height: size.height)
    }

    /// The picture in `bytes` (laid out as `layout`, such as a driver's mapped buffer) shrunk
    /// like ``downscaled(_:maxLongEdge:)`` into a buffer of its own, so `bytes` may be reused as
    /// soon as this returns. A picture that already fits is copied as it is.
    /// - Throws: as ``downscaled(_:maxLongEdge:)``; ``ImagingError/invalidSize(width:height:reason:)``
    ///   when `bytes` is shorter than `layout`.
    public func downscaled(
        _ bytes: UnsafeRawBufferPointer, layout: YUV420Layout, timestamp: MonotonicInstant, sequence: UInt32 = 0,
        maxLongEdge: Int = defaultMaxLongEdge
    ) throws(ImagingError) -> YUV420Frame {
        guard maxLongEdge >= 2 else {
            throw .invalidSize(
                width: maxLongEdge, height: maxLongEdge,
                reason: "the long edge limit must be at least 2 pixels (1920 is the default)")
        }
        guard bytes.count >= layout.byteCount, let base = bytes.baseAddress else {
            throw .invalidSize(
                width: layout.width, height: layout.height,
                reason: "the buffer holds \(bytes.count) bytes, fewer than the \(layout.byteCount) of \(layout)")
        }
        let size = Self.downscaledSize(width: layout.width, height: layout.height, maxLongEdge: maxLongEdge)
        let crop = CropRect(x: 0, y: 0, width: Double(layout.width), height: Double(layout.height))
        return try scale(
            base, layout, timestamp: timestamp, sequence: sequence, crop: crop, width: size.width, height: size.height)
    }

    /// `frame` fitted to exactly `width` x `height`: first center-cropped to the target's aspect
    /// ratio (cutting equal amounts off both long sides; nothing is letterboxed or stretched),
    /// then area-scaled. Enlarges when the target is bigger (each output sample then covers part
    /// of one or two source samples). Used to turn photos into frames of a camera's size.
    /// - Throws: ``ImagingError/invalidSize(width:height:reason:)`` for a size below 1x1.
    public func resized(_ frame: YUV420Frame, width: Int, height: Int) throws(ImagingError) -> YUV420Frame {
        guard width >= 1 && height >= 1 else {
            throw .invalidSize(width: width, height: height, reason: "both sides must be at least 1 pixel")
        }
        let sourceWidth = Double(frame.width)
        let sourceHeight = Double(frame.height)
        var crop = CropRect(x: 0, y: 0, width: sourceWidth, height: sourceHeight)
        if frame.width * height > width * frame.height {
            crop.width = sourceHeight * Double(width) / Double(height)  // source is wider: trim the sides
            crop.x = (sourceWidth - crop.width) / 2
        } else if frame.width * height < width * frame.height {
            crop.height = sourceWidth * Double(height) / Double(width)  // source is taller: trim top, bottom
            crop.y = (sourceHeight - crop.height) / 2
        }
        return try scale(
            UnsafeRawPointer(frame.buffer.bytes.baseAddress!), frame.layout, timestamp: frame.timestamp,
            sequence: frame.sequence, crop: crop, width: width, height: height)
    }

    /// The `width` x `height` region of `frame` whose top-left corner is (`x`, `y`), cut to the frame's edges,
    /// then shrunk like ``downscaled(_:maxLongEdge:)`` so its long edge is at most `maxLongEdge` (never enlarged).
    /// Used to show one book of a shelf photo on its own.
    /// - Throws: ``ImagingError/invalidSize(width:height:reason:)`` when nothing of the region is inside the
    ///   frame, or `maxLongEdge` < 2.
    public func cropped(_ frame: YUV420Frame, x: Int, y: Int, width: Int, height: Int, maxLongEdge: Int)
        throws(ImagingError) -> YUV420Frame
    {
        guard maxLongEdge >= 2 else {
            throw .invalidSize(
                width: maxLongEdge, height: maxLongEdge, reason: "the long edge limit must be at least 2 pixels")
        }
        let left = min(max(x, 0), frame.width)
        let top = min(max(y, 0), frame.height)
        let right = min(max(x + width, left), frame.width)
        let bottom = min(max(y + height, top), frame.height)
        guard right > left, bottom > top else {
            throw .invalidSize(
                width: width, height: height,
                reason: "the region at (\(x), \(y)) lies outside the \(frame.width)x\(frame.height) picture")
        }
        let crop = CropRect(x: Double(left), y: Double(top), width: Double(right - left), height: Double(bottom - top))
        let size = Self.downscaledSize(width: right - left, height: bottom - top, maxLongEdge: maxLongEdge)
        return try scale(
            UnsafeRawPointer(frame.buffer.bytes.baseAddress!), frame.layout, timestamp: frame.timestamp,
            sequence: frame.sequence, crop: crop, width: size.width, height: size.height)
    }

    struct CropRect {
        var x: Double, y: Double, width: Double, height: Double
    }

    private func scale(
        _ sourceBase: UnsafeRawPointer, _ source: YUV420Layout, timestamp: MonotonicInstant, sequence: UInt32,
        crop: CropRect, width: Int, height: Int
    ) throws(ImagingError) -> YUV420Frame {
        let layout = YUV420Layout(width: width, height: height)
        let buffer: PixelBuffer
        if let pool {
            buffer = try acquireBuffer(from: pool, bytes: layout.byteCount)
        } else {
            buffer = PixelBuffer(capacity: layout.byteCount)
        }
        let output = YUV420Frame(layout: layout, buffer: buffer, timestamp: timestamp, sequence: sequence)
        let targetBase = output.buffer.bytes.baseAddress!

        Self.scalePlane(
            PlaneView(base: sourceBase, width: source.width, height: source.height, stride: source.lumaStride),
            crop: crop,
            into: MutablePlaneView(base: targetBase, width: width, height: height, stride: layout.lumaStride))
        // Chroma sample j covers luma [2j, 2j+2) of the output, so its source span is measured in
        // output luma pixels and halved; for even sizes this is just the luma crop halved.
        let chromaCrop = CropRect(
            x: crop.x / 2, y: crop.y / 2,
            width: Double(layout.chromaWidth) * crop.width / Double(width),
            height: Double(layout.chromaHeight) * crop.height / Double(height))
        for (sourceOffset, targetOffset) in [(source.cbOffset, layout.cbOffset), (source.crOffset, layout.crOffset)] {
            Self.scalePlane(
                PlaneView(
                    base: sourceBase + sourceOffset, width: source.chromaWidth, height: source.chromaHeight,
                    stride: source.chromaStride),
                crop: chromaCrop,
                into: MutablePlaneView(
                    base: targetBase + targetOffset, width: layout.chromaWidth,
                    height: layout.chromaHeight, stride: layout.chromaStride))
        }
        return output
    }

    struct PlaneView {
        var base: UnsafeRawPointer
        var width: Int, height: Int, stride: Int
        func row(_ y: Int) -> UnsafePointer<UInt8> { (base + y * stride).assumingMemoryBound(to: UInt8.self) }
    }

    struct MutablePlaneView {
        var base: UnsafeMutableRawPointer
        var width: Int, height: Int, stride: Int
        func row(_ y: Int) -> UnsafeMutablePointer<UInt8> {
            (base + y * stride).assumingMemoryBound(to: UInt8.self)
        }
    }

    /// Scales the `crop` area of `source` onto all of `target`.
    /// `twelveToFive: false` forces the general horizontal pass (tests compare the two).
    static func scalePlane(
        _ source: PlaneView, crop: CropRect, into target: MutablePlaneView, twelveToFive: Bool = true
    ) {
        if let factor = integerFactor(crop: crop, source: source, target: target) {
            let x0 = Int(crop.x)
            let y0 = Int(crop.y)
            switch factor {
            case 1: copyPlane(source, x0: x0, y0: y0, into: target)
            case 2: halvePlane(source, x0: x0, y0: y0, into: target)
            default: quarterPlane(source, x0: x0, y0: y0, into: target)
            }
            return
        }
        let weights = PlaneWeights.cached(
            PlaneWeights.Key(
                crop: crop, sourceWidth: source.width, sourceHeight: source.height,
                targetWidth: target.width, targetHeight: target.height))
        areaAverage(source, into: target, columns: weights.columns, rows: weights.rows, twelveToFive: twelveToFive)
    }

    /// The weights of one plane's scale, kept for the next frame of the same size: building them
    /// (in `Double`, per output sample) cost a third as much as the horizontal pass at 12 MP.
    final class PlaneWeights: @unchecked Sendable {  // immutable after init
        struct Key: Hashable {
            var cropX, cropY, cropWidth, cropHeight: Double
            var sourceWidth, sourceHeight, targetWidth, targetHeight: Int

            init(crop: CropRect, sourceWidth: Int, sourceHeight: Int, targetWidth: Int, targetHeight: Int) {
                (cropX, cropY, cropWidth, cropHeight) = (crop.x, crop.y, crop.width, crop.height)
                (self.sourceWidth, self.sourceHeight) = (sourceWidth, sourceHeight)
                (self.targetWidth, self.targetHeight) = (targetWidth, targetHeight)
            }
        }

        let columns: AxisWeights
        let rows: AxisWeights

        init(_ key: Key) {
            columns = AxisWeights(
                sourceStart: key.cropX, sourceLength: key.cropWidth, sourceSize: key.sourceWidth,
                targetSize: key.targetWidth, bits: 15)
            rows = AxisWeights(
                sourceStart: key.cropY, sourceLength: key.cropHeight, sourceSize: key.sourceHeight,
                targetSize: key.targetHeight, bits: 8)
        }

        deinit {
            columns.deallocate()
            rows.deallocate()
        }

        /// A device scales a handful of sizes (luma and chroma of one or two frame sizes); the cache
        /// starts over when it holds more than that.
        private static let cache = Mutex<[Key: PlaneWeights]>([:])
        static let cacheLimit = 8

        static func cached(_ key: Key) -> PlaneWeights {
            if let known = cache.withLock({ $0[key] }) { return known }
            let made = PlaneWeights(key)
            cache.withLock { entries in
                if entries.count >= cacheLimit { entries.removeAll() }
                entries[key] = made
            }
            return made
        }
    }

    /// 1, 2 or 4 when the crop is whole pixels and exactly that many times the target; else nil.
    private static func integerFactor(crop: CropRect, source: PlaneView, target: MutablePlaneView) -> Int? {
        guard crop.x == crop.x.rounded(.down), crop.y == crop.y.rounded(.down) else { return nil }
        for factor in [1, 2, 4] {
            if crop.width == Double(target.width * factor) && crop.height == Double(target.height * factor)
                && Int(crop.x) + target.width * factor <= source.width
                && Int(crop.y) + target.height * factor <= source.height
            {
                return factor
            }
        }
        return nil
    }

    private static func copyPlane(_ source: PlaneView, x0: Int, y0: Int, into target: MutablePlaneView) {
        for y in 0..<target.height {
            target.row(y).update(from: source.row(y0 + y) + x0, count: target.width)
        }
    }

    private static func halvePlane(_ source: PlaneView, x0: Int, y0: Int, into target: MutablePlaneView) {
        let width = target.width
        for y in 0..<target.height {
            let a = source.row(y0 + 2 * y) + x0
            let b = source.row(y0 + 2 * y + 1) + x0
            let out = target.row(y)
            for x in 0..<width {
                let sum = UInt16(a[2 &* x]) &+ UInt16(a[2 &* x &+ 1]) &+ UInt16(b[2 &* x]) &+ UInt16(b[2 &* x &+ 1])
                out[x] = UInt8(truncatingIfNeeded: (sum &+ 2) &>> 2)
            }
        }
    }

    private static func quarterPlane(_ source: PlaneView, x0: Int, y0: Int, into target: MutablePlaneView) {
        let width = target.width
        let sums = UnsafeMutablePointer<UInt16>.allocate(capacity: width)
        defer { sums.deallocate() }
        for y in 0..<target.height {
            sums.update(repeating: 0, count: width)
            for k in 0..<4 {
                let row = source.row(y0 + 4 * y + k) + x0
                for x in 0..<width {
                    let p = row + 4 &* x
                    sums[x] = sums[x] &+ UInt16(p[0]) &+ UInt16(p[1]) &+ UInt16(p[2]) &+ UInt16(p[3])
                }
            }
            let out = target.row(y)
            for x in 0..<width { out[x] = UInt8(truncatingIfNeeded: (sums[x] &+ 8) &>> 4) }
        }
    }

    /// Fixed-point weights for one axis: output sample i averages source samples
    /// `first[i] ..< first[i] + taps` with weights `weights[i * taps ..< (i + 1) * taps]`, which
    /// sum to exactly `1 << bits`. Every index is inside the source (zero weights pad short spans).
    struct AxisWeights {
        let taps: Int
        let first: UnsafeMutablePointer<Int>
        let weights: UnsafeMutablePointer<Int32>

        init(sourceStart: Double, sourceLength: Double, sourceSize: Int, targetSize: Int, bits: Int) {
            let step = sourceLength / Double(targetSize)
            let one = Double(1 << bits)
            /// Output i covers source [start, end): samples first...last.
            func span(_ i: Int) -> (start: Double, end: Double, first: Int, last: Int) {
                let start = sourceStart + Double(i) * step
                let end = start + step
                let first = max(0, min(sourceSize - 1, Int(start.rounded(.down))))
                let last = max(first, min(sourceSize - 1, Int((end - 1e-9).rounded(.down))))
                return (start, end, first, last)
            }
            var widest = 1
            for i in 0..<targetSize {
                let covered = span(i)
                widest = max(widest, covered.last - covered.first + 1)
            }
            let taps = min(widest, sourceSize)
            self.taps = taps
            first = .allocate(capacity: targetSize)
            weights = .allocate(capacity: targetSize * taps)
            weights.initialize(repeating: 0, count: targetSize * taps)
            for i in 0..<targetSize {
                let covered = span(i)
                // Spans that would run past the end start earlier, with zero weights in front.
                let start = min(covered.first, sourceSize - taps)
                first[i] = start
                let row = weights + i * taps + (covered.first - start)
                var previous = 0
                for j in covered.first...covered.last {
                    // Samples first...j cover [start, min(j+1, end)); the weight of j is the
                    // increase, so rounding never loses a bit and the weights sum to exactly one.
                    // Spans reaching past the edge give the rest to the edge sample.
                    let high = j == covered.last ? covered.end : Double(j + 1)
                    let cumulative =
                        j == covered.last ? 1 << bits : Int(((high - covered.start) / step * one).rounded())
                    row[j - covered.first] = Int32(cumulative - previous)
                    previous = cumulative
                }
            }
        }

        func deallocate() {
            first.deallocate()
            weights.deallocate()
        }
    }

    /// The general path, per output row: a vertical weighted sum of the few source rows it covers
    /// (contiguous, so the compiler vectorizes it) into one 16-bit 8.8 fixed-point row, then
    /// a horizontal weighted sum over that row — two rows at a time in the usual case (see
    /// `rowAreaAverage`). Vertical first means the horizontal pass runs once per output row
    /// instead of once per source row.
    ///
    /// Row weights have 8 bits (so the vertical pass stays in 16-bit lanes), column weights 15 bits;
    /// both sum exactly to one, so flat areas stay exactly flat, and the result is within about one
    /// level of an exact floating-point area average (a unit test checks noise, the benchmark the
    /// shelf photo).
    private static func areaAverage(
        _ source: PlaneView, into target: MutablePlaneView, columns: AxisWeights, rows: AxisWeights,
        twelveToFive: Bool
    ) {
        // Only the source columns some output column reads (a crop may skip the sides).
        let left = columns.first[0]
        let span = columns.first[target.width - 1] + columns.taps - left
        let horizontal = HorizontalKernel(columns, left: left, width: target.width)
        defer { horizontal.deallocate() }
        if horizontal.taps <= 4 {
            rowAreaAverage(
                source, into: target, rows: rows, left: left, span: span, horizontal: horizontal,
                periodic: twelveToFive ? TwelveToFiveKernel(horizontal) : nil)
            return
        }
        let column = UnsafeMutablePointer<UInt16>.allocate(capacity: span)
        defer { column.deallocate() }
        let rowPointers = UnsafeMutablePointer<UnsafePointer<UInt8>>.allocate(capacity: rows.taps)
        defer { rowPointers.deallocate() }
        let rowWeights = UnsafeMutablePointer<UInt16>.allocate(capacity: rows.taps)
        defer { rowWeights.deallocate() }
        for y in 0..<target.height {
            let count = sourceRows(for: y, rows: rows, source: source, left: left, into: rowPointers, rowWeights)
            verticalPass(
                rowPointers, rowWeights, count: count, span: span, sourceStride: source.stride, halved: false,
                into: column)
            horizontal.run(column, into: target.row(y))
        }
    }

    /// The source rows with a non-zero weight for output row `y`, and their weights; returns how many.
    @inline(__always)
    private static func sourceRows(
        for y: Int, rows: AxisWeights, source: PlaneView, left: Int,
        into pointers: UnsafeMutablePointer<UnsafePointer<UInt8>>, _ weights: UnsafeMutablePointer<UInt16>
    ) -> Int {
        var count = 0
        for k in 0..<rows.taps {
            let weight = rows.weights[y &* rows.taps &+ k]
            if weight == 0 { continue }
            pointers[count] = source.row(rows.first[y] &+ k) + left
            weights[count] = UInt16(clamping: weight)
            count &+= 1
        }
        return count
    }

    /// The usual case (at most 4 taps across, i.e. shrinking by less than 3:1), two output rows at
    /// a time: the vertical pass writes rows with 7 fraction bits (small enough for signed 16-bit
    /// lanes) that stay in L1, and the horizontal pass reads each output's four taps with one
    /// 8-byte load and sums them with 16x16 → 32-bit pair multiply-adds, four outputs per vector.
    /// Row by row, no transposes: `perf` showed 8x8 transposes into and out of an eight-row layout
    /// costing as much as the horizontal sums themselves.
    private static func rowAreaAverage(
        _ source: PlaneView, into target: MutablePlaneView, rows: AxisWeights, left: Int, span: Int,
        horizontal: HorizontalKernel, periodic: TwelveToFiveKernel?
    ) {
        let padded = (span + 4 + 7) & ~7  // 4-tap reads past the span see zeros
        let columns = UnsafeMutablePointer<UInt16>.allocate(capacity: 2 * padded)
        defer { columns.deallocate() }
        columns.initialize(repeating: 0, count: 2 * padded)
        let rowPointers = UnsafeMutablePointer<UnsafePointer<UInt8>>.allocate(capacity: rows.taps)
        defer { rowPointers.deallocate() }
        let rowWeights = UnsafeMutablePointer<UInt16>.allocate(capacity: rows.taps)
        defer { rowWeights.deallocate() }
        var y = 0
        while y < target.height {
            // Two rows at a time; a last odd row is computed twice into the same place.
            let lowerY = min(y + 1, target.height - 1)
            for r in 0..<2 {
                let count = sourceRows(
                    for: r == 0 ? y : lowerY, rows: rows, source: source, left: left, into: rowPointers, rowWeights)
                verticalPass(
                    rowPointers, rowWeights, count: count, span: span, sourceStride: source.stride, halved: true,
                    into: columns + r &* padded)
            }
            if let periodic {
                periodic.run(
                    horizontal, UnsafeRawPointer(columns), UnsafeRawPointer(columns + padded),
                    UnsafeRawPointer(columns + 2), UnsafeRawPointer(columns + padded + 2), into: target.row(y),
                    target.row(lowerY))
            } else {
                horizontal.runFourTaps(
                    UnsafeRawPointer(columns), UnsafeRawPointer(columns + padded), into: target.row(y),
                    target.row(lowerY))
            }
            y += 2
        }
    }

    /// `value * weight` for a 15-bit weight, without the weight's fraction bits.
    @inline(__always)
    private static func share(_ value: UInt16, _ weight: UInt16) -> UInt16 {
        UInt16(truncatingIfNeeded: (UInt32(value) &* UInt32(weight)) &>> 15)
    }

    /// `column[x] = Σ weight[k] * row[k][x]` with 8-bit row weights summing to 256: 8.8 fixed point
    /// that never leaves 16 bits, so it runs in 16-bit lanes (`pmullw`, NEON `umlal`); `halved`
    /// keeps 7 fraction bits instead (at most 32640, so the horizontal pass may use signed lanes).
    /// Sixteen source bytes are loaded at once and widened into two 8-lane halves (one load per row
    /// instead of two), and the next output row's source rows are prefetched. Up to four rows are
    /// fused into one loop; more rows add up in place.
    @inline(__always)
    private static func verticalPass(
        _ rows: UnsafeMutablePointer<UnsafePointer<UInt8>>, _ weights: UnsafeMutablePointer<UInt16>, count: Int,
        span: Int, sourceStride: Int, halved: Bool, into column: UnsafeMutablePointer<UInt16>
    ) {
        let out = UnsafeMutableRawPointer(column)
        let vectorEnd = span & ~15
        let shift: UInt16 = halved ? 1 : 0
        @inline(__always) func put(_ low: SIMD8<UInt16>, _ high: SIMD8<UInt16>, _ x: Int) {
            store(low &>> shift, high &>> shift, out, x)
        }
        switch count {
        case 1:
            let a = UnsafeRawPointer(rows[0])
            for x in stride(from: 0, to: vectorEnd, by: 16) {
                let (low, high) = widened(a, x)
                store(low &<< (8 - shift), high &<< (8 - shift), out, x)
            }
        case 2:
            let a = UnsafeRawPointer(rows[0])
            let b = UnsafeRawPointer(rows[1])
            let wa = SIMD8<UInt16>(repeating: weights[0])
            let wb = SIMD8<UInt16>(repeating: weights[1])
            forEachSixteenColumns(upTo: vectorEnd, prefetchingAfter: b, stride: sourceStride) { x in
                let (a0, a1) = widened(a, x)
                let (b0, b1) = widened(b, x)
                put(a0 &* wa &+ b0 &* wb, a1 &* wa &+ b1 &* wb, x)
            }
        case 4:
            let a = UnsafeRawPointer(rows[0])
            let b = UnsafeRawPointer(rows[1])
            let c = UnsafeRawPointer(rows[2])
            let d = UnsafeRawPointer(rows[3])
            let wa = SIMD8<UInt16>(repeating: weights[0])
            let wb = SIMD8<UInt16>(repeating: weights[1])
            let wc = SIMD8<UInt16>(repeating: weights[2])
            let wd = SIMD8<UInt16>(repeating: weights[3])
            forEachSixteenColumns(upTo: vectorEnd, prefetchingAfter: d, stride: sourceStride) { x in
                let (a0, a1) = widened(a, x)
                let (b0, b1) = widened(b, x)
                let (c0, c1) = widened(c, x)
                let (d0, d1) = widened(d, x)
                put(a0 &* wa &+ b0 &* wb &+ c0 &* wc &+ d0 &* wd, a1 &* wa &+ b1 &* wb &+ c1 &* wc &+ d1 &* wd, x)
            }
        case 3...:
            // Three rows fused; a fifth and more (4:1 and beyond) add up in place, halved at the end.
            let a = UnsafeRawPointer(rows[0])
            let b = UnsafeRawPointer(rows[1])
            let c = UnsafeRawPointer(rows[2])
            let last = UnsafeRawPointer(rows[count - 1])
            let wa = SIMD8<UInt16>(repeating: weights[0])
            let wb = SIMD8<UInt16>(repeating: weights[1])
            let wc = SIMD8<UInt16>(repeating: weights[2])
            let laterShift: UInt16 = count == 3 ? shift : 0
            forEachSixteenColumns(upTo: vectorEnd, prefetchingAfter: last, stride: sourceStride) { x in
                let (a0, a1) = widened(a, x)
                let (b0, b1) = widened(b, x)
                let (c0, c1) = widened(c, x)
                let low = a0 &* wa &+ b0 &* wb &+ c0 &* wc
                let high = a1 &* wa &+ b1 &* wb &+ c1 &* wc
                store(low &>> laterShift, high &>> laterShift, out, x)
            }
            for k in 3..<count {
                let row = UnsafeRawPointer(rows[k])
                let weight = SIMD8<UInt16>(repeating: weights[k])
                let rowShift: UInt16 = k == count - 1 ? shift : 0
                for x in stride(from: 0, to: vectorEnd, by: 16) {
                    let (r0, r1) = widened(row, x)
                    let low = out.loadUnaligned(fromByteOffset: x &* 2, as: SIMD8<UInt16>.self)
                    let high = out.loadUnaligned(fromByteOffset: x &* 2 &+ 16, as: SIMD8<UInt16>.self)
                    store((low &+ r0 &* weight) &>> rowShift, (high &+ r1 &* weight) &>> rowShift, out, x)
                }
            }
        default:
            break
        }
        verticalPassScalar(rows, weights, count: count, from: vectorEnd, to: span, into: column)
        for x in vectorEnd..<max(vectorEnd, span) { column[x] = column[x] &>> shift }
    }

    /// The columns `from..<to` of ``verticalPass`` in 8.8, one at a time (the tail).
    @inline(__always)
    private static func verticalPassScalar(
        _ rows: UnsafeMutablePointer<UnsafePointer<UInt8>>, _ weights: UnsafeMutablePointer<UInt16>, count: Int,
        from: Int, to end: Int, into column: UnsafeMutablePointer<UInt16>
    ) {
        guard from < end else { return }
        let a = rows[0]
        let wa = weights[0]
        for x in from..<end { column[x] = UInt16(a[x]) &* wa }
        for k in 1..<max(count, 1) {
            let row = rows[k]
            let weight = weights[k]
            for x in from..<end { column[x] = column[x] &+ UInt16(row[x]) &* weight }
        }
    }

    /// `body(x)` for x = 0, 16, ... below `end` (a multiple of 16), four at a time, asking the cache
    /// for the three source rows after `last` (those the next output row adds, up to 3:1) at each
    /// cache line first, so they arrive while this row is summed: a 12 MP frame the camera just
    /// wrote is in no cache, and the hardware prefetcher alone left the vertical pass waiting on
    /// memory.
    @inline(__always)
    private static func forEachSixteenColumns(
        upTo end: Int, prefetchingAfter last: UnsafeRawPointer, stride: Int, _ body: (Int) -> Void
    ) {
        @inline(__always) func prefetch(_ x: Int) {
            sw_prefetch(last + (stride &+ x))
            sw_prefetch(last + (2 &* stride &+ x))
            sw_prefetch(last + (3 &* stride &+ x))
        }
        var x = 0
        let unrolledEnd = end & ~63
        while x < unrolledEnd {
            prefetch(x)
            body(x)
            body(x &+ 16)
            body(x &+ 32)
            body(x &+ 48)
            x &+= 64
        }
        if x < end { prefetch(x) }
        while x < end {
            body(x)
            x &+= 16
        }
    }

    /// Sixteen bytes at `base + x` as two 8-lane 16-bit vectors (`punpck*bw`; NEON `uxtl`).
    @inline(__always)
    private static func widened(_ base: UnsafeRawPointer, _ x: Int) -> (SIMD8<UInt16>, SIMD8<UInt16>) {
        let bytes = base.loadUnaligned(fromByteOffset: x, as: SIMD16<UInt8>.self)
        return (SIMD8<UInt16>(truncatingIfNeeded: bytes.lowHalf), SIMD8<UInt16>(truncatingIfNeeded: bytes.highHalf))
    }

    @inline(__always)
    private static func store(
        _ low: SIMD8<UInt16>, _ high: SIMD8<UInt16>, _ out: UnsafeMutableRawPointer, _ x: Int
    ) {
        out.storeBytes(of: low, toByteOffset: x &* 2, as: SIMD8<UInt16>.self)
        out.storeBytes(of: high, toByteOffset: x &* 2 &+ 16, as: SIMD8<UInt16>.self)
    }

    /// The horizontal pass, with 15-bit column weights: `out[x] = Σ weight * column[first[x] + k]`,
    /// rounded. Up to four taps (shrinking by less than 3:1) it reads a halved row
    /// (``runFourTaps(_:into:)``); wider spans (thumbnails) read an 8.8 row (``run(_:into:)``).
    struct HorizontalKernel {
        let width: Int
        let taps: Int
        /// Per output: the first column index, relative to the span's left edge.
        let first: UnsafeMutablePointer<Int32>
        /// Per output: the weights, 4 per output (zero-padded) in the SIMD case, else `taps`.
        let weights: UnsafeMutablePointer<UInt16>

        init(_ columns: AxisWeights, left: Int, width: Int) {
            self.width = width
            taps = columns.taps
            let stride = taps <= 4 ? 4 : taps
            first = .allocate(capacity: width)
            weights = .allocate(capacity: width * stride)
            weights.initialize(repeating: 0, count: width * stride)
            for x in 0..<width {
                first[x] = Int32(columns.first[x] - left)
                for k in 0..<taps {
                    // A lone full weight (1 << 15) does not fit a signed lane: 32767 is off by 1/32768.
                    weights[x * stride + k] = UInt16(min(columns.weights[x * taps + k], 32767))
                }
            }
        }

        func deallocate() {
            first.deallocate()
            weights.deallocate()
        }

        /// Two rows of at most four taps per output, from rows with 7 fraction bits (at most
        /// 32640), four outputs per vector: each output's taps are one 8-byte load, multiplied with
        /// its weights in signed 16-bit lanes and summed in pairs into 32 bits (`pmaddwd`; NEON
        /// `smull` + `addp`), then the pairs added (sums stay below 2^30). The two rows share the
        /// loads of the tap offsets and weights. Needs `taps <= 4` and four readable columns at
        /// every `first[x]`.
        @inline(never)
        func runFourTaps(
            _ upper: UnsafeRawPointer, _ lower: UnsafeRawPointer, into upperOut: UnsafeMutablePointer<UInt8>,
            _ lowerOut: UnsafeMutablePointer<UInt8>
        ) {
            let weightBytes = UnsafeRawPointer(weights)
            let rounding = SIMD4<Int32>(repeating: 1 << 21)
            /// Outputs `x ..< x + 4` of both rows.
            @inline(__always) func four(_ x: Int) -> (SIMD4<Int32>, SIMD4<Int32>) {
                let taps = TapOffsets(
                    Int(first[x]) &* 2, Int(first[x &+ 1]) &* 2, Int(first[x &+ 2]) &* 2, Int(first[x &+ 3]) &* 2)
                let low = weightBytes.loadUnaligned(fromByteOffset: x &* 8, as: SIMD8<Int16>.self)
                let high = weightBytes.loadUnaligned(fromByteOffset: x &* 8 &+ 16, as: SIMD8<Int16>.self)
                return (
                    YUV420Scaler.fourSums(upper, taps, low, high, rounding: rounding),
                    YUV420Scaler.fourSums(lower, taps, low, high, rounding: rounding)
                )
            }
            var x = 0
            while x &+ 16 <= width {
                let (a0, a1) = four(x)
                let (b0, b1) = four(x &+ 4)
                let (c0, c1) = four(x &+ 8)
                let (d0, d1) = four(x &+ 12)
                UnsafeMutableRawPointer(upperOut + x).storeBytes(
                    of: YUV420Scaler.packed(a0, b0, c0, d0), as: SIMD16<UInt8>.self)
                UnsafeMutableRawPointer(lowerOut + x).storeBytes(
                    of: YUV420Scaler.packed(a1, b1, c1, d1), as: SIMD16<UInt8>.self)
                x &+= 16
            }
            fourTapsTail(from: x, upper, lower, into: upperOut, lowerOut)
        }

        /// Outputs `start ..< width` of ``runFourTaps(_:_:into:_:)``, one at a time.
        @inline(__always)
        func fourTapsTail(
            from start: Int, _ upper: UnsafeRawPointer, _ lower: UnsafeRawPointer,
            into upperOut: UnsafeMutablePointer<UInt8>, _ lowerOut: UnsafeMutablePointer<UInt8>
        ) {
            for x in start..<max(start, width) {
                let w = weights + x &* 4
                @inline(__always) func one(_ column: UnsafeRawPointer) -> UInt8 {
                    let p = column.assumingMemoryBound(to: UInt16.self) + Int(first[x])
                    var sum: Int32 = 1 << 21
                    for k in 0..<4 { sum &+= Int32(p[k]) &* Int32(w[k]) }
                    return UInt8(truncatingIfNeeded: sum &>> 22)
                }
                upperOut[x] = one(upper)
                lowerOut[x] = one(lower)
            }
        }

        /// One row, any number of taps (the per-row path for shrinking by 3:1 or more).
        @inline(never)
        func run(_ column: UnsafePointer<UInt16>, into out: UnsafeMutablePointer<UInt8>) {
            let stride = taps <= 4 ? 4 : taps
            for x in 0..<width {
                let p = column + Int(first[x])
                let w = weights + x &* stride
                var sum: UInt32 = 0
                for k in 0..<taps { sum = sum &+ UInt32(share(p[k], w[k])) }
                out[x] = UInt8(truncatingIfNeeded: (sum &+ 128) &>> 8)
            }
        }
    }

    /// The horizontal pass for exactly 12:5 (4608 → 1920, 2304 → 960), where the weights repeat
    /// every 5 outputs and 12 columns. Output i of a period has all its taps in the period's columns
    /// 2i ..< 2i + 4, so lane k (six per period, the sixth with zero weights) is column pair k times
    /// fixed weights plus pair k + 1 times fixed weights: per four lanes, two 16-byte loads (one
    /// of them from the row shifted by a pair) and two pair multiply-adds, with no per-output
    /// offsets or weight loads — about 3.4 instructions per output instead of 4.9. The sixth lanes
    /// are dropped by overlapping stores in order. Same products and sums as
    /// ``HorizontalKernel/runFourTaps(_:_:into:_:)``, so the same bytes.
    struct TwelveToFiveKernel {
        /// Per 4-lane vector j of a 20-output group: the weights of columns 2k, 2k + 1 (`low`) and
        /// 2k + 2, 2k + 3 (`high`) for lane k = 4j + m, whose output is 6p + i → 5p + i.
        let low: (SIMD8<Int16>, SIMD8<Int16>, SIMD8<Int16>)
        let high: (SIMD8<Int16>, SIMD8<Int16>, SIMD8<Int16>)

        /// nil unless `kernel` is exactly this pattern (offsets and weights repeat with period 5 / 12).
        init?(_ kernel: HorizontalKernel) {
            guard kernel.taps <= 4, kernel.width >= 5 else { return nil }
            // Per lane of one period (6 lanes), the weights of its four columns 2k ..< 2k + 4.
            var lanes = [[Int16]](repeating: [0, 0, 0, 0], count: 6)
            for x in 0..<kernel.width {
                let period = x / 5
                let i = x % 5
                for k in 0..<4 {
                    let weight = Int16(truncatingIfNeeded: kernel.weights[x * 4 + k])
                    let column = Int(kernel.first[x]) + k - 12 * period - 2 * i
                    if weight == 0 { continue }
                    guard (0..<4).contains(column) else { return nil }
                    if period == 0 {
                        lanes[i][column] = weight
                    } else if lanes[i][column] != weight {
                        return nil
                    }
                }
                // Every weight of output x must be one of the period-0 weights in place.
                if period > 0 {
                    var sum = 0
                    for k in 0..<4 { sum += Int(kernel.weights[x * 4 + k]) }
                    guard sum == lanes[i].reduce(0, { $0 + Int($1) }) else { return nil }
                }
            }
            func vector(_ j: Int, _ half: Int) -> SIMD8<Int16> {
                var v = SIMD8<Int16>()
                for m in 0..<4 {
                    let lane = (4 * j + m) % 6
                    v[2 * m] = lanes[lane][2 * half]
                    v[2 * m + 1] = lanes[lane][2 * half + 1]
                }
                return v
            }
            low = (vector(0, 0), vector(1, 0), vector(2, 0))
            high = (vector(0, 1), vector(1, 1), vector(2, 1))
        }

        /// Like ``HorizontalKernel/runFourTaps(_:_:into:_:)``; `upperShifted` and `lowerShifted` are
        /// the rows one column pair (4 bytes) on. They come in as arguments so LLVM cannot relate
        /// them to `upper` and `lower`: it turns a load at +4 bytes from the same base into a dozen
        /// word shuffles of the aligned loads (as slow as the general pass).
        @inline(never)
        func run(
            _ kernel: HorizontalKernel, _ upper: UnsafeRawPointer, _ lower: UnsafeRawPointer,
            _ upperShifted: UnsafeRawPointer, _ lowerShifted: UnsafeRawPointer,
            into upperOut: UnsafeMutablePointer<UInt8>, _ lowerOut: UnsafeMutablePointer<UInt8>
        ) {
            let rounding = SIMD4<Int32>(repeating: 1 << 21)
            /// Four lanes: column pairs of `this` times `low` plus the next pairs (`shifted`) times `high`.
            @inline(__always) func lanes(
                _ this: SIMD4<Int32>, _ shifted: SIMD4<Int32>, _ low: SIMD8<Int16>, _ high: SIMD8<Int16>
            ) -> SIMD4<Int32> {
                let sums =
                    YUV420Scaler.multiplyAddPairs(unsafeBitCast(this, to: SIMD8<Int16>.self), low)
                    &+ YUV420Scaler.multiplyAddPairs(unsafeBitCast(shifted, to: SIMD8<Int16>.self), high)
                return (sums &+ rounding) &>> 22
            }
            /// Twenty outputs (four periods) from columns `column ..< column + 50`, written to
            /// `out[0 ..< 23]`: the last three are overwritten by the next group.
            @inline(__always) func group(
                _ row: UnsafeRawPointer, _ shiftedRow: UnsafeRawPointer, _ column: Int, _ out: UnsafeMutableRawPointer
            ) {
                let byte = column &* 2
                @inline(__always) func load(_ j: Int) -> SIMD4<Int32> {
                    row.loadUnaligned(fromByteOffset: byte &+ 16 &* j, as: SIMD4<Int32>.self)
                }
                @inline(__always) func shifted(_ j: Int) -> SIMD4<Int32> {
                    shiftedRow.loadUnaligned(fromByteOffset: byte &+ 16 &* j, as: SIMD4<Int32>.self)
                }
                let r0 = lanes(load(0), shifted(0), low.0, high.0)
                let r1 = lanes(load(1), shifted(1), low.1, high.1)
                let r2 = lanes(load(2), shifted(2), low.2, high.2)
                let r3 = lanes(load(3), shifted(3), low.0, high.0)
                let r4 = lanes(load(4), shifted(4), low.1, high.1)
                let r5 = lanes(load(5), shifted(5), low.2, high.2)
                let first16 = YUV420Scaler.packed(r0, r1, r2, r3)
                let last8 = SIMD8<UInt8>(truncatingIfNeeded: SIMD8<Int32>(lowHalf: r4, highHalf: r5))
                // Little-endian lanes: byte n of a UInt64 is lane n.
                let a = unsafeBitCast(first16.lowHalf, to: UInt64.self)
                let b = unsafeBitCast(first16.highHalf, to: UInt64.self)
                let c = unsafeBitCast(last8, to: UInt64.self)
                out.storeBytes(of: a, as: UInt64.self)  // lanes 0-4 → 0-4
                out.storeBytes(of: (a &>> 48) | (b &<< 16), toByteOffset: 5, as: UInt64.self)  // 6-10 → 5-9
                out.storeBytes(of: UInt32(truncatingIfNeeded: b &>> 32), toByteOffset: 10, as: UInt32.self)  // 12-15
                out.storeBytes(of: c, toByteOffset: 14, as: UInt64.self)  // lane 16 → 14
                out.storeBytes(of: c &>> 16, toByteOffset: 15, as: UInt64.self)  // 18-22 → 15-19
            }
            var x = 0
            var column = 0
            while x &+ 23 <= kernel.width {
                group(upper, upperShifted, column, UnsafeMutableRawPointer(upperOut + x))
                group(lower, lowerShifted, column, UnsafeMutableRawPointer(lowerOut + x))
                x &+= 20
                column &+= 48
            }
            kernel.fourTapsTail(from: x, upper, lower, into: upperOut, lowerOut)
        }
    }

    /// Byte offsets of four outputs' first taps in a row.
    struct TapOffsets {
        let o0: Int, o1: Int, o2: Int, o3: Int
        init(_ o0: Int, _ o1: Int, _ o2: Int, _ o3: Int) {
            self.o0 = o0
            self.o1 = o1
            self.o2 = o2
            self.o3 = o3
        }
    }

    /// Four outputs of ``HorizontalKernel/runFourTaps(_:_:into:_:)``: each output's four taps at
    /// its offset times its weights (`low`: outputs 0 and 1, `high`: 2 and 3), rounded.
    @inline(__always)
    static func fourSums(
        _ column: UnsafeRawPointer, _ taps: TapOffsets, _ low: SIMD8<Int16>, _ high: SIMD8<Int16>,
        rounding: SIMD4<Int32>
    ) -> SIMD4<Int32> {
        let t0 = column.loadUnaligned(fromByteOffset: taps.o0, as: SIMD4<Int16>.self)
        let t1 = column.loadUnaligned(fromByteOffset: taps.o1, as: SIMD4<Int16>.self)
        let t2 = column.loadUnaligned(fromByteOffset: taps.o2, as: SIMD4<Int16>.self)
        let t3 = column.loadUnaligned(fromByteOffset: taps.o3, as: SIMD4<Int16>.self)
        let lowPairs: SIMD4<Int32> = multiplyAddPairs(SIMD8<Int16>(lowHalf: t0, highHalf: t1), low)
        let highPairs: SIMD4<Int32> = multiplyAddPairs(SIMD8<Int16>(lowHalf: t2, highHalf: t3), high)
        let pairs = SIMD8<Int32>(lowHalf: lowPairs, highHalf: highPairs)
        let sums: SIMD4<Int32> = pairs.evenHalf &+ pairs.oddHalf
        return (sums &+ rounding) &>> 22
    }

    /// Sixteen results in 0...255 as bytes.
    @inline(__always)
    static func packed(_ a: SIMD4<Int32>, _ b: SIMD4<Int32>, _ c: SIMD4<Int32>, _ d: SIMD4<Int32>) -> SIMD16<UInt8> {
        let first8 = SIMD8<Int16>(truncatingIfNeeded: SIMD8<Int32>(lowHalf: a, highHalf: b))
        let second8 = SIMD8<Int16>(truncatingIfNeeded: SIMD8<Int32>(lowHalf: c, highHalf: d))
        return SIMD16<UInt8>(truncatingIfNeeded: SIMD16<Int16>(lowHalf: first8, highHalf: second8))
    }

    /// `a[0] * b[0] + a[1] * b[1]`, `a[2] * b[2] + a[3] * b[3]`, ... in 32 bits (`pmaddwd`).
    @inline(__always)
    static func multiplyAddPairs(_ a: SIMD8<Int16>, _ b: SIMD8<Int16>) -> SIMD4<Int32> {
        let products = SIMD8<Int32>(truncatingIfNeeded: a) &* SIMD8<Int32>(truncatingIfNeeded: b)
        return products.evenHalf &+ products.oddHalf
    }
}
