/// A book's number, checked: always a valid ISBN-13 (prefix 978 or 979, the EAN-13 check digit right), kept in
/// its canonical form of 13 ASCII digits. An ISBN-10 is read as the ISBN-13 it stands for (`978` + its first
/// nine digits + a new check digit); ``isbn10`` gives it back for `978` numbers (`979` ones have none).
///
/// The only way to an `ISBN` is through a check, so a value of this type never needs checking again.
public struct ISBN: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The 13 digits, no hyphens.
    public let isbn13: String

    /// Exactly 13 ASCII digits, starting with 978 or 979, with a right EAN-13 check digit; nothing else around them.
    public init?(isbn13: String) {
        guard let digits = Self.digits(isbn13), digits.count == 13, Self.isBookland(digits),
            GTIN.checkDigit(ofPayload: digits.dropLast()) == digits[12]
        else { return nil }
        self.isbn13 = isbn13
    }

    /// Exactly ten characters: nine ASCII digits and a digit or `X` (`x` too), with the mod-11 check right.
    public init?(isbn10: String) {
        let characters = Array(isbn10.utf8)
        guard characters.count == 10, let payload = Self.digits(characters.prefix(9)),
            let check = Self.isbn10CheckValue(characters[9]), Self.isbn10Check(of: payload) == check
        else { return nil }
        isbn13 = Self.isbn13(ofISBN10Payload: payload)
    }

    /// What a person typed or a backend sent, read as ``compact(_:)`` makes it: 13 characters are an ISBN-13,
    /// 10 an ISBN-10. `nil` for anything else (see ``init(parsing:)`` for why).
    public init?(_ text: String) {
        guard let isbn = try? ISBN(parsing: text) else { return nil }
        self = isbn
    }

    /// Like ``init(_:)``, and when `text` is no ISBN the error says why: a wrong check digit (and the right one)
    /// or not the shape of an ISBN at all.
    public init(parsing text: String) throws(ParseError) {
        let compact = Self.compact(text)
        if let isbn = compact.utf8.count == 13 ? ISBN(isbn13: compact) : ISBN(isbn10: compact) {
            self = isbn
            return
        }
        let characters = Array(compact)
        // The right shape (13 digits in the book ranges, or nine digits and a last character), only the last
        // character wrong: name the one it should be.
        if characters.count == 13 || characters.count == 10,
            let stem = Self.digits(String(characters.dropLast()).utf8)
        {
            if characters.count == 13, Self.isBookland(stem) {
                let right = GTIN.checkDigit(ofPayload: stem)
                throw .wrongCheckDigit(compact: compact, expected: Character(String(right)))
            }
            if characters.count == 10 {
                let right = Self.isbn10Check(of: stem)
                throw .wrongCheckDigit(compact: compact, expected: right == 10 ? "X" : Character(String(right)))
            }
        }
        throw .notAnISBN(compact: compact)
    }

    /// The ISBN-10 of a `978` number (nine payload digits and a mod-11 check, `X` for ten); `nil` for `979`.
    public var isbn10: String? {
        guard isbn13.hasPrefix("978"), let digits = Self.digits(isbn13) else { return nil }
        let payload = Array(digits[3..<12])
        let check = Self.isbn10Check(of: payload)
        return String(isbn13.dropFirst(3).prefix(9)) + (check == 10 ? "X" : String(check))
    }

    public var description: String { isbn13 }

    public static func < (lhs: ISBN, rhs: ISBN) -> Bool { lhs.isbn13 < rhs.isbn13 }

    /// `raw` as an ISBN is compared: surrounding white space trimmed, upper-cased, one leading `ISBN`, `ISBN-13`,
    /// `ISBN-10`, `ISBN13` or `ISBN10` label dropped, and every space, hyphen (`-`, U+2010, U+2011) and `:` removed.
    public static func compact(_ raw: String) -> String {
        let scalars = raw.unicodeScalars
        let first = scalars.firstIndex { !$0.properties.isWhitespace } ?? scalars.endIndex
        let last = scalars.lastIndex { !$0.properties.isWhitespace }.map(scalars.index(after:)) ?? first
        var text = String(scalars[first..<max(first, last)]).uppercased()
        for label in ["ISBN-13", "ISBN-10", "ISBN13", "ISBN10", "ISBN"] where text.hasPrefix(label) {
            text.removeFirst(label.count)
            break
        }
        let ignored: Set<Character> = ["-", ":", "\u{2010}", "\u{2011}"]
        return String(text.filter { !$0.isWhitespace && !ignored.contains($0) })
    }

    /// Why a text is not an ISBN.
    public enum ParseError: Error, Hashable, Sendable, CustomStringConvertible {
        /// The shape of an ISBN (`compact`, as ``ISBN/compact(_:)`` made it), but its last character is not the
        /// check digit the others need: `expected` is the one they need (a digit, or `X` in an ISBN-10).
        case wrongCheckDigit(compact: String, expected: Character)
        /// Neither 13 digits starting with 978 or 979 nor 10 characters (nine digits, then a digit or `X`).
        case notAnISBN(compact: String)

        public var description: String {
            switch self {
            case .wrongCheckDigit(let compact, let expected):
                "ISBN \(compact) fails its checksum (the last character should be \(expected))"
            case .notAnISBN(let compact):
                "\"\(compact)\" is not an ISBN: it needs the 13 digits starting with 978 or 979, or the 10 of an old "
                    + "ISBN (the last may be X)"
            }
        }
    }

    /// The values of `characters` when every one is an ASCII digit.
    private static func digits(_ characters: some Collection<UInt8>) -> [Int]? {
        var values: [Int] = []
        values.reserveCapacity(characters.count)
        for character in characters {
            guard character >= UInt8(ascii: "0"), character <= UInt8(ascii: "9") else { return nil }
            values.append(Int(character - UInt8(ascii: "0")))
        }
        return values
    }

    private static func digits(_ text: String) -> [Int]? { digits(text.utf8) }

    /// The book ("Bookland") ranges of EAN-13: 978 and 979.
    private static func isBookland(_ digits: [Int]) -> Bool {
        digits.count >= 3 && digits[0] == 9 && digits[1] == 7 && (digits[2] == 8 || digits[2] == 9)
    }

    /// The value of an ISBN-10's last character: a digit, or `X`/`x` for ten.
    private static func isbn10CheckValue(_ character: UInt8) -> Int? {
        switch character {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): Int(character - UInt8(ascii: "0"))
        case UInt8(ascii: "X"), UInt8(ascii: "x"): 10
        default: nil
        }
    }

    /// The check value (0…10) that makes sum(d_i × (10 − i)) ≡ 0 (mod 11) for nine payload digits.
    private static func isbn10Check(of payload: [Int]) -> Int {
        var sum = 0
        for (index, digit) in payload.enumerated() { sum += digit * (10 - index) }
        return (11 - sum % 11) % 11
    }

    private static func isbn13(ofISBN10Payload payload: [Int]) -> String {
        let digits = [9, 7, 8] + payload
        return (digits + [GTIN.checkDigit(ofPayload: digits)]).map(String.init).joined()
    }
}

/// Check digits of GTINs (EAN-13, EAN-8, UPC-A; an ISBN-13 is an EAN-13): weights 3 and 1 from the right.
public enum GTIN {
    /// The check digit of `payload` (the digits without their check digit).
    public static func checkDigit(ofPayload payload: some BidirectionalCollection<Int>) -> Int {
        var sum = 0
        for (position, digit) in payload.reversed().enumerated() {
            sum += digit * (position.isMultiple(of: 2) ? 3 : 1)
        }
        return (10 - sum % 10) % 10
    }

    /// Whether the last digit of `digits` is the check digit of the others. Only ASCII digits pass, at least two.
    public static func hasValidCheckDigit(_ digits: String) -> Bool {
        let values = digits.utf8.map { Int($0) - Int(UInt8(ascii: "0")) }
        guard values.count >= 2, values.allSatisfy({ (0...9).contains($0) }) else { return false }
        return checkDigit(ofPayload: values.dropLast()) == values.last
    }
}
