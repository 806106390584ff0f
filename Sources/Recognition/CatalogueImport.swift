import CSV
import Foundation

/// The CSV forms a catalogue can come in, told apart by the header row.
public enum CatalogueFormat: String, Sendable, CaseIterable {
    /// The Library Dataset's inventory: `title,author,tag,series,isbn`, names in library form ("Surname, Forename").
    case libraryDataset
    /// A Goodreads library export: `Title`, `Author`, `Additional Authors`, `ISBN`, `ISBN13` (ISBNs as `="…"`).
    case goodreads
    /// SwiftWing's own library export: `ISBN-13`, `ISBN-10`, `Title`, `Authors` ("; " between authors).
    case swiftwing

    /// The format whose required columns `header` has, if any.
    public static func detect(header: [String]) -> CatalogueFormat? {
        let names = Set(header.map { $0.trimmingCharacters(in: .whitespaces).lowercased() })
        if names.isSuperset(of: ["isbn-13", "isbn-10", "title", "authors"]) { return .swiftwing }
        if names.isSuperset(of: ["title", "author", "isbn", "isbn13"]) { return .goodreads }
        if names.isSuperset(of: ["title", "author", "tag", "isbn"]) { return .libraryDataset }
        return nil
    }
}

/// A catalogue file that cannot be imported: names the file, the line and the column, and what would fix it.
public struct CatalogueImportError: Error, CustomStringConvertible, Equatable {
    public var file: String
    public var line: Int
    public var column: String?
    public var reason: String

    public init(file: String, line: Int, column: String?, reason: String) {
        self.file = file
        self.line = line
        self.column = column
        self.reason = reason
    }

    public var description: String {
        let place = column.map { "\(file) line \(line), column \($0)" } ?? "\(file) line \(line)"
        return "\(place): \(reason)"
    }
}

/// Reads a catalogue CSV (any ``CatalogueFormat``) row by row, so a 1.5M-row file is never held whole.
public enum CatalogueImport {
    /// Calls `body` with each entry of the file at `path`, in file order. Throws ``CatalogueImportError`` for an
    /// unknown header, a row with the wrong number of fields, a row without a title or with a malformed ISBN.
    @discardableResult
    public static func read(path: String, _ body: (CatalogueEntry) throws -> Void) throws -> CatalogueFormat {
        guard let stream = InputStream(fileAtPath: path) else {
            throw CatalogueImportError(file: path, line: 0, column: nil, reason: "cannot open the file; check the path")
        }
        let reader: CSVReader
        do {
            reader = try CSVReader(stream: stream, hasHeaderRow: false)
        } catch {
            throw CatalogueImportError(file: path, line: 1, column: nil, reason: "cannot read the file (\(error))")
        }
        return try read(reader: reader, file: path, body)
    }

    /// The entries of an in-memory CSV text (for tests and small catalogues); `file` names it in errors.
    public static func entries(csv: String, file: String) throws -> [CatalogueEntry] {
        let reader: CSVReader
        do {
            reader = try CSVReader(string: csv, hasHeaderRow: false)
        } catch {
            throw CatalogueImportError(file: file, line: 1, column: nil, reason: "cannot read the text (\(error))")
        }
        var entries: [CatalogueEntry] = []
        _ = try read(reader: reader, file: file) { entries.append($0) }
        return entries
    }

