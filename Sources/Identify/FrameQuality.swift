import SwiftWingCore

/// How good a frame is for reading: sharpness and exposure of its Y plane.
public struct FrameQuality: Sendable, Hashable, Codable {
    /// Variance of the 3x3 Laplacian (4-neighbour) over the plane; higher is sharper. Blur removes
    /// fine detail, and with it most of the Laplacian's spread.
    public var sharpness: Double
    public var exposure: Exposure

    public init(sharpness: Double, exposure: Exposure) {
        self.sharpness = sharpness
        self.exposure = exposure
    }

    /// The grey levels of the plane: how dark it is and how much of it is clipped.
    public struct Exposure: Sendable, Hashable, Codable {
        /// Mean luma, 0-255.
        public var mean: Double
        /// Fraction of pixels at or below ``FrameQuality/clippedShadow`` (crushed to black).
        public var shadows: Double
        /// Fraction of pixels at or above ``FrameQuality/clippedHighlight`` (blown to white).
        public var highlights: Double

        public init(mean: Double, shadows: Double, highlights: Double) {
            self.mean = mean
            self.shadows = shadows
            self.highlights = highlights
        }
    }

    /// Levels counted as clipped: full-range luma, with a little room for sensor noise.
    public static let clippedShadow: UInt8 = 16
    public static let clippedHighlight: UInt8 = 239

    /// What the frame is good for, against `thresholds`; the first problem found wins, darkness
    /// first (a dark frame also looks blurred: little detail survives in it).
    public func verdict(_ thresholds: QualityThresholds) -> QualityVerdict {
        if exposure.mean < thresholds.minimumMeanLevel || exposure.shadows > thresholds.maximumShadowFraction {
            return .dark
        }
        if exposure.highlights > thresholds.maximumHighlightFraction { return .bright }
        if sharpness < thresholds.minimumSharpness { return .blurry }
        return .good
    }
}

/// The outcome of the quality check.
public enum QualityVerdict: String, Sendable, Hashable, Codable {
    case good
    case blurry
    case dark
    case bright
}

/// Computes ``FrameQuality`` from a luma plane in one pass over every `rowStep`-th row (the
/// Laplacian needs the rows above and below, which it reads but does not count).
public struct QualityMeter: Sendable {
    /// Rows between measured rows; 4 keeps a 1080p frame near half a millisecond and the figures within
    /// a few percent of measuring every row.
    public var rowStep: Int

    public init(rowStep: Int = 4) {
        self.rowStep = max(1, rowStep)
    }

    public func measure(
        luma plane: UnsafeRawBufferPointer, width: Int, height: Int, stride: Int
    ) throws(IdentifyError) -> FrameQuality {
        guard width >= 3, height >= 3, stride >= width, plane.count >= stride * (height - 1) + width else {
            throw .badFrame(
                "a \(width)x\(height) plane with stride \(stride) does not fit in \(plane.count) bytes (3x3 at least)")
        }
        var sums = RowSums()
        var samples = 0
        plane.withMemoryRebound(to: UInt8.self) { pixels in
            var y = 1
            while y < height - 1 {
                sums.add(row: pixels.baseAddress! + y * stride, width: width, stride: stride)
                samples += width - 2
                y += rowStep
            }
        }
        let count = Double(samples)
        let meanLaplacian = Double(sums.laplacian) / count
        return FrameQuality(
            sharpness: Double(sums.squares) / count - meanLaplacian * meanLaplacian,
            exposure: .init(
                mean: Double(sums.level) / count, shadows: Double(sums.shadows) / count,
                highlights: Double(sums.highlights) / count))
    }
}

/// The sums of one pass, added up row by row sixteen pixels at a time in vector lanes, then into the totals before a
/// lane can overflow. The same integers as adding up pixel by pixel with `Int` (a test compares them on random planes)
/// in about a third of the time: the quality check runs on every frame, beside the barcode read, within the frame's
/// encode time. Lanes are widened by reinterpreting their bytes (even and odd pixels apart), not by converting vector
/// types, which the compiler leaves as calls.
struct RowSums {
    var laplacian = 0
    var squares = 0
    var level = 0
    var shadows = 0
    var highlights = 0

    /// Chunks of sixteen pixels between moves into the totals: a byte lane counts at most 64 clipped pixels, a 16-bit
    /// lane sums at most 64 x 510 levels, a 32-bit lane 64 x 4 squares of at most 1,040,400.
    static let chunksPerFlush = 64

