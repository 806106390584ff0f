import Foundation
import SwiftWingCore

/// Where on the photo the backend saw a spine: fractions of the image, 0–1.
public struct BoundingBox: Hashable, Sendable {
    public var x: Double
    public var y: Double
    public var width: Double
    public var height: Double

    public init(x: Double, y: Double, width: Double, height: Double) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }

    /// The box a book's JSON gives as `boundingBox` (`x`, `y`, `width`, `height`, all numbers), or `nil`.
    public init?(json value: JSONValue?) {
        guard let value, let x = value["x"]?.doubleValue, let y = value["y"]?.doubleValue,
            let width = value["width"]?.doubleValue, let height = value["height"]?.doubleValue
        else { return nil }
        self.init(x: x, y: y, width: width, height: height)
    }
}

/// One book as the backend described it (docs/protocol.md §3), read tolerantly.
public struct TalariaBook: Hashable, Sendable {
    /// Valid ISBN-13 (an ISBN-10 converted), or `nil`.
    public var isbn13: String?
    /// The ISBN-10 when the backend sent one or the ISBN-13 has one (`978…`).
    public var isbn10: String?
    public var title: String
    public var authors: [String]
    /// 0–1 (a 0–100 value is scaled), `nil` when missing or nonsense.
    public var confidence: Double?
    public var format: String?
    public var publisher: String?
    /// "YYYY-MM-DD", "YYYY-MM" or "YYYY" (from `publicationYear` when that is all there is).
    public var publishedDate: String?
    public var pageCount: Int?
    public var coverURL: String?
    /// As the backend sent it (`success`, `review_needed`…; docs/protocol.md §3), `nil` when absent:
    /// the library reads it tolerantly.
    public var enrichmentStatus: String?
    public var boundingBox: BoundingBox?
    /// The backend's JSON for this book (compact, keys sorted).
    public var rawJSON: String
    /// Why this book must not be trusted without a person's review: fields of the wrong type, no
    /// confidence, a confidence out of range. Empty for a well-formed book.
    public var reviewReasons: [String]

    public init(
        isbn13: String? = nil, isbn10: String? = nil, title: String, authors: [String] = [],
        confidence: Double? = nil, format: String? = nil, publisher: String? = nil, publishedDate: String? = nil,
        pageCount: Int? = nil, coverURL: String? = nil, enrichmentStatus: String? = nil,
        boundingBox: BoundingBox? = nil, rawJSON: String = "{}", reviewReasons: [String] = []
    ) {
        self.isbn13 = isbn13
        self.isbn10 = isbn10
        self.title = title
        self.authors = authors
        self.confidence = confidence
        self.format = format
        self.publisher = publisher
        self.publishedDate = publishedDate
        self.pageCount = pageCount
        self.coverURL = coverURL
        self.enrichmentStatus = enrichmentStatus
        self.boundingBox = boundingBox
        self.rawJSON = rawJSON
        self.reviewReasons = reviewReasons
    }

    // MARK: Decoding

