import Foundation
import MultipartKit

/// The `multipart/form-data` body of an upload (RFC 7578): the boundary comes from the request's content type,
/// MultipartKit splits the body into parts.
enum UploadForm {
    typealias Part = MultipartPart

    enum Failure: Error, Equatable, CustomStringConvertible {
        case notMultipart
        case missingBoundary
        case malformed(String)

        var description: String {
            switch self {
            case .notMultipart: "the request is not multipart/form-data; send the photo as a multipart/form-data body"
            case .missingBoundary: "the multipart content type has no boundary; add boundary=... (1 to 200 characters)"
            case .malformed(let why): "malformed multipart body: \(why)"
            }
        }
    }

    /// The boundary of a `multipart/form-data; boundary=...` content type (quoted or not).
    static func boundary(fromContentType contentType: String) throws(Failure) -> String {
        let mediaType = contentType.split(separator: ";", maxSplits: 1).first.map {
            $0.trimmingCharacters(in: .whitespaces).lowercased()
        }
        guard mediaType == "multipart/form-data" else { throw .notMultipart }
        guard let boundary = parameter("boundary", in: contentType), !boundary.isEmpty, boundary.utf8.count <= 200
        else { throw .missingBoundary }
        return boundary
    }

    /// What one upload's body may hold beyond its bytes: a photo upload is one part, a form a few. Without these,
    /// 200,000 empty parts in a 10 MB body took the service from 35 to 108 MB (a header map and a buffer each).
    struct Limits: Sendable {
        /// Parts read; one more is refused.
        var parts = 32
        /// Header bytes of all parts together (names, values, line ends).
        var headerBytes = 16 << 10

        init() {}
    }

    /// The parts of `body`, in order. Preamble and epilogue are ignored; a body that ends inside a part, or holds
    /// no part at all, is malformed.
    static func parts(of body: ByteBuffer, boundary: String, limits: Limits = Limits()) throws(Failure) -> [Part] {
        try scan(body, boundary: boundary, limits: limits, stopAt: nil).parts
    }

    /// The first part named `name`, read no further than its end: what follows it is never parsed or kept.
    /// `nil` when the body holds no such part.
    static func firstPart(named name: String, of body: ByteBuffer, boundary: String, limits: Limits = Limits())
        throws(Failure) -> Part?
    {
        try scan(body, boundary: boundary, limits: limits, stopAt: name).parts.first { $0.name == name }
    }

    /// Feeds the parser 64 KiB at a time, keeping only what is asked (all parts, or up to the first named
    /// `stopAt`, where it stops), and checks the limits between slices and in the callbacks.
    private static func scan(_ body: ByteBuffer, boundary: String, limits: Limits, stopAt: String?) throws(Failure)
        -> (parts: [Part], count: Int)
    {
        guard headerNamesAreASCII(body, boundary: boundary) else {
            throw .malformed("a part's header name is not ASCII; header names are tokens such as Content-Type")
        }
        let parser = MultipartParser(boundary: boundary)
        var parts: [Part] = []
        var headers = HTTPHeaders()
        var partBody = ByteBuffer()
        var insidePart = false
        var count = 0
        var headerBytes = 0
        var overLimit: Failure?
        var found = false
        parser.onHeader = { name, value in
            guard overLimit == nil, !found else { return }
            headerBytes += name.utf8.count + value.utf8.count + 4
            if headerBytes > limits.headerBytes {
                overLimit = .malformed("the parts' headers are larger than \(limits.headerBytes) bytes together")
                return
            }
            headers.add(name: name, value: value)
            insidePart = true
        }
        parser.onBody = { bytes in
            guard overLimit == nil, !found else { return }
            partBody.writeBuffer(&bytes)
            insidePart = true
        }
        parser.onPartComplete = {
            guard overLimit == nil, !found else { return }
            count += 1
            if count > limits.parts {
                overLimit = .malformed("the body holds more than \(limits.parts) parts; send the photo alone")
                return
            }
            let part = Part(headers: headers, body: partBody)
            if let stopAt {
                // Only the wanted part is kept; the others are counted.
                if part.name == stopAt {
                    parts.append(part)
                    found = true
                }
            } else {
                parts.append(part)
            }
            headers = HTTPHeaders()
            partBody = ByteBuffer()
            insidePart = false
        }
        var rest = body
        let slice = 64 << 10
        while rest.readableBytes > 0, overLimit == nil, !found {
            let chunk = rest.readSlice(length: min(slice, rest.readableBytes))!
            do {
                try parser.execute(chunk)
            } catch {
                throw .malformed("a boundary line or part header is not valid (CRLF line ends, 'Name: value' headers)")
            }
        }
        if let overLimit { throw overLimit }
        if found { return (parts, count) }
        guard !insidePart else { throw .malformed("the body ends inside a part; close it with --\(boundary)--") }
        guard count > 0 else { throw .malformed("no part delimited by --\(boundary)") }
        return (parts, count)
    }

