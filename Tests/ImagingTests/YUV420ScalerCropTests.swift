import Imaging
import SwiftWingCore
import Testing

/// ``YUV420Scaler/cropped(_:x:y:width:height:maxLongEdge:)``: one book of a shelf photo on its own.
@Suite struct YUV420ScalerCropTests {
    /// A 64x48 frame whose luma is its column number, so a crop's left edge shows where it was cut.
    static func ramp() -> YUV420Frame {
        let frame = YUV420Frame(layout: YUV420Layout(width: 64, height: 48))
        let bytes = frame.buffer.bytes
        for row in 0..<48 {
            for column in 0..<64 { bytes[row * frame.layout.lumaStride + column] = UInt8(column * 4) }
        }
        return frame
    }

    @Test func aRegionInsideIsCutExactlyAndNotEnlarged() throws {
        let crop = try YUV420Scaler().cropped(Self.ramp(), x: 10, y: 4, width: 12, height: 30, maxLongEdge: 320)
        #expect(crop.width == 12 && crop.height == 30)
        #expect(crop.buffer.bytes[0] == 40)
        #expect(crop.buffer.bytes[11] == 84)
    }

    @Test func aRegionOverTheEdgeIsCutToTheFrameAndShrunkToTheLongEdge() throws {
        let crop = try YUV420Scaler().cropped(Self.ramp(), x: 32, y: -10, width: 100, height: 100, maxLongEdge: 24)
        // 32x48 of the frame is inside; the long edge 48 shrinks to 24.
        #expect(crop.width == 16 && crop.height == 24)
        #expect(crop.buffer.bytes[0] >= 128 && crop.buffer.bytes[0] <= 132)
    }

    @Test func aRegionOutsideTheFrameIsAnErrorThatSaysSo() {
        #expect(throws: ImagingError.self) {
            try YUV420Scaler().cropped(Self.ramp(), x: 70, y: 0, width: 10, height: 10, maxLongEdge: 320)
        }
        #expect(throws: ImagingError.self) {
            try YUV420Scaler().cropped(Self.ramp(), x: 0, y: 0, width: 0, height: 10, maxLongEdge: 320)
        }
    }
}