    /// Reads one book. Returns `nil` (with a warning saying why) for something that is not a book:
    /// not an object, or neither a title nor a valid ISBN. Smaller problems (an ISBN failing its
    /// checksum, a confidence out of range) keep the book and add a warning; fields of the wrong type
    /// and a missing or unreadable confidence keep it too, with ``reviewReasons`` saying what a person
    /// should check.
    public static func decode(_ value: JSONValue) -> (book: TalariaBook?, warnings: [TalariaWarning]) {
        guard case .object = value else {
            return (nil, [TalariaWarning("a book that is not a JSON object was skipped: \(value.jsonText.prefix(80))")])
        }
        var warnings: [TalariaWarning] = []
        let enrichment = value["enrichment"]
        func field(_ keys: String...) -> JSONValue? {
            for key in keys {
                if let found = value[key], !found.isNull { return found }
            }
            for key in keys {
                if let found = enrichment?[key], !found.isNull { return found }
            }
            return nil
        }
        func text(_ keys: String...) -> String? {
            for key in keys {
                for source in [value, enrichment] {
                    if let string = source?[key]?.stringValue?.trimmed,
                        !string.isEmpty
                    {
                        return string
                    }
                }
            }
            return nil
        }

        var reasons = wrongTypes(value)
        let title = text("title") ?? ""

        // ISBN: the first candidate that passes its checksum.
        var isbn13: String?
        var isbn10: String?
        var rejected: [String] = []
        let candidates: [JSONValue?] = [
            value["isbn13"], value["isbn"], enrichment?["isbn13"], enrichment?["isbn"], value["isbn10"],
            enrichment?["isbn10"],
        ]
        for candidate in candidates {
            guard let raw = candidate?.stringValue else { continue }
            let compact = ISBN.compact(raw)
            if compact.isEmpty || compact == "UNKNOWN" || compact == "NULL" || compact == "N/A" { continue }
            if let isbn = ISBN(raw) {
                isbn13 = isbn.isbn13
                isbn10 = isbn.isbn10
                break
            }
            rejected.append(raw)
        }
        if isbn13 == nil, let bad = rejected.first {
            warnings.append(
                TalariaWarning(
                    "book \"\(title.isEmpty ? "(no title)" : title)\": ISBN \"\(bad)\" is not a valid ISBN-10/13 "
                        + "(wrong length or check digit); kept without ISBN, matched by title and author"))
        }

        // A title of the wrong type ({"title": {…}}) is still a book sighted, kept for a person to name.
        let titleGiven = field("title") != nil
        guard !title.isEmpty || isbn13 != nil || (titleGiven && !reasons.isEmpty) else {
            warnings.append(
                TalariaWarning(
                    "a book with neither a title nor a valid ISBN was skipped: \(value.jsonText.prefix(120))"))
            return (nil, warnings)
        }

        var authors: [String] = []
        if let list = field("authors", "author") {
            switch list {
            // Only names: a number where a name belongs is a reason for review, not an author called "3".
            case .array(let items):
                authors = items.compactMap { item in
                    (Self.name(item) ?? item["name"].flatMap(Self.name))?.trimmed
                }
            case .object:
                authors = [list["name"].flatMap(Self.name)].compactMap { $0 }
            default:
                authors = [Self.name(list)].compactMap { $0?.trimmed }
            }
            authors.removeAll { $0.isEmpty }
        }

        var confidence = field("confidence")?.doubleValue
        if let value = confidence {
            if value.isFinite, value >= 0, value <= 1 {
                // as specified
            } else if value.isFinite, value > 1, value <= 100 {
                confidence = value / 100
            } else {
                warnings.append(TalariaWarning("book \"\(title)\": confidence \(value) is not 0–1; ignored"))
                reasons.append("confidence \(JSONValue.number(value).jsonText) is not between 0 and 1")
                confidence = nil
            }
        } else if let given = field("confidence") {
            reasons.append("confidence is \(kind(of: given)) (\(given.jsonText.prefix(40))), not a number")
        } else {
            reasons.append("the backend gave no confidence")
        }

        var publishedDate = text("publishedDate", "publicationDate")
        if publishedDate == nil, let year = field("publicationYear", "year")?.intValue, year > 0 {
            publishedDate = String(year)
        }
        var pageCount = field("pageCount", "pages")?.intValue
        if let pages = pageCount, pages <= 0 { pageCount = nil }

        let box = BoundingBox(json: value["boundingBox"])

        let book = TalariaBook(
            isbn13: isbn13, isbn10: isbn10, title: title, authors: authors, confidence: confidence,
            format: text("format"), publisher: text("publisher"), publishedDate: publishedDate, pageCount: pageCount,
            coverURL: text("coverUrl", "coverURL", "coverImageUrl", "thumbnail"),
            enrichmentStatus: text("enrichmentStatus") ?? enrichment?["status"]?.stringValue,
            boundingBox: box, rawJSON: value.jsonText, reviewReasons: reasons)
        return (book, warnings)
    }

    /// What the book's fields expect (docs/protocol.md §3): text, a number, or a list of names.
    private enum Expected {
        case text, number, names

        var words: String {
            switch self {
            case .text: "text"
            case .number: "a number"
            case .names: "a list of names"
            }
        }

        func accepts(_ value: JSONValue) -> Bool {
            switch (self, value) {
            case (_, .null), (.text, .string), (.number, .number): true
            // "320" for a page count is read as the number it spells.
            case (.number, .string(let text)): Double(text.trimmed) != nil
            case (.names, .string): true
            case (.names, .object(let object)): object["name"].flatMap(TalariaBook.name) != nil
            case (.names, .array(let items)):
                items.allSatisfy { item in TalariaBook.name(item) ?? item["name"].flatMap(TalariaBook.name) != nil }
            default: false
            }
        }
    }

    private static let expectedFields: [(key: String, expected: Expected)] = [
        ("title", .text), ("isbn", .text), ("isbn13", .text), ("isbn10", .text), ("authors", .names),
        ("author", .names), ("format", .text), ("publisher", .text), ("publishedDate", .text),
        ("publicationDate", .text), ("publicationYear", .number), ("pageCount", .number), ("pages", .number),
        ("coverUrl", .text), ("coverURL", .text), ("enrichmentStatus", .text),
    ]

    /// One phrase per field, at the top level or in `enrichment`, whose JSON type is not the one the
    /// protocol gives it (a number for a title, a list of numbers for authors…). The confidence is
    /// judged by ``decode(_:)``, which also reads it.
    private static func wrongTypes(_ value: JSONValue) -> [String] {
        var reasons: [String] = []
        for (prefix, object) in [("", value), ("enrichment.", value["enrichment"])] {
            guard let object else { continue }
            for (key, expected) in expectedFields {
                guard let found = object[key], !expected.accepts(found) else { continue }
                let held = found.jsonText.prefix(40)
                reasons.append("\(prefix)\(key) is \(kind(of: found)) (\(held)), not \(expected.words)")
            }
        }
        return reasons
    }

    /// The text of a JSON string; `nil` for anything else.
    private static func name(_ value: JSONValue) -> String? {
        if case .string(let text) = value { return text }
        return nil
    }

    private static func kind(of value: JSONValue) -> String {
        switch value {
        case .null: "null"
        case .bool: "true/false"
        case .number: "a number"
        case .string: "text"
        case .array: "a list"
        case .object: "an object"
        }
    }

    /// Reads a list of books, skipping (with a warning) the ones that are not books.
    public static func decodeList(_ values: [JSONValue]) -> (books: [TalariaBook], warnings: [TalariaWarning]) {
        var books: [TalariaBook] = []
        var warnings: [TalariaWarning] = []
        for value in values {
            let (book, found) = decode(value)
            warnings += found
            if let book { books.append(book) }
        }
        return (books, warnings)
    }
}
