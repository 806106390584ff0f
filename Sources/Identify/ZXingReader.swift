import CZXingShim

/// zxing-cpp, through its C shim: the second reader, for codes ZBar's scanlines cannot follow
/// (bars skewed or bent across the frame). The only file that calls zxing-cpp.
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
