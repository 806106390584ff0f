import Foundation

/// The public book catalogues a book known only by its ISBN is completed from.
public enum CatalogProvider: String, CaseIterable, Hashable, Sendable {
    /// Open Library's ISBN API (no key).
    case openLibrary = "openlibrary"
    /// Google Books' volumes API (no key for this query; rate limited with 429).
    case googleBooks = "googlebooks"

    /// The provider's public service, used when `enrichment.base_url` is not set.
    public var defaultBaseURL: URL {
        switch self {
        case .openLibrary: URL(string: "https://openlibrary.org")!
        case .googleBooks: URL(string: "https://www.googleapis.com")!
        }
    }

    /// The lookup of one ISBN at `base` (a path in `base` is kept, so a proxy prefix works).
    public func lookupURL(isbn: String, base: URL) -> URL {
        var components = URLComponents(url: base, resolvingAgainstBaseURL: false) ?? URLComponents()
        let prefix = components.path.hasSuffix("/") ? String(components.path.dropLast()) : components.path
        switch self {
        case .openLibrary:
            components.path = prefix + "/api/books"
            components.queryItems = [
                URLQueryItem(name: "bibkeys", value: "ISBN:\(isbn)"), URLQueryItem(name: "format", value: "json"),
                URLQueryItem(name: "jscmd", value: "data"),
            ]
        case .googleBooks:
            components.path = prefix + "/books/v1/volumes"
            components.queryItems = [URLQueryItem(name: "q", value: "isbn:\(isbn)")]
        }
        return components.url ?? base
    }

    /// What a 2xx body says about `isbn`. Throws when the body is not JSON or not the catalogue's
    /// shape at all (a proxy's page, a cut-off reply): the lookup is then retried like a failed request.
    public func read(_ body: [UInt8], isbn: String) throws(TalariaDecodingError) -> CatalogLookup {
        switch self {
        case .openLibrary: return try CatalogLookup.openLibrary(body, isbn: isbn)
        case .googleBooks: return try CatalogLookup.googleBooks(body, isbn: isbn)
        }
    }
}

/// A book as a catalogue describes it. Every field but the title may be missing.
public struct CatalogRecord: Hashable, Sendable {
    public var title: String
    public var subtitle: String?
    public var authors: [String]
    public var publisher: String?
    /// "YYYY-MM-DD", "YYYY-MM" or "YYYY" (a catalogue's "March 1988" is read as "1988").
    public var publishedDate: String?
    /// Positive, or `nil`.
    public var pageCount: Int?
    public var coverURL: String?
    public var isbn10: String?

    public init(
        title: String, subtitle: String? = nil, authors: [String] = [], publisher: String? = nil,
        publishedDate: String? = nil, pageCount: Int? = nil, coverURL: String? = nil, isbn10: String? = nil
    ) {
        self.title = title
        self.subtitle = subtitle
        self.authors = authors
        self.publisher = publisher
        self.publishedDate = publishedDate
        self.pageCount = pageCount
        self.coverURL = coverURL
        self.isbn10 = isbn10
    }

    /// The title as the library shows it: "Title: Subtitle" when there is a subtitle.
    public var fullTitle: String {
        guard let subtitle, !subtitle.isEmpty else { return title }
        return "\(title): \(subtitle)"
    }
}

/// The answer of one catalogue lookup.
public enum CatalogLookup: Hashable, Sendable {
    case found(CatalogRecord)
    /// The catalogue does not know the ISBN, or knows it without a title.
    case notFound

    /// `{"ISBN:<isbn>": {title, subtitle, authors: [{name}], publishers: [{name}], publish_date,
    /// number_of_pages, cover: {small, medium, large}, identifiers: {isbn_10: [...]}}}`; `{}` when unknown.
    static func openLibrary(_ body: [UInt8], isbn: String) throws(TalariaDecodingError) -> CatalogLookup {
        let what = "Open Library's answer"
        let root = try JSONValue.parse(body, what: what)
        guard let entries = root.objectValue else {
            throw .missingField(what: what, field: "ISBN:\(isbn)", prefix: TalariaDecodingError.quotedPrefix(of: body))
        }
        // Asked for one ISBN: its key, or the only entry when the catalogue spelt the key differently.
        guard let entry = entries["ISBN:\(isbn)"] ?? (entries.count == 1 ? entries.values.first : nil),
            let title = text(entry["title"])
        else { return .notFound }
        let cover = entry["cover"]
        return .found(
            CatalogRecord(
                title: title, subtitle: text(entry["subtitle"]),
                authors: names(entry["authors"]), publisher: names(entry["publishers"]).first,
                publishedDate: date(text(entry["publish_date"])), pageCount: pages(entry["number_of_pages"]),
                coverURL: text(cover?.first("large", "medium", "small")),
                isbn10: entry["identifiers"]?["isbn_10"]?.arrayValue?.compactMap { text($0) }.first))
    }

