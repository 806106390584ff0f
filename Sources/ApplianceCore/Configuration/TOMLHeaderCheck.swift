/// Finds a table header that does not start with a name (`[=]`, `[.camera]`, `[é]`, a lone `[`).
/// toml++ (under TOMLKit) asserts on those instead of reporting them, which aborts the process,
/// so the loader checks for them before parsing. Only real headers are looked at: lines that start
/// with `[` outside strings, comments and multi-line arrays or inline tables.
package enum TOMLHeaderCheck {
    package struct Finding: Equatable {
        package var line: Int
        package var column: Int
    }

    package static func firstHeaderWithoutName(in text: String) -> Finding? {
        let bytes = Array(text.utf8)
        var index = 0
        var line = 1
        var lineStart = 0
        var depth = 0
        var atLineStart = true

        func byte(_ offset: Int) -> UInt8? { index + offset < bytes.count ? bytes[index + offset] : nil }
        func skipBlanks() { while let b = byte(0), b == 0x20 || b == 0x09 { index += 1 } }
        func newline() {
            line += 1
            lineStart = index + 1
            atLineStart = true
        }
        /// Moves past a string starting at `index` (quote `quote`, `triple` for a multi-line one).
        func skipString(quote: UInt8, triple: Bool) {
            index += triple ? 3 : 1
            while let b = byte(0) {
                if b == 0x5C, quote == 0x22 {
                    index += 2
                    continue
                }  // an escape in a basic string
                if b == quote, !triple || (byte(1) == quote && byte(2) == quote) {
                    index += triple ? 3 : 1
                    return
                }
                if b == 0x0A {
                    guard triple else { return }  // a single-line string ends at its line; toml++ reports it
                    newline()
                }
                index += 1
            }
        }

        while index < bytes.count {
            if atLineStart {
                atLineStart = false
                skipBlanks()
                if depth == 0, byte(0) == 0x5B {
                    index += 1
                    let hadBlank = byte(0) == 0x20 || byte(0) == 0x09
                    skipBlanks()
                    if byte(0) == 0x5B {
                        if hadBlank { continue }  // `[ [`: toml++ reports it
                        index += 1
                        skipBlanks()
                    }
                    if let first = byte(0), !startsKey(first) {
                        return Finding(line: line, column: index - lineStart + 1)
                    }
                    while let b = byte(0), b != 0x0A { index += 1 }  // the rest of the header line
                    continue
                }
            }
            guard let b = byte(0) else { break }
            switch b {
            case 0x0A:
                newline()
                index += 1
            case 0x23: while let c = byte(0), c != 0x0A { index += 1 }  // a comment
            case 0x22, 0x27: skipString(quote: b, triple: byte(1) == b && byte(2) == b)
            case 0x5B, 0x7B:
                depth += 1
                index += 1
            case 0x5D, 0x7D:
                depth = max(0, depth - 1)
                index += 1
            default: index += 1
            }
        }
        return nil
    }

    /// What toml++ accepts as the first character of a key: a bare-key character or a quote;
    /// `]` (an empty header) it reports itself.
    private static func startsKey(_ byte: UInt8) -> Bool {
        switch byte {
        case 0x41...0x5A, 0x61...0x7A, 0x30...0x39, 0x5F, 0x2D, 0x22, 0x27, 0x5D: true
        default: false
        }
    }
}