    /// Whether no part header could hand MultipartKit a header-name byte from 0x80 up. MultipartKit 4.7.1 looks each
    /// header-name byte up in a 128-entry table (MultipartParser.swift:316) and traps on a higher one: one such byte
    /// in an upload ended the whole service (found by Fuzz/FuzzMultipart). Checked wherever a header block may start,
    /// after any `--boundary` followed by CRLF (a superset of where the parser starts one, preamble included), the
    /// name bytes of each line read as the parser reads them, up to the byte where the parser would stop with a
    /// syntax error; ASCII it refuses is taken as allowed, so the check errs towards refusing, never towards a trap.
    static func headerNamesAreASCII(_ body: ByteBuffer, boundary: String) -> Bool {
        let delimiter = Array(("--" + boundary).utf8)
        return body.withUnsafeReadableBytes { bytes in
            let count = bytes.count
            func isLineEnd(_ index: Int) -> Bool { index + 1 < count && bytes[index] == 13 && bytes[index + 1] == 10 }
            func delimiterAt(_ index: Int) -> Bool {
                guard index + delimiter.count <= count else { return false }
                for offset in 0..<delimiter.count where bytes[index + offset] != delimiter[offset] { return false }
                return true
            }
            /// false when the header block from `start` would trap the parser.
            func blockIsSafe(from start: Int) -> Bool {
                var index = start
                while index < count {
                    // A header line: its name up to a colon; CR first ends the block.
                    if bytes[index] == 13 { return true }
                    var nameLength = 0
                    while index < count {
                        let byte = bytes[index]
                        if byte >= 0x80 { return false }
                        if byte == 58 && nameLength > 0 { break }
                        if byte < 0x21 || byte == 0x7F || byte == 58 { return true }  // the parser stops here
                        nameLength += 1
                        index += 1
                    }
                    // The value, to its CR LF.
                    while index < count && !isLineEnd(index) { index += 1 }
                    index += 2
                }
                return true
            }
            var index = 0
            while index + delimiter.count + 2 <= count {
                if bytes[index] == 0x2D, delimiterAt(index), isLineEnd(index + delimiter.count),
                    !blockIsSafe(from: index + delimiter.count + 2)
                {
                    return false
                }
                index += 1
            }
            return true
        }
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
}

extension UploadForm.Part {
    var contentType: String? { headers.first(name: "Content-Type") }
}

/// The upload's multipart reading as the handler meets it, for Fuzz/FuzzMultipart (a fuzz target sees public API
/// only): the boundary from `contentType`, then the first `photos[]` part of `body`, and all parts within the limits.
public enum MultipartReading {
    public struct Outcome: Sendable {
        /// The first `photos[]` part's bytes and Content-Type, when the body has one.
        public var photo: (bytes: Int, contentType: String?)?
        /// How many parts ``UploadForm/parts(of:boundary:limits:)`` gave, or its refusal.
        public var parts: Result<Int, FailureText>
        /// The refusal of the photo's reading, if any.
        public var photoFailure: FailureText?
        /// The limit on parts.
        public var partLimit: Int
    }

    public struct FailureText: Error, Sendable {
        public var text: String
    }

    public static func read(contentType: String, body: [UInt8]) -> Outcome {
        let limits = UploadForm.Limits()
        var outcome = Outcome(photo: nil, parts: .success(0), photoFailure: nil, partLimit: limits.parts)
        let buffer = ByteBuffer(bytes: body)
        do {
            let boundary = try UploadForm.boundary(fromContentType: contentType)
            if let part = try UploadForm.firstPart(named: "photos[]", of: buffer, boundary: boundary) {
                outcome.photo = (part.body.readableBytes, part.contentType)
            }
        } catch {
            outcome.photoFailure = FailureText(text: error.description)
        }
        do {
            let boundary = try UploadForm.boundary(fromContentType: contentType)
            outcome.parts = .success(try UploadForm.parts(of: buffer, boundary: boundary).count)
        } catch {
            outcome.parts = .failure(FailureText(text: error.description))
        }
        return outcome
    }
}
