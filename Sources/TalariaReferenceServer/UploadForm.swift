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

    /// The parts of `body`, in order. Preamble and epilogue are ignored; a body that ends inside a part, or holds
    /// no part at all, is malformed.
    static func parts(of body: ByteBuffer, boundary: String) throws(Failure) -> [Part] {
        let parser = MultipartParser(boundary: boundary)
        var parts: [Part] = []
        var headers = HTTPHeaders()
        var partBody = ByteBuffer()
        var insidePart = false
        parser.onHeader = { name, value in
            headers.add(name: name, value: value)
            insidePart = true
        }
        parser.onBody = { bytes in
            partBody.writeBuffer(&bytes)
            insidePart = true
        }
        parser.onPartComplete = {
            parts.append(Part(headers: headers, body: partBody))
            headers = HTTPHeaders()
            partBody = ByteBuffer()
            insidePart = false
        }
        do {
            try parser.execute(body)
        } catch {
            throw .malformed("a boundary line or part header is not valid (CRLF line ends, 'Name: value' headers)")
        }
        guard !insidePart else { throw .malformed("the body ends inside a part; close it with --\(boundary)--") }
        guard !parts.isEmpty else { throw .malformed("no part delimited by --\(boundary)") }
        return parts
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
