import Foundation

/// A small `multipart/form-data` parser (RFC 7578 / RFC 2046), enough for the upload endpoint:
/// the boundary comes from the request's content type; each part has its headers and raw bytes.

public struct MultipartPart: Sendable, Equatable {
    /// Header names lower-cased.
    public var headers: [String: String]
    public var body: [UInt8]

    /// `name` from the part's `Content-Disposition: form-data; name="..."`.
    public var name: String? { Multipart.parameter("name", in: headers["content-disposition"] ?? "") }
    public var filename: String? { Multipart.parameter("filename", in: headers["content-disposition"] ?? "") }
    public var contentType: String? { headers["content-type"] }
}

public enum MultipartError: Error, Equatable, CustomStringConvertible {
    case notMultipart
    case missingBoundary
    case malformed(String)

    public var description: String {
        switch self {
        case .notMultipart: "the request is not multipart/form-data"
        case .missingBoundary: "the multipart content type has no boundary"
        case .malformed(let why): "malformed multipart body: \(why)"
        }
    }
}

public enum Multipart {
    /// The boundary of a `multipart/form-data; boundary=...` content type (quoted or not).
    public static func boundary(fromContentType contentType: String) throws(MultipartError) -> String {
        let mediaType = contentType.split(separator: ";", maxSplits: 1).first.map {
            $0.trimmingCharacters(in: .whitespaces).lowercased()
        }
        guard mediaType == "multipart/form-data" else { throw .notMultipart }
        guard let boundary = parameter("boundary", in: contentType), !boundary.isEmpty, boundary.utf8.count <= 200 else {
            throw .missingBoundary
        }
        return boundary
    }

    /// A `key=value` or `key="value"` parameter of a header value (key case-insensitive).
    static func parameter(_ key: String, in header: String) -> String? {
        var rest = Substring(header)
        // Skip the leading value (media type or disposition type).
        guard let firstSemicolon = rest.firstIndex(of: ";") else { return nil }
        rest = rest[rest.index(after: firstSemicolon)...]
        while !rest.isEmpty {
            rest = rest.drop { $0 == " " || $0 == "\t" || $0 == ";" }
            guard let eq = rest.firstIndex(of: "=") else { return nil }
            let name = rest[..<eq].trimmingCharacters(in: .whitespaces).lowercased()
            rest = rest[rest.index(after: eq)...]
            var value = ""
            if rest.first == "\"" {
                rest = rest.dropFirst()
                var escaped = false
                while let c = rest.first {
                    rest = rest.dropFirst()
                    if escaped {
                        value.append(c)
                        escaped = false
                    } else if c == "\\" {
                        escaped = true
                    } else if c == "\"" {
                        break
                    } else {
                        value.append(c)
                    }
                }
                if let semi = rest.firstIndex(of: ";") { rest = rest[semi...] } else { rest = "" }
            } else {
                let end = rest.firstIndex(of: ";") ?? rest.endIndex
                value = rest[..<end].trimmingCharacters(in: .whitespaces)
                rest = rest[end...]
            }
            if name == key.lowercased() { return value }
        }
        return nil
    }

