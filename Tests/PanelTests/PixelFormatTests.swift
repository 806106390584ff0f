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