    /// `{totalItems, items: [{volumeInfo: {title, subtitle, authors, publisher, publishedDate, pageCount,
    /// industryIdentifiers, imageLinks: {thumbnail}}}]}`; `totalItems: 0` (and no items) when unknown.
    static func googleBooks(_ body: [UInt8], isbn: String) throws(TalariaDecodingError) -> CatalogLookup {
        let what = "Google Books' answer"
        let root = try JSONValue.parse(body, what: what)
        guard root.objectValue != nil, root["items"] != nil || root["totalItems"] != nil else {
            throw .missingField(what: what, field: "totalItems", prefix: TalariaDecodingError.quotedPrefix(of: body))
        }
        let volumes = (root["items"]?.arrayValue ?? []).compactMap { $0["volumeInfo"] }
            .filter { text($0["title"]) != nil }
        // The volume that carries the ISBN asked for, else the first the search returned.
        let identifiers = { (volume: JSONValue) in
            (volume["industryIdentifiers"]?.arrayValue ?? []).compactMap { text($0["identifier"]) }
        }
        guard let volume = volumes.first(where: { identifiers($0).contains(isbn) }) ?? volumes.first,
            let title = text(volume["title"])
        else { return .notFound }
        let isbn10 = (volume["industryIdentifiers"]?.arrayValue ?? [])
            .first { text($0["type"]) == "ISBN_10" }.flatMap { text($0["identifier"]) }
        return .found(
            CatalogRecord(
                title: title, subtitle: text(volume["subtitle"]),
                authors: (volume["authors"]?.arrayValue ?? []).compactMap { text($0) },
                publisher: text(volume["publisher"]), publishedDate: date(text(volume["publishedDate"])),
                pageCount: pages(volume["pageCount"]),
                coverURL: text(volume["imageLinks"]?.first("thumbnail", "smallThumbnail")), isbn10: isbn10))
    }

    // MARK: Tolerant pieces

    /// A non-empty string, trimmed.
    private static func text(_ value: JSONValue?) -> String? {
        guard let string = value?.stringValue?.trimmed, !string.isEmpty else { return nil }
        return string
    }

    /// `[{name}]` (Open Library) or `["name"]`: the non-empty names.
    private static func names(_ value: JSONValue?) -> [String] {
        (value?.arrayValue ?? []).compactMap { text($0["name"]) ?? text($0) }
    }

    private static func pages(_ value: JSONValue?) -> Int? {
        guard let count = value?.intValue ?? value?.stringValue.flatMap({ Int($0) }), count > 0 else { return nil }
        return count
    }

    /// "1988", "1988-03", "1988-03-01" as given; otherwise the first four-digit year in the text.
    static func date(_ raw: String?) -> String? {
        guard let raw else { return nil }
        let digits = { (part: Substring, count: Int) in
            part.count == count && part.allSatisfy { $0.isASCII && $0.isNumber }
        }
        let parts = raw.split(separator: "-", omittingEmptySubsequences: false)
        if (1...3).contains(parts.count), digits(parts[0], 4), parts.dropFirst().allSatisfy({ digits($0, 2) }) {
            return raw
        }
        let characters = Array(raw)
        guard characters.count >= 4 else { return nil }
        for start in 0...(characters.count - 4) {
            let window = characters[start..<(start + 4)]
            let bounded =
                (start == 0 || !characters[start - 1].isNumber)
                && (start + 4 == characters.count || !characters[start + 4].isNumber)
            if bounded, window.allSatisfy({ $0.isASCII && $0.isNumber }) { return String(window) }
        }
        return nil
    }
}
