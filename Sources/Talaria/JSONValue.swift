import Foundation

/// A JSON document as plain values: what the tolerant readers in this module look into.
///
/// Decoding never depends on the shape the server chose; accessors return `nil` for a missing key
/// or a value of another type, and the callers decide what is required.
public enum JSONValue: Hashable, Sendable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    // MARK: Parsing

    /// Parses a JSON body. A body that is not JSON (an HTML error page from a proxy, a captive
    /// portal, an empty 502) throws ``TalariaDecodingError/notJSON(what:prefix:)`` quoting its start.
    public static func parse(_ bytes: some Collection<UInt8>, what: String) throws(TalariaDecodingError) -> JSONValue {
        let parsed: JSONValue?? = bytes.withContiguousStorageIfAvailable { buffer in
            try? JSONReader.parse(buffer)
        }
        let value: JSONValue?
        if let parsed {
            value = parsed
        } else {
            value = Array(bytes).withUnsafeBufferPointer { buffer in try? JSONReader.parse(buffer) }
        }
        guard let value else { throw .notJSON(what: what, prefix: TalariaDecodingError.quotedPrefix(of: bytes)) }
        return value
    }

    /// Parses a JSON text (an SSE event's `data`).
    public static func parse(_ text: String, what: String) throws(TalariaDecodingError) -> JSONValue {
        var text = text
        guard let value = text.withUTF8({ buffer in try? JSONReader.parse(buffer) }) else {
            throw .notJSON(what: what, prefix: TalariaDecodingError.quotedPrefix(of: Array(text.utf8.prefix(320))))
        }
        return value
    }

    // MARK: Accessors

    public subscript(key: String) -> JSONValue? {
        if case .object(let object) = self { return object[key] }
        return nil
    }

    /// The first of `keys` present with a non-null value.
    public func first(_ keys: String...) -> JSONValue? {
        for key in keys {
            if let value = self[key], value != .null { return value }
        }
        return nil
    }

    public var objectValue: [String: JSONValue]? {
        if case .object(let object) = self { return object }
        return nil
    }

    public var arrayValue: [JSONValue]? {
        if case .array(let array) = self { return array }
        return nil
    }

    /// A string, or a number written as one (an ISBN or id sent as a number).
    public var stringValue: String? {
        switch self {
        case .string(let string): string
        case .number(let number): Self.format(number)
        default: nil
        }
    }

    /// A number, or a string holding one (`"0.93"`).
    public var doubleValue: Double? {
        switch self {
        case .number(let number): number
        case .string(let string): Double(string.trimmed)
        default: nil
        }
    }

    /// A whole number (a number with a fraction is not one).
    public var intValue: Int? {
        guard let double = doubleValue, double.isFinite, double == double.rounded(), abs(double) < 9e15 else {
            return nil
        }
        return Int(double)
    }

    /// A boolean, or `"true"`/`"false"`.
    public var boolValue: Bool? {
        switch self {
        case .bool(let bool): bool
        case .string(let string):
            switch string.lowercased() {
            case "true": true
            case "false": false
            default: nil
            }
        default: nil
        }
    }

    public var isNull: Bool { self == .null }

    // MARK: Writing

    /// Compact JSON text with sorted keys (deterministic; whole numbers without a fraction).
    public var jsonText: String {
        var out: [UInt8] = []
        out.reserveCapacity(256)
        write(to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    private func write(to out: inout [UInt8]) {
        switch self {
        case .null: out += "null".utf8
        case .bool(let bool): out += (bool ? "true" : "false").utf8
        case .number(let number): out += (number.isFinite ? Self.format(number) : "null").utf8
        case .string(let string): Self.writeString(string, to: &out)
        case .array(let array):
            out.append(UInt8(ascii: "["))
            for (index, element) in array.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                element.write(to: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let object):
            out.append(UInt8(ascii: "{"))
            for (index, key) in object.keys.sorted().enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                Self.writeString(key, to: &out)
                out.append(UInt8(ascii: ":"))
                object[key]!.write(to: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    private static func format(_ number: Double) -> String {
        if number == number.rounded(), abs(number) < 9e15 { return String(Int64(number)) }
        return "\(number)"
    }

    private static let hex: [UInt8] = Array("0123456789abcdef".utf8)

    private static func writeString(_ string: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        for byte in string.utf8 {
            switch byte {
            case UInt8(ascii: "\""): out += [UInt8(ascii: "\\"), UInt8(ascii: "\"")]
            case UInt8(ascii: "\\"): out += [UInt8(ascii: "\\"), UInt8(ascii: "\\")]
            case 0x0A: out += [UInt8(ascii: "\\"), UInt8(ascii: "n")]
            case 0x0D: out += [UInt8(ascii: "\\"), UInt8(ascii: "r")]
            case 0x09: out += [UInt8(ascii: "\\"), UInt8(ascii: "t")]
            case 0..<0x20:
                out += [
                    UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"), hex[Int(byte >> 4)],
                    hex[Int(byte & 0xF)],
                ]
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}

extension JSONValue: Decodable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let bool = try? container.decode(Bool.self) {
            self = .bool(bool)
        } else if let number = try? container.decode(Double.self) {
            self = .number(number)
        } else if let string = try? container.decode(String.self) {
            self = .string(string)
        } else if let array = try? container.decode([JSONValue].self) {
            self = .array(array)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }
}

/// A body or event the client could not read at all. Smaller problems (one bad book, one bad
/// event) are ``TalariaWarning``s instead and never fail a job.
public enum TalariaDecodingError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The body is not JSON: `prefix` is its start, quoted, to show what answered instead.
    case notJSON(what: String, prefix: String)
    /// The body is JSON but lacks what the client cannot do without (e.g. a job id).
    case missingField(what: String, field: String, prefix: String)
    /// A field is there but the client must not use it (a job id that is not one path segment).
    case invalidField(what: String, field: String, reason: String, prefix: String)

    public var description: String {
        switch self {
        case .notJSON(let what, let prefix):
            let looksHTML =
                prefix.lowercased().contains("<html") || prefix.lowercased().contains("<!doctype")
                || prefix.hasPrefix("\"<")
            let advice =
                looksHTML
                ? "an HTML page answered instead of the Talaria API: check the backend URL, or a proxy or captive portal in between"
                : "check that the backend URL points at a Talaria v3 server"
            return "\(what) is not JSON (it starts with \(prefix)); \(advice)"
        case .missingField(let what, let field, let prefix):
            return "\(what) has no usable \"\(field)\" (it starts with \(prefix)); the server may speak another "
                + "protocol version: check the backend URL"
        case .invalidField(let what, let field, let reason, let prefix):
            return "\(what) has an unusable \"\(field)\": \(reason) (it starts with \(prefix)); the backend "
                + "must be fixed"
        }
    }

    /// The same error about `what`.
    func renamed(_ what: String) -> TalariaDecodingError {
        switch self {
        case .notJSON(_, let prefix): .notJSON(what: what, prefix: prefix)
        case .missingField(_, let field, let prefix): .missingField(what: what, field: field, prefix: prefix)
        case .invalidField(_, let field, let reason, let prefix):
            .invalidField(what: what, field: field, reason: reason, prefix: prefix)
        }
    }

    /// The first 80 characters of a body, quoted, control characters shown as spaces.
    static func quotedPrefix(of data: some Collection<UInt8>, limit: Int = 80) -> String {
        if data.isEmpty { return "nothing (an empty body)" }
        let text = String(decoding: data.prefix(limit * 4), as: UTF8.self)
        var shown = String(text.prefix(limit).map { $0.isNewline || $0 == "\t" ? " " : $0 })
        if text.count > limit { shown += "…" }
        return "\"\(shown)\""
    }
}

extension String {
    /// Without leading and trailing white space and newlines (pure Swift: Foundation's
    /// `trimmingCharacters` goes through NSString and dominated the cost of decoding an event).
    var trimmed: String {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { !$0.properties.isWhitespace }) else { return "" }
        let last = scalars.lastIndex(where: { !$0.properties.isWhitespace })!
        if first == scalars.startIndex, scalars.index(after: last) == scalars.endIndex { return self }
        return String(scalars[first...last])
    }
}

/// Something the tolerant reader skipped: a malformed event, a malformed book. Logged, never fatal.
public struct TalariaWarning: Hashable, Sendable, CustomStringConvertible {
    public var message: String

    public init(_ message: String) {
        self.message = message
    }

    public var description: String { message }
}
