import Foundation

/// A JSON value as the reference server builds its responses. Foundation's `JSONEncoder` writes it with sorted
/// keys, so every body is deterministic (tests and recorded fixtures can compare text).
public enum JSONValue: Sendable, Equatable, Encodable {
    case null
    case bool(Bool)
    case int(Int)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    private static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    /// Compact JSON text.
    public func serialized() -> String {
        do {
            return String(decoding: try Self.encoder.encode(self), as: UTF8.self)
        } catch {
            // Unreachable: `encode(to:)` writes non-finite numbers as null, the only values JSON cannot hold.
            preconditionFailure("JSONEncoder rejected a JSONValue: \(error)")
        }
    }

    public func encode(to encoder: any Encoder) throws {
        switch self {
        case .array(let items): try items.encode(to: encoder)
        case .object(let fields): try fields.encode(to: encoder)
        case .null, .bool, .int, .double, .string:
            var container = encoder.singleValueContainer()
            switch self {
            case .bool(let b): try container.encode(b)
            case .int(let i): try container.encode(i)
            case .double(let d) where d.isFinite: try container.encode(d)
            case .string(let s): try container.encode(s)
            default: try container.encodeNil()
            }
        }
    }

    /// The value of `key` in an object (nil for other values).
    public subscript(key: String) -> JSONValue? {
        guard case .object(let fields) = self else { return nil }
        return fields[key]
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
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(Dictionary(elements) { _, last in last })
    }
}

/// ISO 8601 timestamps with milliseconds, UTC (`2026-11-21T15:30:00.123Z`).
func isoTimestamp(_ date: Date = Date()) -> String {
    date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
}

private let imfFixdate: DateFormatter = {
    let formatter = DateFormatter()
    formatter.locale = Locale(identifier: "en_US_POSIX")
    formatter.timeZone = TimeZone(identifier: "GMT")
    formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
    return formatter
}()

/// An RFC 9110 HTTP date (`Sat, 21 Nov 2026 15:30:00 GMT`), as in `Retry-After`; rounded up to the second so it
/// never comes before the instant it stands for.
func httpDate(_ date: Date) -> String {
    imfFixdate.string(from: Date(timeIntervalSince1970: date.timeIntervalSince1970.rounded(.up)))
}
