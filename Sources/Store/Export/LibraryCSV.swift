import Foundation

/// The two shapes of the library export.
public enum ExportFormat: String, CaseIterable, Sendable {
    /// Every column SwiftWing keeps, for spreadsheets and for reading back.
    case swiftwing
    /// The columns of a Goodreads library export, so the file imports into Goodreads and into the
    /// services that take Goodreads files.
    case goodreads

    /// The header row.
    public var columns: [String] {
        switch self {
        case .swiftwing:
            [
                "ISBN-13", "ISBN-10", "Title", "Authors", "Format", "Publisher", "Published Date", "Pages",
                "Confidence", "Needs Review", "Added Date", "Cover URL", "Scan ID",
            ]
        case .goodreads:
            [
                "Book Id", "Title", "Author", "Author l-f", "Additional Authors", "ISBN", "ISBN13", "My Rating",
                "Publisher", "Binding", "Number of Pages", "Year Published", "Original Publication Year",
                "Date Read", "Date Added", "Bookshelves", "Bookshelves with positions", "Exclusive Shelf",
                "My Review", "Spoiler", "Private Notes", "Read Count", "Owned Copies",
            ]
        }
    }

    /// The file name for an export made on `day` (`YYYY-MM-DD` in the device's time zone):
    /// `SwiftWing_Library_2026-11-23.csv`, `SwiftWing_Library_2026-11-23_goodreads.csv`.
    public func fileName(day: String) -> String {
        switch self {
        case .swiftwing: "SwiftWing_Library_\(day).csv"
        case .goodreads: "SwiftWing_Library_\(day)_goodreads.csv"
        }
    }
}

/// The library as CSV (RFC 4180): UTF-8, CRLF line ends, a header row (its constant names bare), every
/// book's field quoted (``CSVRecordWriter``), so a spreadsheet set to split on `;` still sees one cell.
///
/// Cells a spreadsheet would run as a formula (starting with `=`, `+`, `-`, `@`, a tab or a CR, and
/// the same after a `;`, where a `;`-separated locale that ignores the quotes would start a cell) get
/// a `'` before that character, which spreadsheets show as text; the Goodreads ISBN cells are the one
/// exception: their `="…"` form is what Goodreads itself writes (it keeps leading zeros).
public enum LibraryCSV {
    /// The whole file for `books`, header first, every record ended by CRLF.
    public static func encode(_ books: [BookRecord], format: ExportFormat) -> [UInt8] {
        var writer = CSVRecordWriter()
        writer.bytes.reserveCapacity(256 * (books.count + 1))
        writer.append(format.columns, quoted: false)
        for book in books {
            writer.append(row(for: book, format: format), quoted: true)
        }
        return writer.bytes
    }

    /// Goodreads' private note for a book that needs review, with the reason when there is one.
    static func reviewNote(_ book: BookRecord) -> String {
        guard book.needsReview else { return "" }
        return "SwiftWing: check this book (it needs review" + (book.reviewReason.map { ": " + $0 } ?? "") + ")"
    }

    /// One record, in the order of `format.columns`.
    public static func row(for book: BookRecord, format: ExportFormat) -> [String] {
        switch format {
        case .swiftwing:
            return [
                book.isbn13 ?? "", book.isbn10 ?? "", book.title, book.authors.joined(separator: "; "),
                book.format ?? "", book.publisher ?? "", book.publishedDate ?? "",
                book.pageCount.map(String.init) ?? "", book.confidence.map { String($0) } ?? "",
                book.needsReview ? "true" : "false", isoDate(book.addedAt), book.coverURL ?? "",
                book.scanID?.uuidString.lowercased() ?? "",
            ].map(neutralised)
        case .goodreads:
            let first = book.authors.first ?? ""
            let cells = [
                "", book.title, first, lastNameFirst(first), book.authors.dropFirst().joined(separator: ", "),
            ].map(neutralised)
            let isbns = [goodreadsISBN(book.isbn10), goodreadsISBN(book.isbn13)]
            let rest = [
                "0", book.publisher ?? "", book.format ?? "", book.pageCount.map(String.init) ?? "",
                year(of: book.publishedDate), "", "", goodreadsDate(book.addedAt), "", "", "to-read", "", "",
                reviewNote(book), "0", "1",
            ].map(neutralised)
            return cells + isbns + rest
        }
    }

