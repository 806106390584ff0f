import Panel
import SwiftWingCore
import Testing

@Suite("Copying to framebuffer memory")
struct PixelCopierTests {
    /// A picture with distinct colours in its corners and an orange block.
    func picture(width: Int, height: Int) throws -> PanelImage {
        let image = try PanelImage(width: width, height: height)
        image.withPixels { pixels in
            for y in 0..<height {
                let row = (pixels + y * image.stride).assumingMemoryBound(to: UInt32.self)
                for x in 0..<width { row[x] = UInt32(x * 255 / width) << 16 | UInt32(y * 255 / height) << 8 | 0x40 }
            }
        }
        return image
    }

    @Test("a line_length longer than the row: padding bytes stay untouched", arguments: [16, 32])
    func strideHandling(bitsPerPixel: Int) throws {
        let width = 37
        let height = 11
        let rowBytes = width * bitsPerPixel / 8
        let lineLength = rowBytes + 52
        let format =
            bitsPerPixel == 16
            ? FramebufferFormat.rgb565(width: width, height: height, lineLength: lineLength)
            : .bgrx8888(width: width, height: height, lineLength: lineLength)
        let image = try picture(width: width, height: height)
        var memory = [UInt8](repeating: 0xAB, count: format.byteCount)
        memory.withUnsafeMutableBytes {
            PixelCopier.copy(
                image, rects: [PanelRect(x: 0, y: 0, width: width, height: height)], to: $0.baseAddress!, format: format
            )
        }
        for y in 0..<height {
            let padding = memory[(y * lineLength + rowBytes)..<((y + 1) * lineLength)]
            #expect(padding.allSatisfy { $0 == 0xAB }, "row \(y) padding overwritten")
            for x in [0, width / 2, width - 1] {
                let value = memory.withUnsafeBytes { format.value(at: x, y, in: $0.baseAddress!) }
                #expect(value == format.pack(image.pixel(x: x, y: y)), "pixel \(x),\(y)")
            }
        }
    }

    @Test("a rectangle copies exactly its pixels and clips at the edges")
    func rectangleOnly() throws {
        let format = FramebufferFormat.xrgb8888(width: 20, height: 10)
        let image = try picture(width: 20, height: 10)
        var memory = [UInt8](repeating: 0, count: format.byteCount)
        let rect = PanelRect(x: 15, y: 7, width: 10, height: 10)  // runs off the right and bottom edges
        memory.withUnsafeMutableBytes { PixelCopier.copy(image, rects: [rect], to: $0.baseAddress!, format: format) }
        for y in 0..<10 {
            for x in 0..<20 {
                let value = memory.withUnsafeBytes { format.value(at: x, y, in: $0.baseAddress!) }
                let inside = x >= 15 && y >= 7
                #expect(value == (inside ? format.pack(image.pixel(x: x, y: y)) : 0), "pixel \(x),\(y)")
            }
        }
    }
}
