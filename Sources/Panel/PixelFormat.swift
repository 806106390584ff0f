/// One colour channel's place in a framebuffer pixel (`struct fb_bitfield`).
public struct Bitfield: Hashable, Sendable {
    public var offset: Int
    public var length: Int

    public init(offset: Int, length: Int) {
        self.offset = offset
        self.length = length
    }
}

/// How a framebuffer stores pixels: its size, bits per pixel, where each channel sits, and the
/// bytes per row (`line_length`, which may exceed `width * bytesPerPixel`).
public struct FramebufferFormat: Hashable, Sendable, CustomStringConvertible {
    public var width: Int
    public var height: Int
    public var bitsPerPixel: Int
    public var red: Bitfield
    public var green: Bitfield
    public var blue: Bitfield
    /// Alpha or unused bits; set to all ones when the framebuffer has them (length > 0).
    public var transparent: Bitfield
    public var lineLength: Int

    public init(
        width: Int, height: Int, bitsPerPixel: Int, red: Bitfield, green: Bitfield, blue: Bitfield,
        transparent: Bitfield = Bitfield(offset: 0, length: 0), lineLength: Int? = nil
    ) {
        self.width = width
        self.height = height
        self.bitsPerPixel = bitsPerPixel
        self.red = red
        self.green = green
        self.blue = blue
        self.transparent = transparent
        self.lineLength = lineLength ?? width * bitsPerPixel / 8
    }

    /// RGB565: red in bits 11–15, green 5–10, blue 0–4.
    public static func rgb565(width: Int, height: Int, lineLength: Int? = nil) -> FramebufferFormat {
        FramebufferFormat(
            width: width, height: height, bitsPerPixel: 16, red: Bitfield(offset: 11, length: 5),
            green: Bitfield(offset: 5, length: 6), blue: Bitfield(offset: 0, length: 5), lineLength: lineLength)
    }

    /// XRGB8888 (`0xXXRRGGBB` little-endian: bytes B, G, R, X), the common 32-bit layout.
    public static func xrgb8888(width: Int, height: Int, lineLength: Int? = nil) -> FramebufferFormat {
        FramebufferFormat(
            width: width, height: height, bitsPerPixel: 32, red: Bitfield(offset: 16, length: 8),
            green: Bitfield(offset: 8, length: 8), blue: Bitfield(offset: 0, length: 8), lineLength: lineLength)
    }

    /// BGRX8888 (`0xBBGGRRXX`: bytes X, R, G, B), seen on some SPI and DRM-emulated panels.
    public static func bgrx8888(width: Int, height: Int, lineLength: Int? = nil) -> FramebufferFormat {
        FramebufferFormat(
            width: width, height: height, bitsPerPixel: 32, red: Bitfield(offset: 8, length: 8),
            green: Bitfield(offset: 16, length: 8), blue: Bitfield(offset: 24, length: 8), lineLength: lineLength)
    }

    public var bytesPerPixel: Int { bitsPerPixel / 8 }
    /// Bytes the visible picture occupies: `height * lineLength`.
    public var byteCount: Int { height * lineLength }

    /// Whether the panel can draw this format: 16 or 32 bpp, channels of 1–8 bits inside the pixel,
    /// rows long enough.
    public var isSupported: Bool {
        guard bitsPerPixel == 16 || bitsPerPixel == 32, lineLength >= width * bytesPerPixel else { return false }
        for field in [red, green, blue]
        where field.length < 1 || field.length > 8 || field.offset + field.length > bitsPerPixel {
            return false
        }
        return true
    }

    /// The framebuffer's value for `color`: each channel's top bits, shifted into place.
    public func pack(_ color: PanelColor) -> UInt32 {
        PixelPacker(self).pack(UInt32(color.red) << 16 | UInt32(color.green) << 8 | UInt32(color.blue))
    }

    /// The colour of a framebuffer value (the inverse of ``pack(_:)`` up to the lost low bits,
    /// which are filled by repeating the high ones, so full white stays 255).
    public func unpack(_ value: UInt32) -> PanelColor {
        func channel(_ field: Bitfield) -> UInt8 {
            let bits = (value >> UInt32(field.offset)) & ((1 << UInt32(field.length)) - 1)
            var expanded = bits << UInt32(8 - field.length)
            var filled = field.length
            while filled < 8 {
                expanded |= expanded >> UInt32(filled)
                filled *= 2
            }
            return UInt8(expanded & 0xFF)
        }
        return PanelColor(red: channel(red), green: channel(green), blue: channel(blue))
    }

    /// The value of the pixel at (`x`, `y`) in framebuffer memory of this format.
    public func value(at x: Int, _ y: Int, in memory: UnsafeRawPointer) -> UInt32 {
        let offset = y * lineLength + x * bytesPerPixel
        return bitsPerPixel == 16
            ? UInt32(memory.loadUnaligned(fromByteOffset: offset, as: UInt16.self))
            : memory.loadUnaligned(fromByteOffset: offset, as: UInt32.self)
    }

