import CPNG
import SwiftWingCore

/// Decodes PNG pictures to ``YUV420Frame``s through libpng's simplified API, which turns every PNG
/// kind (palette, grey, 16-bit, alpha, interlaced) into 8-bit RGB. The only file that calls libpng.
public struct PNGDecoder: Sendable {
    public init() {}

    /// Whether `bytes` start with the PNG signature.
    public static func isPNG(_ bytes: [UInt8]) -> Bool {
        bytes.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
    }

    /// Decodes `png`; `source` names it in errors (a path).
    public func decode(_ png: [UInt8], source: String) throws(IdentifyError) -> YUV420Frame {
        var image = png_image()
        image.version = UInt32(PNG_IMAGE_VERSION)
        let started = png.withUnsafeBytes { bytes in
            png_image_begin_read_from_memory(&image, bytes.baseAddress, bytes.count)
        }
        guard started != 0 else {
            throw .unreadableFile(path: source, reason: "not a PNG libpng can read (\(message(image)))")
        }
        guard image.width > 0, image.height > 0, image.width <= 1 << 14, image.height <= 1 << 14 else {
            png_image_free(&image)
            throw .unreadableFile(
                path: source, reason: "a \(image.width)x\(image.height) PNG is outside 1-16384 pixels a side")
        }
        image.format = UInt32(PNG_FORMAT_RGB)
        let width = Int(image.width)
        let height = Int(image.height)
        var rgb = [UInt8](repeating: 0, count: width * height * 3)
        let finished = png.withUnsafeBytes { _ in
            rgb.withUnsafeMutableBytes { pixels in
                png_image_finish_read(&image, nil, pixels.baseAddress, 0, nil)
            }
        }
        guard finished != 0 else { throw .unreadableFile(path: source, reason: "corrupt PNG (\(message(image)))") }
        return Self.frame(rgb: rgb, width: width, height: height)
    }

    /// libpng's own words for what went wrong.
    private func message(_ image: png_image) -> String {
        withUnsafeBytes(of: image.message) { bytes in
            String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
        }
    }

    /// Packed RGB to planar 4:2:0 with the JFIF (full-range BT.601) matrix, the one JPEG
    /// decoding uses, so a PNG and a JPEG of the same picture give the same Y plane.
    static func frame(rgb: [UInt8], width: Int, height: Int) -> YUV420Frame {
        let frame = YUV420Frame(layout: YUV420Layout(width: width, height: height))
        let layout = frame.layout
        let luma = frame.luma
        let cb = frame.cb
        let cr = frame.cr
        rgb.withUnsafeBufferPointer { source in
            for y in 0..<height {
                for x in 0..<width {
                    let index = (y * width + x) * 3
                    let red = Int(source[index])
                    let green = Int(source[index + 1])
                    let blue = Int(source[index + 2])
                    luma[y * layout.lumaStride + x] = UInt8((19595 * red + 38470 * green + 7471 * blue + 32768) >> 16)
                }
            }
            for chromaY in 0..<layout.chromaHeight {
                for chromaX in 0..<layout.chromaWidth {
                    var red = 0
                    var green = 0
                    var blue = 0
                    var count = 0
                    for y in (2 * chromaY)..<min(height, 2 * chromaY + 2) {
                        for x in (2 * chromaX)..<min(width, 2 * chromaX + 2) {
                            let index = (y * width + x) * 3
                            red += Int(source[index])
                            green += Int(source[index + 1])
                            blue += Int(source[index + 2])
                            count += 1
                        }
                    }
                    // Fixed-point JFIF coefficients (x 65536), averaged over the 2x2 block.
                    let blueDifference = (-11059 * red - 21709 * green + 32768 * blue) / count
                    let redDifference = (32768 * red - 27439 * green - 5329 * blue) / count
                    let offset = chromaY * layout.chromaStride + chromaX
                    cb[offset] = UInt8(clamping: 128 + (blueDifference + 32768) >> 16)
                    cr[offset] = UInt8(clamping: 128 + (redDifference + 32768) >> 16)
                }
            }
        }
        return frame
    }
}
