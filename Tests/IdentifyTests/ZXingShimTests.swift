import CZXingShim
import Identify
import SwiftWingTesting
import Testing

/// zxing-cpp's C shim on input no camera gives: arguments that cannot describe a picture are
/// refused before zxing-cpp sees them (its ImageView checks nothing), and odd pictures come back
/// as "no code" rather than ending the process.
@Suite("zxing-cpp shim on hostile input")
struct ZXingShimTests {
    func read(_ pixels: [UInt8], width: Int32, height: Int32, stride: Int32, capacity: Int32 = 1) -> Int32 {
        var codes = [zxing_shim_code](repeating: zxing_shim_code(), count: 1)
        return pixels.withUnsafeBufferPointer { input in
            codes.withUnsafeMutableBufferPointer { output in
                zxing_shim_read(input.baseAddress, width, height, stride, output.baseAddress, capacity)
            }
        }
    }

    @Test("sizes that do not describe the buffer are refused with -1")
    func badArguments() {
        let pixels = [UInt8](repeating: 255, count: 64)
        #expect(read(pixels, width: 0, height: 8, stride: 8) == -1)
        #expect(read(pixels, width: 8, height: 0, stride: 8) == -1)
        #expect(read(pixels, width: -8, height: 8, stride: 8) == -1)
        #expect(read(pixels, width: 8, height: 8, stride: 4) == -1, "stride below the width")
        #expect(read(pixels, width: 8, height: 8, stride: 8, capacity: 0) == -1)
        var codes = zxing_shim_code()
        #expect(zxing_shim_read(nil, 8, 8, 8, &codes, 1) == -1)
        #expect(read(pixels, width: 8, height: 8, stride: 8) == 0, "a blank 8x8 picture is read: no code")
    }

    @Test("degenerate and noisy pictures give no code, and the process lives")
    func oddPictures() throws {
        var generator = SeededGenerator(seed: 11)
        let noise = (0..<(640 * 480)).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
        // Bars of one pixel (any start guard matches everywhere), and an EAN start guard cut short.
        let stripes = (0..<(640 * 64)).map { UInt8(($0 % 640) % 2 == 0 ? 0 : 255) }
        let guardOnly = (0..<(200 * 40)).map { i -> UInt8 in
            let x = i % 200
            return (20..<23).contains(x) && x != 21 ? 0 : 255
        }
        let cases: [(name: String, pixels: [UInt8], width: Int32, height: Int32)] = [
            ("1x1", [0], 1, 1), ("one row", [UInt8](repeating: 0, count: 4000), 4000, 1),
            ("one column", [UInt8](repeating: 255, count: 4000), 1, 4000), ("noise", noise, 640, 480),
            ("1-pixel stripes", stripes, 640, 64), ("start guard only", guardOnly, 200, 40),
        ]
        for (name, pixels, width, height) in cases {
            #expect(read(pixels, width: width, height: height, stride: width) == 0, "\(name)")
        }
        // The same pictures through the reader the daemon uses.
        let reader = try BarcodeReader()
        for (name, pixels, width, height) in cases {
            let codes = try pixels.withUnsafeBytes {
                try reader.read(luma: $0, width: Int(width), height: Int(height), stride: Int(width))
            }
            #expect(codes.isEmpty, "\(name): \(codes)")
        }
    }
}
