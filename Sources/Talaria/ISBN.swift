import Foundation

/// ISBN checks and normalisation. The library keys books by ISBN-13; an ISBN that fails its
/// checksum is treated as no ISBN (the book is then matched by title and author).
public enum ISBN {
    /// `raw` with hyphens and spaces removed, an `ISBN`/`ISBN-13:` label dropped, `x` upper-cased.
    public static func compact(_ raw: String) -> String {
        var text = raw.trimmed.uppercased()
        for label in ["ISBN-13", "ISBN-10", "ISBN13", "ISBN10", "ISBN"] where text.hasPrefix(label) {
            text.removeFirst(label.count)
            break
        }
        return String(text.filter { !$0.isWhitespace && $0 != "-" && $0 != ":" && $0 != "\u{2010}" && $0 != "\u{2011}" })
    }

    /// Ten characters: nine digits and a digit or `X`, with sum(d_i × (10 − i)) ≡ 0 (mod 11).
    public static func isValidISBN10(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard bytes.count == 10 else { return false }
        var sum = 0
        for (index, byte) in bytes.enumerated() {
            let value: Int
            if byte >= 0x30, byte <= 0x39 {
                value = Int(byte - 0x30)
            } else if byte == 0x58, index == 9 {  // X, only as the check digit
                value = 10
            } else {
                return false
            }
            sum += value * (10 - index)
        }
        return sum % 11 == 0
    }

    /// Thirteen digits starting with 978 or 979 (Bookland), with the EAN-13 checksum.
    public static func isValidISBN13(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard bytes.count == 13, bytes.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return false }
        guard text.hasPrefix("978") || text.hasPrefix("979") else { return false }
        var sum = 0
        for (index, byte) in bytes.enumerated() {
            sum += Int(byte - 0x30) * (index % 2 == 0 ? 1 : 3)
        }
        return sum % 10 == 0
    }

    /// The ISBN-13 of what the backend sent, or `nil` for no ISBN (`nil`, `""`, `"unknown"`,
    /// anything of the wrong length or with a wrong check digit). An ISBN-10 becomes `978…`.
    public static func normalisedISBN13(_ raw: String?) -> String? {
        guard let raw else { return nil }
        let text = compact(raw)
        if text.count == 13, isValidISBN13(text) { return text }
        if text.count == 10, isValidISBN10(text) { return isbn13(fromISBN10: text) }
        return nil
    }

    /// `978` + the first nine digits + a new EAN-13 check digit. `isbn10` must be valid.
    public static func isbn13(fromISBN10 isbn10: String) -> String {
        let stem = "978" + isbn10.prefix(9)
        var sum = 0
        for (index, byte) in stem.utf8.enumerated() {
            sum += Int(byte - 0x30) * (index % 2 == 0 ? 1 : 3)
        }
        return stem + String((10 - sum % 10) % 10)
    }

    /// The ISBN-10 of a `978…` ISBN-13 (`979…` ones have none). `isbn13` must be valid.
    public static func isbn10(fromISBN13 isbn13: String) -> String? {
        guard isbn13.hasPrefix("978") else { return nil }
        let stem = isbn13.dropFirst(3).prefix(9)
        var sum = 0
        for (index, byte) in stem.utf8.enumerated() {
            sum += Int(byte - 0x30) * (10 - index)
        }
        let check = (11 - sum % 11) % 11
        return stem + (check == 10 ? "X" : String(check))
    }
}
