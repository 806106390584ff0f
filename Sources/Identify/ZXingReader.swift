import CZXingShim
import SwiftWingCore

/// zxing-cpp, through its C shim: the second reader, for codes ZBar's scanlines cannot follow
/// (bars skewed or bent across the frame). With ``QRCode``, the only file that calls zxing-cpp.
struct ZXingReader {
    /// The zxing-cpp library this process runs with, e.g. "1.4.0".
    static var version: String { String(cString: zxing_shim_version()) }

    func scan(_ image: borrowing GreyImage) throws(IdentifyError) -> [ZBarScanner.Symbol] {
        var codes = [zxing_shim_code](repeating: zxing_shim_code(), count: 1)
        let count = image.pixels.withUnsafeBufferPointer { pixels in
            codes.withUnsafeMutableBufferPointer { output in
                zxing_shim_read(
                    pixels.baseAddress, Int32(image.width), Int32(image.height), Int32(image.width),
                    output.baseAddress, Int32(output.count))
            }
        }
        guard count >= 0 else {
            throw .library("zxing-cpp threw while reading a \(image.width)x\(image.height) image")
        }
        return codes.prefix(Int(count)).compactMap { code in
            let text = withUnsafeBytes(of: code.text) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            switch Int(code.format) {
            case Int(ZXING_SHIM_EAN13): return .init(format: .ean13, text: text)
            case Int(ZXING_SHIM_EAN8): return .init(format: .ean8, text: text)
            case Int(ZXING_SHIM_UPCA): return .init(format: .upcA, text: text)
            default: return nil
            }
        }
    }
}

/// QR codes through zxing-cpp: made for the panel (the address of the library in a browser), and read
/// back in tests and tools.
public enum QRCode {
    /// The largest QR code (version 40) is 177 modules a side.
    private static let largestSide = 177

    /// `text` as the modules of a QR code (zxing-cpp's default error correction), without a quiet zone.
    public static func encode(_ text: String) throws(IdentifyError) -> QRModules {
        var modules = [UInt8](repeating: 0, count: largestSide * largestSide)
        let side = modules.withUnsafeMutableBufferPointer {
            zxing_shim_qr_encode(text, $0.baseAddress, Int32($0.count))
        }
        guard side > 0, let matrix = QRModules(side: Int(side), dark: modules.prefix(Int(side * side)).map { $0 != 0 })
        else {
            throw .library("zxing-cpp could not encode \(text.utf8.count) bytes as a QR code (too long for one?)")
        }
        return matrix
    }

    /// The text of the QR code in an 8-bit grey plane, or nil when none is read.
    public static func read(
        luma plane: UnsafeRawBufferPointer, width: Int, height: Int, stride: Int
    ) throws(IdentifyError) -> String? {
        guard width > 0, height > 0, stride >= width, plane.count >= stride * (height - 1) + width else {
            throw .badFrame("a \(width)x\(height) plane with stride \(stride) does not fit in \(plane.count) bytes")
        }
        var text = [CChar](repeating: 0, count: 4096)
        let count = text.withUnsafeMutableBufferPointer { output in
            zxing_shim_read_qr(
                plane.baseAddress?.assumingMemoryBound(to: UInt8.self), Int32(width), Int32(height), Int32(stride),
                output.baseAddress, Int32(output.count))
        }
        guard count >= 0 else { throw .library("zxing-cpp threw while reading a \(width)x\(height) image") }
        guard count > 0 else { return nil }
        return String(decoding: text.prefix(Int(count)).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