    /// The largest difference per channel between a colour and its packed-then-unpacked value.
    public var quantizationTolerance: Int {
        (1 << (8 - min(red.length, green.length, blue.length))) - 1
    }

    public var description: String {
        let name: String
        if self == .rgb565(width: width, height: height, lineLength: lineLength) {
            name = "RGB565"
        } else if bitsPerPixel == 32, red.offset == 16, green.offset == 8, blue.offset == 0 {
            name = "XRGB8888"
        } else if bitsPerPixel == 32, red.offset == 8, green.offset == 16, blue.offset == 24 {
            name = "BGRX8888"
        } else if bitsPerPixel == 32, red.offset == 0, green.offset == 8, blue.offset == 16, red.length == 8 {
            name = "XBGR8888"
        } else if bitsPerPixel == 16, red == Bitfield(offset: 0, length: 5), green == Bitfield(offset: 5, length: 6),
            blue == Bitfield(offset: 11, length: 5)
        {
            name = "BGR565"
        } else {
            name =
                "\(bitsPerPixel)bpp R\(red.length)@\(red.offset) G\(green.length)@\(green.offset) B\(blue.length)@\(blue.offset)"
        }
        return "\(width)x\(height) \(name), line_length \(lineLength)"
    }
}

/// Converts Cairo's `0x00RRGGBB` pixels to a framebuffer's layout with precomputed shifts.
struct PixelPacker {
    let redDown: UInt32, redUp: UInt32
    let greenDown: UInt32, greenUp: UInt32
    let blueDown: UInt32, blueUp: UInt32
    let constant: UInt32

    init(_ format: FramebufferFormat) {
        redDown = UInt32(8 - format.red.length)
        redUp = UInt32(format.red.offset)
        greenDown = UInt32(8 - format.green.length)
        greenUp = UInt32(format.green.offset)
        blueDown = UInt32(8 - format.blue.length)
        blueUp = UInt32(format.blue.offset)
        let t = format.transparent
        constant = t.length > 0 ? (UInt32.max >> UInt32(32 - t.length)) << UInt32(t.offset) : 0
    }

    @inline(__always)
    func pack(_ pixel: UInt32) -> UInt32 {
        // Masking shifts (&>>, &<<): the amounts are always < 32, and Swift's checked shifts by a
        // variable amount would add branches to every pixel.
        ((pixel &>> 16 & 0xFF) &>> redDown) &<< redUp | ((pixel &>> 8 & 0xFF) &>> greenDown) &<< greenUp
            | ((pixel & 0xFF) &>> blueDown) &<< blueUp | constant
    }
}

/// Copies rectangles of a ``PanelImage`` into framebuffer memory of a given format, converting
/// pixels on the way. Bytes outside the rectangles (and any row padding) are never written.
public enum PixelCopier {
    /// Copies `rects` of `image` to `destination`, which holds at least `format.byteCount` bytes.
    /// Rectangles are clipped to both the picture and the framebuffer.
    public static func copy(
        _ image: PanelImage, rects: [PanelRect], to destination: UnsafeMutableRawPointer, format: FramebufferFormat
    ) {
        precondition(format.isSupported, "unsupported framebuffer format \(format)")
        let bounds = PanelRect(
            x: 0, y: 0, width: min(image.width, format.width), height: min(image.height, format.height))
        let packer = PixelPacker(format)
        let isStandard565 = format == .rgb565(width: format.width, height: format.height, lineLength: format.lineLength)
        let isNative32 =
            format.bitsPerPixel == 32 && format.red == Bitfield(offset: 16, length: 8)
            && format.green == Bitfield(offset: 8, length: 8) && format.blue == Bitfield(offset: 0, length: 8)
            && packer.constant == 0
        image.withPixelsReadOnly { source in
            for rect in rects {
                let r = rect.intersection(bounds)
                if r.isEmpty { continue }
                for row in r.y..<r.maxY {
                    let input = (source + row * image.stride + r.x * 4).assumingMemoryBound(to: UInt32.self)
                    let output = destination + row * format.lineLength + r.x * format.bytesPerPixel
                    if isNative32 {
                        // Cairo's RGB24 is XRGB8888 already: a plain copy (the X byte is ignored by the display).
                        output.copyMemory(from: input, byteCount: r.width * 4)
                    } else if isStandard565 {
                        // Constant shifts: the compiler vectorizes this loop.
                        let out = output.assumingMemoryBound(to: UInt16.self)
                        for i in 0..<r.width {
                            let p = input[i]
                            out[i] = UInt16(
                                truncatingIfNeeded: (p &>> 8 & 0xF800) | (p &>> 5 & 0x07E0) | (p &>> 3 & 0x001F))
                        }
                    } else if format.bitsPerPixel == 32 {
                        let out = output.assumingMemoryBound(to: UInt32.self)
                        for i in 0..<r.width { out[i] = packer.pack(input[i]) }
                    } else {
                        let out = output.assumingMemoryBound(to: UInt16.self)
                        for i in 0..<r.width { out[i] = UInt16(truncatingIfNeeded: packer.pack(input[i])) }
                    }
                }
            }
        }
    }
}
