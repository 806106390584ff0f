/// The fields of an `application/x-www-form-urlencoded` body or a query string.
struct FormFields: Sendable {
    private(set) var pairs: [(name: String, value: String)] = []

    init() {}

    init(parsing text: some StringProtocol) {
        for part in text.split(separator: "&", omittingEmptySubsequences: true) {
            let halves = part.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = Self.decode(halves[0])
            let value = halves.count > 1 ? Self.decode(halves[1]) : ""
            pairs.append((name, value))
        }
    }

    subscript(_ name: String) -> String? { pairs.first { $0.name == name }?.value }

    /// `+` is a space, `%XX` a byte; the bytes are read as UTF-8 (invalid sequences become U+FFFD).
    static func decode(_ text: some StringProtocol) -> String {
        var bytes: [UInt8] = []
        var iterator = Array(text.utf8).makeIterator()
        while let byte = iterator.next() {
            switch byte {
            case UInt8(ascii: "+"):
                bytes.append(UInt8(ascii: " "))
            case UInt8(ascii: "%"):
                guard let high = iterator.next(), let low = iterator.next(),
                    let value = UInt8(String(decoding: [high, low], as: UTF8.self), radix: 16)
                else { continue }
                bytes.append(value)
            default:
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The inverse, for links the pages build.
    static func encode(_ text: String) -> String {
        var result = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."):
                result.unicodeScalars.append(UnicodeScalar(byte))
            case UInt8(ascii: " "):
                result += "+"
            default:
                let digits = Array("0123456789ABCDEF")
                result += "%" + String(digits[Int(byte >> 4)]) + String(digits[Int(byte & 0xf)])
            }
        }
        return result
    }
}
