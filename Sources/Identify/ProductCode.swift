/// The barcode symbologies read here: the EAN/UPC family that books and other products carry.
public enum BarcodeFormat: String, Sendable, Hashable, Codable, CaseIterable {
    case ean13 = "EAN-13"
    case ean8 = "EAN-8"
    case upcA = "UPC-A"

    /// How many digits a code of this format has, its check digit included.
    public var digitCount: Int {
        switch self {
        case .ean13: 13
        case .ean8: 8
        case .upcA: 12
        }
    }
}

/// A barcode read from a frame, its digits checked.
public struct Barcode: Sendable, Hashable, Codable {
    public var format: BarcodeFormat
    /// The digits, check digit included.
    public var text: String

    /// A code whose digits fit its format and whose check digit is right; `nil` otherwise.
    public init?(format: BarcodeFormat, text: String) {
        guard text.count == format.digitCount, ProductCode.hasValidCheckDigit(text) else { return nil }
        self.format = format
        self.text = text
    }

    /// The ISBN-13 this code is, when it is one: an EAN-13 in the book ("Bookland") ranges 978 and 979.
    public var isbn13: String? {
        format == .ean13 && (text.hasPrefix("978") || text.hasPrefix("979")) ? text : nil
    }
}

/// Check digits of GTINs (EAN-13, EAN-8, UPC-A) and ISBN-10s, computed here rather than trusted
/// from the decoder: a misread bar that still decodes must not become a book.
public enum ProductCode {
    /// Whether the last digit of `digits` is the GTIN check digit of the others (weights 3 and 1
    /// from the right; the same rule for EAN-13, EAN-8 and UPC-A). Only ASCII digits pass.
    public static func hasValidCheckDigit(_ digits: String) -> Bool {
        let values = digits.utf8.map { Int($0) - 48 }
        guard values.count >= 2, values.allSatisfy({ (0...9).contains($0) }) else { return false }
        return checkDigit(of: values.dropLast()) == values.last
    }

    /// The GTIN check digit of `payload` (the digits without their check digit).
    static func checkDigit<Digits: BidirectionalCollection<Int>>(of payload: Digits) -> Int {
        var sum = 0
        for (position, digit) in payload.reversed().enumerated() {
            sum += digit * (position.isMultiple(of: 2) ? 3 : 1)
        }
        return (10 - sum % 10) % 10
    }

    /// The ISBN-13 of an ISBN-10 (`978` + its first nine digits + a new check digit), or `nil`
    /// when `isbn10` is not ten characters with a right mod-11 check (`X` stands for 10).
    public static func isbn13(fromISBN10 isbn10: String) -> String? {
        let characters = Array(isbn10.uppercased().utf8)
        guard characters.count == 10 else { return nil }
        var weighted = 0
        for (index, character) in characters.enumerated() {
            let value: Int
            switch character {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): value = Int(character) - 48
            case UInt8(ascii: "X") where index == 9: value = 10
            default: return nil
            }
            weighted += value * (10 - index)
        }
        guard weighted % 11 == 0 else { return nil }
        let payload = [9, 7, 8] + characters.prefix(9).map { Int($0) - 48 }
        return (payload + [checkDigit(of: payload)]).map(String.init).joined()
    }
}