    private static func read(
        reader: CSVReader, file: String, _ body: (CatalogueEntry) throws -> Void
    ) throws -> CatalogueFormat {
        guard var header = reader.next(), !(header.count == 1 && header[0].isEmpty) else {
            throw CatalogueImportError(
                file: file, line: 1, column: nil,
                reason: "the file is empty; a catalogue needs a header row (title,author,tag,series,isbn, "
                    + "a Goodreads export or a SwiftWing export)")
        }
        if let first = header.first, first.hasPrefix("\u{FEFF}") { header[0] = String(first.dropFirst()) }
        guard let format = CatalogueFormat.detect(header: header) else {
            throw CatalogueImportError(
                file: file, line: 1, column: nil,
                reason: "unknown header \(header.joined(separator: ",")); expected title,author,tag,series,isbn, "
                    + "a Goodreads export (Title, Author, ISBN, ISBN13) or a SwiftWing export (ISBN-13, ISBN-10, "
                    + "Title, Authors)")
        }
        let columns = Dictionary(
            header.enumerated().map { ($0.element.trimmingCharacters(in: .whitespaces).lowercased(), $0.offset) },
            uniquingKeysWith: { first, _ in first })
        var line = 1 + newlines(in: header)
        while let row = reader.next() {
            line += 1
            defer { line += newlines(in: row) }
            if row.count == 1 && row[0].isEmpty { continue }
            if let error = reader.error {
                throw CatalogueImportError(
                    file: file, line: line, column: nil, reason: "cannot read the row (\(error))")
            }
            if row.count != header.count {
                let column = row.count < header.count ? header[row.count] : "\(row.count) (beyond the header)"
                throw CatalogueImportError(
                    file: file, line: line, column: column,
                    reason: "the row has \(row.count) fields where the header has \(header.count); "
                        + "quote fields that hold commas")
            }
            // A SwiftWing export's books still awaiting review are the recognizer's guesses, not the owner's books:
            // matched against, a wrong guess would confirm itself on the next photo.
            if format == .swiftwing, let column = columns["needs review"],
                row[column].trimmingCharacters(in: .whitespaces).lowercased() == "true"
            {
                continue
            }
            try body(entry(row, header: header, columns: columns, format: format, file: file, line: line))
        }
        return format
    }

    private static func entry(
        _ row: [String], header: [String], columns: [String: Int], format: CatalogueFormat, file: String, line: Int
    ) throws -> CatalogueEntry {
        func cell(_ name: String) -> String {
            columns[name].map { row[$0].trimmingCharacters(in: .whitespaces) } ?? ""
        }
        let titleColumn = "title"
        let title = cell(titleColumn)
        guard !title.isEmpty else {
            throw CatalogueImportError(
                file: file, line: line, column: header[columns[titleColumn] ?? 0],
                reason: "the title is empty; every book needs a title")
        }
        var authors: [String]
        var isbnCandidates: [(column: String, value: String)]
        var tag: String?
        var series: String?
        switch format {
        case .libraryDataset:
            authors = [cell("author")].filter { !$0.isEmpty }
            isbnCandidates = [("isbn", cell("isbn"))]
            tag = nonEmpty(cell("tag"))
            series = nonEmpty(cell("series"))
        case .goodreads:
            authors =
                [cell("author")]
                + cell("additional authors").split(separator: ",").map {
                    $0.trimmingCharacters(in: .whitespaces)
                }
            authors = authors.filter { !$0.isEmpty }
            isbnCandidates = [("isbn13", cell("isbn13")), ("isbn", cell("isbn"))]
        case .swiftwing:
            authors = cell("authors").split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
                .filter { !$0.isEmpty }
            isbnCandidates = [("isbn-13", cell("isbn-13")), ("isbn-10", cell("isbn-10"))]
        }
        // A library's ISBN cell may carry a qualifier ("9788460843535 (o. c.)") or hold an ISSN or a typo; the ISBN
        // is only reported, never matched on, so an unusable cell leaves the entry without one rather than failing.
        let isbn = isbnCandidates.lazy.compactMap { isbnPrefix($0.value) }.first
        return CatalogueEntry(title: title, authors: authors, isbn: isbn, tag: tag, series: series)
    }

    private static func nonEmpty(_ text: String) -> String? { text.isEmpty ? nil : text }

    /// The ISBN at the start of a cell, without Goodreads' `="…"` quoting, SwiftWing's formula guard `'`, hyphens
    /// and a trailing qualifier; nil when the cell does not start with 10 or 13 digits (the tenth may be X).
    static func isbnPrefix(_ cell: String) -> String? {
        var digits = ""
        for character in cell.uppercased() {
            if character.isASCII && character.isNumber || (character == "X" && digits.count == 9) {
                digits.append(character)
            } else if character == "-" || character == "=" || character == "\"" || character == "'" || character == " "
            {
                if character == " " && !digits.isEmpty { break }
            } else {
                break
            }
        }
        if digits.count == 13 && !digits.contains("X") { return digits }
        if digits.count == 10 { return digits }
        return nil
    }

    private static func newlines(in row: [String]) -> Int {
        row.reduce(0) { count, field in count + field.utf8.reduce(0) { $0 + ($1 == 0x0A ? 1 : 0) } }
    }
}
