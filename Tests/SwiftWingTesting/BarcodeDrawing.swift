import SwiftWingCore

/// EAN-13 symbols drawn from their digits, for scenes whose ISBN is in the reference backend's
/// catalogue (the ZXing photos carry ISBNs no catalogue of ours knows).
public enum BarcodeDrawing {
    /// The 95 modules of an EAN-13 symbol (`true` = bar) for 12 or 13 digits; a 13th digit must be
    /// the right check digit, 12 get it computed. `nil` for anything else.
    public static func ean13Modules(_ digits: String) -> [Bool]? {
        var values = digits.compactMap { $0.wholeNumberValue }
        guard values.count == digits.count, values.count == 12 || values.count == 13 else { return nil }
        let check = GTIN.checkDigit(ofPayload: values.prefix(12))
        if values.count == 13 {
            guard values[12] == check else { return nil }
        } else {
            values.append(check)
        }
        // Each digit's left-hand odd-parity (L) pattern; G is R reversed, R is L inverted.
        let left = [
            "0001101", "0011001", "0010011", "0111101", "0100011", "0110001", "0101111", "0111011",
            "0110111", "0001011",
        ]
        let parity = [
            "LLLLLL", "LLGLGG", "LLGGLG", "LLGGGL", "LGLLGG", "LGGLLG", "LGGGLL", "LGLGLG", "LGLGGL",
            "LGGLGL",
        ]
        func bits(_ pattern: String) -> [Bool] { pattern.map { $0 == "1" } }
        var modules = bits("101")
        for (index, kind) in parity[values[0]].enumerated() {
            let l = bits(left[values[1 + index]])
            modules += kind == "L" ? l : l.map { !$0 }.reversed()
        }
        modules += bits("01010")
        for value in values[7...12] { modules += bits(left[value]).map { !$0 } }
        modules += bits("101")
        return modules
    }

    /// A white label with the symbol of `digits` on it: `module` pixels a module, bars `barHeight`
    /// high, the quiet zones the standard asks for (11 modules left, 7 right) and a margin around.
    /// Luma near black and near white (not clipped, as printed ink and paper photograph).
    public static func label(ean13 digits: String, module: Int = 3, barHeight: Int = 120) -> YUV420Frame? {
        guard let modules = ean13Modules(digits) else { return nil }
        let (quietLeft, margin) = (11 * module, 2 * module)
        let width = (11 + 95 + 7) * module + 2 * margin
        let height = barHeight + 2 * margin + 2 * module
        return ImagingFixtures.frame(width: (width + 1) & ~1, height: (height + 1) & ~1) { x, y in
            let column = (x - margin - quietLeft) / module
            let inBars = y >= margin + module && y < margin + module + barHeight && x >= margin + quietLeft
            return inBars && column < modules.count && modules[column] ? 24 : 232
        }
    }

    /// `picture` over the middle of `background` (luma, and neutral chroma so a white label stays white).
    public static func pasted(_ picture: YUV420Frame, onto background: YUV420Frame) -> YUV420Frame {
        let (left, top) = ((background.width - picture.width) / 2 & ~1, (background.height - picture.height) / 2 & ~1)
        let layout = background.layout
        return ImagingFixtures.frame(
            width: background.width, height: background.height,
            luma: { x, y in
                let (column, row) = (x - left, y - top)
                if (0..<picture.width).contains(column), (0..<picture.height).contains(row) {
                    return picture.luma[row * picture.layout.lumaStride + column]
                }
                return background.luma[y * layout.lumaStride + x]
            },
            chroma: { x, y in
                let (column, row) = (2 * x - left, 2 * y - top)
                if (0..<picture.width).contains(column), (0..<picture.height).contains(row) { return (128, 128) }
                return (
                    background.buffer.bytes[layout.cbOffset + y * layout.chromaStride + x],
                    background.buffer.bytes[layout.crOffset + y * layout.chromaStride + x]
                )
            })
    }
}

/// Camera scenes for the offline path, the same in the integration tests and `make demo`.
public enum BookScenes {
    /// "The C Programming Language": in the reference backend's catalogue, so a lookup finds its title.
    public static let catalogueISBN = "9780131103627"

    /// A shelf photo of `width` x `height` with a label carrying `isbn`'s EAN-13 in its middle
    /// (bars of 3 pixels a module up to 720 lines, 4 above); `nil` when the shelf photos are missing.
    public static func shelfWithBarcode(isbn: String = catalogueISBN, width: Int, height: Int) throws -> YUV420Frame? {
        let module = height > 720 ? 4 : 3
        guard let shelf = try ImagingFixtures.shelfFrame(width: width, height: height),
            let label = BarcodeDrawing.label(ean13: isbn, module: module, barHeight: 40 * module)
        else { return nil }
        return BarcodeDrawing.pasted(label, onto: shelf)
    }
}