    /// `value` as text a spreadsheet shows and never evaluates: a `'` before a formula character at
    /// the start and after every `;` (`X;=HYPERLINK(…)` is a formula cell in a `;` locale reading
    /// the field bare).
    public static func neutralised(_ value: String) -> String {
        func starts(_ byte: UInt8) -> Bool {
            byte == 0x3D || byte == 0x2B || byte == 0x2D || byte == 0x40 || byte == 0x09 || byte == 0x0D
        }
        let utf8 = value.utf8
        guard let first = utf8.first else { return value }
        // Most fields have neither a formula start nor a `;`: no copy.
        guard starts(first) || utf8.contains(0x3B) else { return value }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(utf8.count + 2)
        var fieldStart = true
        // After a `;` and any spaces: an import with "trim spaces" would make "; =x" a formula too.
        var afterSemicolon = false
        for byte in utf8 {
            if (fieldStart || afterSemicolon) && starts(byte) { bytes.append(0x27) }
            bytes.append(byte)
            fieldStart = false
            if byte == 0x3B { afterSemicolon = true } else if byte != 0x20 { afterSemicolon = false }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Goodreads writes ISBNs as `="0441013597"` (and `=""` for none) so spreadsheets keep them as text.
    /// Only digits and `X` are ever put inside, so the formula is inert.
    static func goodreadsISBN(_ isbn: String?) -> String {
        let digits = (isbn ?? "").filter { $0.isASCII && ($0.isNumber || $0 == "X") }
        return "=\"\(digits)\""
    }

    /// "Ursula K. Le Guin" → "Guin, Ursula K. Le": the last word first, as Goodreads' `Author l-f`.
    /// A name that already has a comma, or is one word, stays as it is.
    static func lastNameFirst(_ name: String) -> String {
        let trimmed = name.trimmingCharacters(in: .whitespaces)
        guard !trimmed.contains(","), let space = trimmed.lastIndex(of: " ") else { return trimmed }
        let given = trimmed[..<space].trimmingCharacters(in: .whitespaces)
        return "\(trimmed[trimmed.index(after: space)...]), \(given)"
    }

    /// The year of "YYYY-MM-DD", "YYYY-MM" or "YYYY"; empty when it does not start with four digits.
    static func year(of date: String?) -> String {
        guard let date, date.count >= 4 else { return "" }
        let year = date.prefix(4)
        return year.allSatisfy { $0.isASCII && $0.isNumber } ? String(year) : ""
    }

    /// `2026-11-18T11:06:40Z`.
    static func isoDate(_ date: Date) -> String { UTCDateParts(date).iso8601 }

    /// Goodreads' `Date Added` form, `2026/11/18`, in UTC like the other dates of the export.
    static func goodreadsDate(_ date: Date) -> String {
        let utc = UTCDateParts(date)
        return "\(utc.year)/\(UTCDateParts.pad(utc.month))/\(UTCDateParts.pad(utc.day))"
    }
}

/// RFC 4180 records as UTF-8 bytes: fields separated by commas, each record ended by CRLF, a field
/// quoted when asked or when it holds a comma, a quote, a CR or an LF, its quotes doubled.
///
/// The same output as CSV.swift's `CSVWriter` (the tests compare them byte for byte), written here
/// because that writer costs about 1 s per 10,000 books on the development machine, the whole
/// budget of an export (it writes byte by byte through an `OutputStream` and searches each field
/// five times with Foundation); this one takes a few milliseconds (Benchmarks/README.md).
public struct CSVRecordWriter: Sendable {
    public var bytes: [UInt8] = []

    public init() {}

    public mutating func append(_ fields: [String], quoted: Bool = false) {
        for (index, field) in fields.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            let utf8 = field.utf8
            if quoted || utf8.contains(where: { $0 == 0x2C || $0 == 0x22 || $0 == 0x0D || $0 == 0x0A }) {
                bytes.append(0x22)
                for byte in utf8 {
                    bytes.append(byte)
                    if byte == 0x22 { bytes.append(0x22) }
                }
                bytes.append(0x22)
            } else {
                bytes.append(contentsOf: utf8)
            }
        }
        bytes.append(contentsOf: [0x0D, 0x0A])
    }
}
