import Testing

@testable import Imaging

@Suite("YUV420 scaler, the 12:5 horizontal pass")
struct YUV420ScalerTwelveToFiveTests {
    static func kernelApplies(sourceWidth: Int, targetWidth: Int) -> Bool {
        let columns = YUV420Scaler.AxisWeights(
            sourceStart: 0, sourceLength: Double(sourceWidth), sourceSize: sourceWidth, targetSize: targetWidth,
            bits: 15)
        defer { columns.deallocate() }
        let kernel = YUV420Scaler.HorizontalKernel(columns, left: columns.first[0], width: targetWidth)
        defer { kernel.deallocate() }
        return YUV420Scaler.TwelveToFiveKernel(kernel) != nil
    }

    @Test("taken for 4608 → 1920 and its chroma 2304 → 960, not for other ratios")
    func takenForTwelveToFive() {
        #expect(Self.kernelApplies(sourceWidth: 4608, targetWidth: 1920))
        #expect(Self.kernelApplies(sourceWidth: 2304, targetWidth: 960))
        #expect(Self.kernelApplies(sourceWidth: 600, targetWidth: 250))
        #expect(!Self.kernelApplies(sourceWidth: 4056, targetWidth: 1920))
        #expect(!Self.kernelApplies(sourceWidth: 4608, targetWidth: 1919))
        #expect(!Self.kernelApplies(sourceWidth: 500, targetWidth: 200))
    }

    @Test(
        "gives the same bytes as the general horizontal pass",
        arguments: [(576, 324, 240, 135), (600, 250, 250, 104), (4608, 24, 1920, 10)])
    func sameBytesAsGeneralPass(sourceWidth: Int, sourceHeight: Int, width: Int, height: Int) {
        let stride = sourceWidth + 5
        let source = UnsafeMutablePointer<UInt8>.allocate(capacity: stride * sourceHeight)
        defer { source.deallocate() }
        var seed: UInt32 = 2024
        for i in 0..<(stride * sourceHeight) {
            seed = seed &* 1_103_515_245 &+ 12345
            source[i] = UInt8(truncatingIfNeeded: seed >> 16)
        }
        let view = YUV420Scaler.PlaneView(
            base: UnsafeRawPointer(source), width: sourceWidth, height: sourceHeight, stride: stride)
        let crop = YUV420Scaler.CropRect(x: 0, y: 0, width: Double(sourceWidth), height: Double(sourceHeight))
        func scaled(twelveToFive: Bool) -> [UInt8] {
            var out = [UInt8](repeating: 0, count: width * height)
            out.withUnsafeMutableBytes { bytes in
                YUV420Scaler.scalePlane(
                    view, crop: crop,
                    into: YUV420Scaler.MutablePlaneView(
                        base: bytes.baseAddress!, width: width, height: height, stride: width),
                    twelveToFive: twelveToFive)
            }
            return out
        }
        let fast = scaled(twelveToFive: true)
        let general = scaled(twelveToFive: false)
        let differing = zip(fast, general).filter { $0 != $1 }.count
        #expect(differing == 0, "\(differing) of \(fast.count) bytes differ")
    }
}

@Suite("YUV420 scaler, weights kept between frames")
struct YUV420ScalerWeightCacheTests {
    static func key(_ width: Int) -> YUV420Scaler.PlaneWeights.Key {
        YUV420Scaler.PlaneWeights.Key(
            crop: YUV420Scaler.CropRect(x: 0, y: 0, width: Double(width), height: 64),
            sourceWidth: width, sourceHeight: 64, targetWidth: width * 5 / 12, targetHeight: 27)
    }

    @Test("the same size gets the same weights; other sizes their own; the cache stays bounded")
    func sameSizeSameWeights() {
        let first = YUV420Scaler.PlaneWeights.cached(Self.key(1200))
        #expect(YUV420Scaler.PlaneWeights.cached(Self.key(1200)) === first)
        let other = YUV420Scaler.PlaneWeights.cached(Self.key(2400))
        #expect(other !== first)
        #expect(other.columns.taps >= 3 && first.rows.taps >= 3)
        // Filling the cache past its limit starts it over, so a size seen long ago is made afresh.
        for width in 1...YUV420Scaler.PlaneWeights.cacheLimit {
            _ = YUV420Scaler.PlaneWeights.cached(Self.key(1200 + 12 * width))
        }
        let again = YUV420Scaler.PlaneWeights.cached(Self.key(2400))
        #expect(again.columns.first[0] == other.columns.first[0])
        #expect(again.columns.weights[1] == other.columns.weights[1])
    }
}
