import SwiftWingCore

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
        format == .ean13 ? ISBN(isbn13: text)?.isbn13 : nil
    }
}

/// Check digits of GTINs (EAN-13, EAN-8, UPC-A), computed here rather than trusted from the decoder: a misread bar
/// that still decodes must not become a book.
public enum ProductCode {
    /// Whether the last digit of `digits` is the GTIN check digit of the others (weights 3 and 1
    /// from the right; the same rule for EAN-13, EAN-8 and UPC-A). Only ASCII digits pass.
    public static func hasValidCheckDigit(_ digits: String) -> Bool {
        GTIN.hasValidCheckDigit(digits)
    }
}