    /// Splits a multipart body into parts. Preamble and epilogue are ignored; line ends may be CRLF or LF.
    public static func parse(_ body: [UInt8], boundary: String) throws(MultipartError) -> [MultipartPart] {
        let delimiter = Array(("--" + boundary).utf8)
        // Find the first delimiter (at the start or after a line end).
        guard var position = find(delimiter, in: body, from: 0, atLineStart: true) else {
            throw .malformed("no boundary delimiter")
        }
        var parts: [MultipartPart] = []
        while true {
            var cursor = position + delimiter.count
            // Closing delimiter?
            if cursor + 1 < body.count, body[cursor] == UInt8(ascii: "-"), body[cursor + 1] == UInt8(ascii: "-") {
                return parts
            }
            // Transport padding, then the line end after the delimiter.
            while cursor < body.count, body[cursor] == UInt8(ascii: " ") || body[cursor] == UInt8(ascii: "\t") { cursor += 1 }
            guard let afterLine = skipLineEnd(body, cursor) else { throw .malformed("no line end after boundary") }
            cursor = afterLine
            // Headers up to an empty line.
            var headers: [String: String] = [:]
            while true {
                guard cursor < body.count else { throw .malformed("part headers not terminated") }
                if let afterEmpty = skipLineEnd(body, cursor) {
                    cursor = afterEmpty
                    break
                }
                var lineEnd = cursor
                while lineEnd < body.count, body[lineEnd] != UInt8(ascii: "\n") { lineEnd += 1 }
                guard lineEnd < body.count else { throw .malformed("part headers not terminated") }
                var contentEnd = lineEnd
                if contentEnd > cursor, body[contentEnd - 1] == UInt8(ascii: "\r") { contentEnd -= 1 }
                let line = String(decoding: body[cursor..<contentEnd], as: UTF8.self)
                guard let colon = line.firstIndex(of: ":") else { throw .malformed("part header without colon") }
                headers[line[..<colon].trimmingCharacters(in: .whitespaces).lowercased()] =
                    line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
                cursor = lineEnd + 1
            }
            // Body up to the line end before the next delimiter.
            guard let next = find(delimiter, in: body, from: cursor, atLineStart: true) else {
                throw .malformed("part not terminated by a boundary")
            }
            var end = next
            if end > cursor, body[end - 1] == UInt8(ascii: "\n") { end -= 1 }
            if end > cursor, body[end - 1] == UInt8(ascii: "\r") { end -= 1 }
            parts.append(MultipartPart(headers: headers, body: Array(body[cursor..<end])))
            position = next
        }
    }

    private static func skipLineEnd(_ body: [UInt8], _ i: Int) -> Int? {
        if i < body.count, body[i] == UInt8(ascii: "\n") { return i + 1 }
        if i + 1 < body.count, body[i] == UInt8(ascii: "\r"), body[i + 1] == UInt8(ascii: "\n") { return i + 2 }
        return nil
    }

    /// First occurrence of `needle` at or after `from` that starts the body or follows a LF
    /// (memchr over line feeds: a 10 MB image is scanned at C speed, also in debug builds).
    private static func find(_ needle: [UInt8], in haystack: [UInt8], from: Int, atLineStart: Bool) -> Int? {
        guard haystack.count >= needle.count, from <= haystack.count else { return nil }
        return haystack.withUnsafeBufferPointer { hay -> Int? in
            needle.withUnsafeBufferPointer { pattern -> Int? in
                guard let base = hay.baseAddress, let patternBase = pattern.baseAddress else { return nil }
                func matches(at i: Int) -> Bool {
                    i + pattern.count <= hay.count && memcmp(base + i, patternBase, pattern.count) == 0
                }
                if from == 0, matches(at: 0) { return 0 }
                var i = max(from - 1, 0)
                while i < hay.count {
                    guard let found = memchr(base + i, Int32(UInt8(ascii: "\n")), hay.count - i) else { return nil }
                    let lf = base.distance(to: found.assumingMemoryBound(to: UInt8.self))
                    if lf + 1 >= from, matches(at: lf + 1) { return lf + 1 }
                    i = lf + 1
                }
                return nil
            }
        }
    }

    /// Builds a multipart body (for tests and tools).
    public static func build(boundary: String, parts: [(name: String, filename: String?, contentType: String?, body: [UInt8])]) -> [UInt8] {
        var out: [UInt8] = []
        for part in parts {
            var head = "--\(boundary)\r\nContent-Disposition: form-data; name=\"\(part.name)\""
            if let filename = part.filename { head += "; filename=\"\(filename)\"" }
            head += "\r\n"
            if let contentType = part.contentType { head += "Content-Type: \(contentType)\r\n" }
            head += "\r\n"
            out += Array(head.utf8)
            out += part.body
            out += Array("\r\n".utf8)
        }
        out += Array("--\(boundary)--\r\n".utf8)
        return out
    }
}
