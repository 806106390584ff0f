/// Builds a response head from the lines curl hands to its header callback: a status line, header
/// lines, a blank line. Interim 1xx responses (`100 Continue`) are dropped so only the final
/// response's headers remain; lines after the head (chunked trailers) are ignored.
struct ResponseHeadParser {
    private(set) var status = 0
    private(set) var version: HTTPVersion = .unknown
    private(set) var headers: [HTTPHeader] = []
    /// The final response's blank line was seen.
    private(set) var isComplete = false

    var head: HTTPResponseHead { HTTPResponseHead(status: status, headers: headers, version: version) }

    mutating func consume(line bytes: UnsafeRawBufferPointer) {
        guard !isComplete else { return }
        var line = String(decoding: bytes, as: UTF8.self)
        while line.hasSuffix("\n") || line.hasSuffix("\r") || line.hasSuffix("\r\n") { line.removeLast() }

        if line.hasPrefix("HTTP/") {
            let fields = line.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: true)
            version = Self.version(fields.first.map(String.init) ?? "")
            status = fields.count > 1 ? Int(fields[1]) ?? 0 : 0
            headers = []
        } else if line.isEmpty {
            guard status != 0 else { return }
            if (100..<200).contains(status) && status != 101 {
                status = 0
                headers = []
            } else {
                isComplete = true
            }
        } else if line.first == " " || line.first == "\t" {
            // An obsolete folded continuation of the previous header's value.
            guard !headers.isEmpty else { return }
            headers[headers.count - 1].value += " " + line.trimmingWhitespace()
        } else if let colon = line.firstIndex(of: ":") {
            let name = String(line[..<colon]).trimmingWhitespace()
            let value = String(line[line.index(after: colon)...]).trimmingWhitespace()
            headers.append(HTTPHeader(name: name, value: value))
        }
    }

    /// The version curl reports wins over the status line's spelling.
    mutating func setVersion(_ negotiated: HTTPVersion) { version = negotiated }

    /// Treats what is there as the final head (curl finished without a blank line, e.g. HTTP/1.0 quirks).
    mutating func markComplete() { isComplete = true }

    static func version(_ text: String) -> HTTPVersion {
        switch text {
        case "HTTP/1.0": .http1_0
        case "HTTP/1.1": .http1_1
        case "HTTP/2", "HTTP/2.0": .http2
        case "HTTP/3", "HTTP/3.0": .http3
        default: .unknown
        }
    }
}

extension String {
    func trimmingWhitespace() -> String {
        var view = Substring(self)
        while let first = view.first, first == " " || first == "\t" { view.removeFirst() }
        while let last = view.last, last == " " || last == "\t" { view.removeLast() }
        return String(view)
    }
}
