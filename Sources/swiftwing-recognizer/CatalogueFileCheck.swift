import Foundation

/// The checks `serve` makes on its catalogue file before it listens: a service that cannot match anything must not
/// start and accept scans. Each failure names the file and line, and says how to fix it.
enum CatalogueFileCheck {
    struct Failure: Error, CustomStringConvertible, Equatable {
        let description: String
    }

    /// The number of books (rows after the header) in the CSV file at `path`.
    @discardableResult
    static func check(_ path: String) throws(Failure) -> Int {
        guard let data = FileManager.default.contents(atPath: path) else {
            let exists = FileManager.default.fileExists(atPath: path)
            throw Failure(
                description: exists
                    ? "\(path): cannot be read by this user; make it readable (chmod 0644, or owned by the service's user)"
                    : "\(path): no such file; import a catalogue (catalogue.csv, a Goodreads or SwiftWing export) there"
            )
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw Failure(description: "\(path): not UTF-8 text; save the catalogue as UTF-8 CSV")
        }
        let rows = rows(of: text)
        guard let header = rows.first, header.fields.contains(where: { !$0.isEmpty }) else {
            throw Failure(
                description:
                    "\(path):1: the catalogue is empty; it needs a header line (e.g. title,author,isbn) and one book per line"
            )
        }
        let columns = header.fields.map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        guard columns.contains("title") else {
            throw Failure(
                description:
                    "\(path):1: the header has no 'title' column (it has: \(columns.joined(separator: ", "))); "
                    + "use the dataset's catalogue.csv, a Goodreads export or `swiftwing export`")
        }
        var books = 0
        for row in rows.dropFirst() {
            if let problem = row.problem { throw Failure(description: "\(path):\(row.line): \(problem)") }
            if row.fields.allSatisfy(\.isEmpty) { continue }
            guard row.fields.count <= columns.count else {
                throw Failure(
                    description:
                        "\(path):\(row.line): \(row.fields.count) fields where the header has \(columns.count); "
                        + "quote fields holding commas (\"Surname, Forename\")")
            }
            books += 1
        }
        guard books > 0 else { throw Failure(description: "\(path):2: the catalogue has a header but no books") }
        return books
    }

    struct Row {
        var line: Int
        var fields: [String]
        var problem: String?
    }

    /// RFC 4180 rows: quoted fields may hold commas, doubled quotes and line breaks.
    static func rows(of text: String) -> [Row] {
        var rows: [Row] = []
        var fields: [String] = []
        var field = ""
        var quoted = false
        var line = 1
        var rowLine = 1
        var afterQuote = false
        var problem: String?
        var characters = text.makeIterator()
        var pending: Character?
        func endRow() {
            fields.append(field)
            rows.append(Row(line: rowLine, fields: fields, problem: problem))
            fields = []
            field = ""
            problem = nil
            afterQuote = false
        }
        while let c = pending ?? characters.next() {
            pending = nil
            if quoted {
                if c == "\"" {
                    if let next = characters.next() {
                        if next == "\"" {
                            field.append("\"")
                        } else {
                            quoted = false
                            afterQuote = true
                            pending = next
                        }
                    } else {
                        quoted = false
                    }
                } else {
                    if c == "\n" || c == "\r\n" { line += 1 }
                    field.append(c)
                }
                continue
            }
            switch c {
            case ",":
                fields.append(field)
                field = ""
                afterQuote = false
            case "\n", "\r\n":
                endRow()
                line += 1
                rowLine = line
            case "\"" where field.isEmpty && !afterQuote:
                quoted = true
            default:
                if afterQuote, problem == nil {
                    problem = "text after a closing quote; double the quotes inside a quoted field"
                }
                field.append(c)
            }
        }
        if quoted { problem = "a quoted field is not closed before the end of the file" }
        if !field.isEmpty || !fields.isEmpty || problem != nil { endRow() }
        return rows
    }
}
