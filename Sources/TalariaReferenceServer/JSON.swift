import Foundation

/// A JSON value with ordered object keys, so every response the reference server writes is byte-for-byte
/// deterministic (tests and recorded fixtures can compare text).
public enum JSONValue: Sendable, Equatable {
    case null
    case bool(Bool)
    case int(Int)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object([(String, JSONValue)])

    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool { lhs.serialized() == rhs.serialized() }

    /// Compact JSON text.
    public func serialized() -> String {
        var out = ""
        write(into: &out)
        return out
    }

    func write(into out: inout String) {
        switch self {
        case .null: out += "null"
        case .bool(let b): out += b ? "true" : "false"
        case .int(let i): out += String(i)
        case .double(let d):
            if d.isFinite {
                if d == d.rounded() && abs(d) < 1e15 { out += String(Int(d)) } else { out += String(d) }
            } else {
                out += "null"
            }
        case .string(let s): JSONValue.writeString(s, into: &out)
        case .array(let items):
            out += "["
            for (i, item) in items.enumerated() {
                if i > 0 { out += "," }
                item.write(into: &out)
            }
            out += "]"
        case .object(let fields):
            out += "{"
            for (i, (key, value)) in fields.enumerated() {
                if i > 0 { out += "," }
                JSONValue.writeString(key, into: &out)
                out += ":"
                value.write(into: &out)
            }
            out += "}"
        }
    }

    static func writeString(_ s: String, into out: inout String) {
        out += "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 {
                    out += String(format: "\\u%04x", scalar.value)
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        out += "\""
    }

    /// The value of `key` in an object (nil for other values).
    public subscript(key: String) -> JSONValue? {
        guard case .object(let fields) = self else { return nil }
        return fields.first { $0.0 == key }?.1
    }

    /// A copy of an object with `key` set (replaced in place, or appended).
    public func setting(_ key: String, _ value: JSONValue) -> JSONValue {
        guard case .object(var fields) = self else { return self }
        if let i = fields.firstIndex(where: { $0.0 == key }) {
            fields[i].1 = value
        } else {
            fields.append((key, value))
        }
        return .object(fields)
    }

    /// A copy of an object without `key`.
    public func removing(_ key: String) -> JSONValue {
        guard case .object(let fields) = self else { return self }
        return .object(fields.filter { $0.0 != key })
    }
}

extension JSONValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral,
    ExpressibleByFloatLiteral, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral
{
    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int) { self = .int(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(floatLiteral value: Double) { self = .double(value) }
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, JSONValue)...) { self = .object(elements) }
}

extension JSONValue {
    static func optional(_ s: String?) -> JSONValue { s.map { .string($0) } ?? .null }
}

/// ISO 8601 timestamps with milliseconds, UTC (`2026-11-21T15:30:00.123Z`).
func isoTimestamp(_ date: Date = Date()) -> String {
    let ms = Int((date.timeIntervalSince1970 * 1000).rounded(.down))
    var t = time_t(ms / 1000)
    var tmv = tm()
    gmtime_r(&t, &tmv)
    return String(
        format: "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", Int(tmv.tm_year) + 1900, Int(tmv.tm_mon) + 1, Int(tmv.tm_mday),
        Int(tmv.tm_hour), Int(tmv.tm_min), Int(tmv.tm_sec), ms % 1000)
}

/// An RFC 9110 HTTP date (`Sat, 21 Nov 2026 15:30:00 GMT`), as in `Retry-After`.
func httpDate(_ date: Date) -> String {
    var t = time_t(Int(date.timeIntervalSince1970.rounded(.up)))
    var tmv = tm()
    gmtime_r(&t, &tmv)
    let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
    return days[Int(tmv.tm_wday)] + ", " + String(format: "%02d", Int(tmv.tm_mday)) + " " + months[Int(tmv.tm_mon)] + " "
        + String(format: "%04d %02d:%02d:%02d GMT", Int(tmv.tm_year) + 1900, Int(tmv.tm_hour), Int(tmv.tm_min), Int(tmv.tm_sec))
}