    /// Adds the pixels 1 ..< width - 1 of the row at `centre` (its neighbours `stride` bytes above and below).
    mutating func add(row centre: UnsafePointer<UInt8>, width: Int, stride: Int) {
        let raw = UnsafeRawPointer(centre)
        let dark = SIMD16<UInt8>(repeating: FrameQuality.clippedShadow)
        let light = SIMD16<UInt8>(repeating: FrameQuality.clippedHighlight)
        let one = SIMD16<UInt8>(repeating: 1)
        var laplacianLanes = SIMD4<Int32>()
        var squareLanes = SIMD4<Int32>()
        var levelLanes = SIMD8<UInt16>()
        var shadowLanes = SIMD16<UInt8>()
        var highlightLanes = SIMD16<UInt8>()
        var chunks = 0
        func flush() {
            laplacian &+= Int(laplacianLanes.wrappedSum())
            squares &+= Int(squareLanes[0]) &+ Int(squareLanes[1]) &+ Int(squareLanes[2]) &+ Int(squareLanes[3])
            for lane in 0..<8 { level &+= Int(levelLanes[lane]) }
            shadows &+= Self.byteSum(shadowLanes)
            highlights &+= Self.byteSum(highlightLanes)
            (laplacianLanes, squareLanes, levelLanes, shadowLanes, highlightLanes) = (.zero, .zero, .zero, .zero, .zero)
            chunks = 0
        }
        var x = 1
        while x + 16 <= width - 1 {
            let here = raw.loadUnaligned(fromByteOffset: x, as: SIMD16<UInt8>.self)
            let (centreEven, centreOdd) = Self.split(here)
            let (leftEven, leftOdd) = Self.split(raw.loadUnaligned(fromByteOffset: x - 1, as: SIMD16<UInt8>.self))
            let (rightEven, rightOdd) = Self.split(raw.loadUnaligned(fromByteOffset: x + 1, as: SIMD16<UInt8>.self))
            let (upEven, upOdd) = Self.split(raw.loadUnaligned(fromByteOffset: x - stride, as: SIMD16<UInt8>.self))
            let (downEven, downOdd) = Self.split(raw.loadUnaligned(fromByteOffset: x + stride, as: SIMD16<UInt8>.self))
            // At most 1,020 either way: exact in 16 bits.
            let even = (leftEven &+ rightEven) &+ (upEven &+ downEven) &- (centreEven &<< 2)
            let odd = (leftOdd &+ rightOdd) &+ (upOdd &+ downOdd) &- (centreOdd &<< 2)
            let (evenLow, evenHigh) = Self.widened(even)
            let (oddLow, oddHigh) = Self.widened(odd)
            laplacianLanes &+= (evenLow &+ evenHigh) &+ (oddLow &+ oddHigh)
            squareLanes &+= (evenLow &* evenLow &+ evenHigh &* evenHigh) &+ (oddLow &* oddLow &+ oddHigh &* oddHigh)
            levelLanes &+=
                unsafeBitCast(centreEven, to: SIMD8<UInt16>.self)
                &+ unsafeBitCast(centreOdd, to: SIMD8<UInt16>.self)
            shadowLanes &+= SIMD16<UInt8>().replacing(with: one, where: here .<= dark)
            highlightLanes &+= SIMD16<UInt8>().replacing(with: one, where: here .>= light)
            x += 16
            chunks += 1
            if chunks == Self.chunksPerFlush { flush() }
        }
        flush()
        let darkLevel = Int(FrameQuality.clippedShadow)
        let lightLevel = Int(FrameQuality.clippedHighlight)
        while x < width - 1 {
            let level = Int(centre[x])
            let value =
                Int(centre[x - 1]) + Int(centre[x + 1]) + Int(centre[x - stride]) + Int(centre[x + stride]) - 4 * level
            laplacian &+= value
            squares &+= value * value
            self.level &+= level
            shadows &+= level <= darkLevel ? 1 : 0
            highlights &+= level >= lightLevel ? 1 : 0
            x += 1
        }
    }

    /// The even and the odd bytes of `bytes`, each in a 16-bit lane (little-endian: the even byte is the low one).
    @inline(__always)
    private static func split(_ bytes: SIMD16<UInt8>) -> (even: SIMD8<Int16>, odd: SIMD8<Int16>) {
        let pairs = unsafeBitCast(bytes, to: SIMD8<UInt16>.self)
        return (
            unsafeBitCast(pairs & SIMD8(repeating: 0x00FF), to: SIMD8<Int16>.self),
            unsafeBitCast(pairs &>> 8, to: SIMD8<Int16>.self)
        )
    }

    /// The even and the odd 16-bit lanes of `values`, sign-extended to 32 bits.
    @inline(__always)
    private static func widened(_ values: SIMD8<Int16>) -> (even: SIMD4<Int32>, odd: SIMD4<Int32>) {
        let pairs = unsafeBitCast(values, to: SIMD4<Int32>.self)
        return ((pairs &<< 16) &>> 16, pairs &>> 16)
    }

    /// The sum of the sixteen bytes.
    @inline(__always)
    private static func byteSum(_ bytes: SIMD16<UInt8>) -> Int {
        let pairs = unsafeBitCast(bytes, to: SIMD8<UInt16>.self)
        let sums = (pairs & SIMD8(repeating: 0x00FF)) &+ (pairs &>> 8)
        return Int(sums.wrappedSum())
    }
}
