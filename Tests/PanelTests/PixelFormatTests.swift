import Panel
import SwiftWingCore
import Testing

@Suite("Framebuffer pixel formats")
struct PixelFormatTests {
    let rgb565 = FramebufferFormat.rgb565(width: 4, height: 2)

    @Test("RGB565 packs known colours to known 16-bit values")
    func rgb565Packing() {
        #expect(rgb565.pack(.black) == 0x0000)
        #expect(rgb565.pack(.white) == 0xFFFF)
        #expect(rgb565.pack(PanelColor(hex: 0xFF0000)) == 0xF800)
        #expect(rgb565.pack(PanelColor(hex: 0x00FF00)) == 0x07E0)
        #expect(rgb565.pack(PanelColor(hex: 0x0000FF)) == 0x001F)
        // International Orange #FF3B30: R 31, G 0x3B >> 2 = 14, B 0x30 >> 3 = 6.
        #expect(rgb565.pack(.orange) == 0xF9C6)
        #expect(rgb565.pack(PanelColor(hex: 0x808080)) == 0x8410)
    }

    @Test("32-bit layouts follow the bitfields, alpha bits set when present")
    func thirtyTwoBitPacking() {
        #expect(FramebufferFormat.xrgb8888(width: 1, height: 1).pack(.orange) == 0x00FF_3B30)
        #expect(FramebufferFormat.bgrx8888(width: 1, height: 1).pack(.orange) == 0x303B_FF00)
        var argb = FramebufferFormat.xrgb8888(width: 1, height: 1)
        argb.transparent = Bitfield(offset: 24, length: 8)
        #expect(argb.pack(.orange) == 0xFFFF_3B30)
    }

    @Test("unpack inverts pack within the format's quantization")
    func roundTrip() {
        for format in [rgb565, .xrgb8888(width: 1, height: 1), .bgrx8888(width: 1, height: 1)] {
            for hex: UInt32 in [0x000000, 0xFFFFFF, 0xFF3B30, 0x123456, 0x8E8E93, 0x0A84FF] {
                let color = PanelColor(hex: hex)
                let back = format.unpack(format.pack(color))
                let delta = max(
                    abs(Int(back.red) - Int(color.red)), abs(Int(back.green) - Int(color.green)),
                    abs(Int(back.blue) - Int(color.blue)))
                #expect(delta <= format.quantizationTolerance, "\(format) \(hex)")
            }
        }
        #expect(rgb565.unpack(0xFFFF) == .white)
        #expect(rgb565.quantizationTolerance == 7)
        #expect(FramebufferFormat.xrgb8888(width: 1, height: 1).quantizationTolerance == 0)
    }

    @Test("8 bpp, 24 bpp and short rows are refused")
    func unsupported() {
        var format = rgb565
        format.bitsPerPixel = 8
        #expect(!format.isSupported)
        format = .xrgb8888(width: 10, height: 1, lineLength: 36)
        #expect(!format.isSupported)
        #expect(FramebufferFormat.xrgb8888(width: 10, height: 1, lineLength: 40).isSupported)
    }
}

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
        let width = 37, height = 11
        let rowBytes = width * bitsPerPixel / 8
        let lineLength = rowBytes + 52
        let format =
            bitsPerPixel == 16
            ? FramebufferFormat.rgb565(width: width, height: height, lineLength: lineLength)
            : .bgrx8888(width: width, height: height, lineLength: lineLength)
        let image = try picture(width: width, height: height)
        var memory = [UInt8](repeating: 0xAB, count: format.byteCount)
        memory.withUnsafeMutableBytes {
            PixelCopier.copy(image, rects: [PanelRect(x: 0, y: 0, width: width, height: height)], to: $0.baseAddress!, format: format)
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

@Suite("YUV to RGB")
struct YUVConversionTests {
    @Test("a viewfinder frame of video-level white and black converts to white and black")
    func levels() throws {
        let frame = YUV420Frame(layout: YUV420Layout(width: 4, height: 2))
        for x in 0..<4 {
            frame.luma[x] = 235
            frame.luma[4 + x] = 16
        }
        for i in 0..<2 {
            frame.cb[i] = 128
            frame.cr[i] = 128
        }
        let renderer = try PanelRenderer(width: 800, height: 480)
        var model = PanelModel(viewfinder: PanelPicture(frame))
        renderer.render(model)
        let box = renderer.layout.viewfinder
        // The frame fills the box (cropped): top half white, bottom half black (inside the corner marks).
        #expect(renderer.image.pixel(x: box.x + box.width / 2, y: box.y + box.height / 4) == .white)
        #expect(renderer.image.pixel(x: box.x + box.width / 2, y: box.y + box.height * 3 / 4) == .black)
        // A new frame redraws the viewfinder box and nothing else.
        let next = YUV420Frame(layout: YUV420Layout(width: 4, height: 2))
        model.viewfinder = PanelPicture(next)
        #expect(renderer.render(model) == [box])
    }
}
