import CZBar

/// One of ZBar's image scanners, set up for the product codes books carry. The only file that
/// calls ZBar.
///
/// Not `Sendable`: a ZBar scanner keeps per-scan state, so each worker thread owns one.
final class ZBarScanner {
    /// A code as ZBar decoded it, before this module checks its digits.
    struct Symbol {
        var format: BarcodeFormat
        var text: String
    }

    private let scanner: OpaquePointer

    /// Which scanlines ZBar follows: every `rows`-th row and every `columns`-th column; 0 skips
    /// that direction. A code whose bars run up and down is read along rows alone, and its bars
    /// are tall, so every fourth row still crosses it a dozen times or more, at a quarter of the cost.
    struct Lines: Hashable {
        var rows: Int
        var columns: Int

        static let all = Lines(rows: 1, columns: 1)
        static let alongRows = Lines(rows: 4, columns: 0)
        static let alongColumns = Lines(rows: 0, columns: 4)
    }

    private var lines = Lines.all

    init() throws(IdentifyError) {
        guard let scanner = zbar_image_scanner_create() else {
            throw .library("ZBar could not create an image scanner (out of memory?)")
        }
        self.scanner = scanner
        // Everything off, then the EAN/UPC family on: fewer decoders run, and nothing but
        // product codes can come back. ZBar's own ISBN outputs stay off: the digits are checked
        // and turned into ISBNs here, the same way for every path.
        zbar_image_scanner_set_config(scanner, ZBAR_NONE, ZBAR_CFG_ENABLE, 0)
        for symbology in [ZBAR_EAN13, ZBAR_EAN8, ZBAR_UPCA] {
            zbar_image_scanner_set_config(scanner, symbology, ZBAR_CFG_ENABLE, 1)
        }
    }

    /// ZBar's densities: X is the spacing of its vertical scanlines (columns), Y of its
    /// horizontal ones (rows).
    private func follow(_ wanted: Lines) {
        guard wanted != lines else { return }
        zbar_image_scanner_set_config(scanner, ZBAR_NONE, ZBAR_CFG_X_DENSITY, Int32(wanted.columns))
        zbar_image_scanner_set_config(scanner, ZBAR_NONE, ZBAR_CFG_Y_DENSITY, Int32(wanted.rows))
        lines = wanted
    }

    deinit {
        zbar_image_scanner_destroy(scanner)
    }

    /// The ZBar library this process runs with, e.g. "0.23.92".
    static var version: String {
        var major: UInt32 = 0
        var minor: UInt32 = 0
        var patch: UInt32 = 0
        zbar_version(&major, &minor, &patch)
        return "\(major).\(minor).\(patch)"
    }

    /// Every product code ZBar finds in an 8-bit grey picture.
    func scan(_ image: borrowing GreyImage, lines: Lines = .all) throws(IdentifyError) -> [Symbol] {
        let result = image.pixels.withUnsafeBytes { bytes in
            Result { () throws(IdentifyError) in
                try scan(bytes, width: image.width, height: image.height, stride: image.width, lines: lines)
            }
        }
        return try result.get()
    }

    /// Every product code ZBar finds in an 8-bit luma plane. Rows padded beyond `width`
    /// (`stride` > `width`) are copied to a packed plane first: ZBar takes no stride.
    func scan(
        _ luma: UnsafeRawBufferPointer, width: Int, height: Int, stride: Int, lines: Lines = .all
    ) throws(IdentifyError) -> [Symbol] {
        guard width > 0, height > 0, stride >= width, luma.count >= stride * (height - 1) + width else {
            throw .badFrame("a \(width)x\(height) plane with stride \(stride) does not fit in \(luma.count) bytes")
        }
        if stride != width {
            let packed = GreyImage(luma, width: width, height: height, stride: stride)
            return try scan(packed, lines: lines)
        }
        guard let image = zbar_image_create() else {
            throw .library("ZBar could not create an image (out of memory?)")
        }
        defer { zbar_image_destroy(image) }
        follow(lines)
        zbar_image_set_format(image, Self.greyFourCC)
        zbar_image_set_size(image, UInt32(width), UInt32(height))
        // ZBar only reads the pixels, and the image is destroyed before `luma` goes away.
        zbar_image_set_data(image, luma.baseAddress, UInt(width * height), nil)
        let found = zbar_scan_image(scanner, image)
        guard found >= 0 else { throw .library("ZBar failed to scan a \(width)x\(height) image") }
        var symbols: [Symbol] = []
        var symbol = zbar_image_first_symbol(image)
        while let current = symbol {
            if let format = BarcodeFormat(zbar_symbol_get_type(current)), let data = zbar_symbol_get_data(current) {
                symbols.append(Symbol(format: format, text: String(cString: data)))
            }
            symbol = zbar_symbol_next(current)
        }
        return symbols
    }

    /// `Y800`: 8-bit grey, one byte per pixel (ZBar's `zbar_fourcc('Y','8','0','0')`).
    private static let greyFourCC: UInt = 0x59 | 0x38 << 8 | 0x30 << 16 | 0x30 << 24
}

extension BarcodeFormat {
    fileprivate init?(_ type: zbar_symbol_type_t) {
        switch type {
        case ZBAR_EAN13: self = .ean13
        case ZBAR_EAN8: self = .ean8
        case ZBAR_UPCA: self = .upcA
        default: return nil
        }
    }
}
