import Foundation
import Hummingbird
import NIOCore

/// The two public book catalogues the device completes barcode-only books from, answered from ``Catalog``:
/// Open Library's ISBN API and Google Books' volumes API, in their own response shapes, with the
/// `catalog:` faults. Point the device's `enrichment.base_url` at this server to use them.
extension Handlers {
    /// `GET /api/books?bibkeys=ISBN:<isbn>[,ISBN:<isbn>…]&format=json&jscmd=data` → `{"ISBN:<isbn>": {...}}`;
    /// an unknown ISBN is simply absent (`{}` when none is known), as Open Library does.
    func openLibraryBooks(_ request: Request, _ context: Context) async throws -> Response {
        let keys = (request.uri.queryParameters.get("bibkeys") ?? "").split(separator: ",").map(String.init)
        guard !keys.isEmpty else {
            return Self.catalogError(400, "bibkeys is required, e.g. bibkeys=ISBN:9780131103627")
        }
        let isbns = keys.map { $0.hasPrefix("ISBN:") ? String($0.dropFirst(5)) : $0 }
        if let response = try await catalogFault(for: isbns, context) { return response }
        var found: [String: JSONValue] = [:]
        for (key, isbn) in zip(keys, isbns) {
            if let book = Catalog.book(isbn: isbn) { found[key] = Self.openLibraryRecord(book) }
        }
        return ReferenceServer.json(200, .object(found))
    }

    /// `GET /search.json?q=<words>[&limit=N]` → `{"numFound", "start", "docs": [{"key", "title", "author_name", "isbn",
    /// "first_publish_year"}]}`, as Open Library's search API answers: the catalogue's books holding at least half
    /// of the query's words (title and authors, case and accents ignored), the most words first.
    func openLibrarySearch(_ request: Request, _ context: Context) async throws -> Response {
        let query = request.uri.queryParameters.get("q") ?? ""
        let limit = request.uri.queryParameters.get("limit").flatMap { Int($0) } ?? 100
        guard !query.trimmingCharacters(in: .whitespaces).isEmpty else {
            return Self.catalogError(400, "q is required, e.g. q=the+hobbit+tolkien")
        }
        await state.countCatalogSearch(query)
        if let response = try await catalogFault(for: [], context) { return response }
        let docs = Catalog.search(query).prefix(max(0, limit)).map { book, _ in Self.openLibraryDoc(book) }
        return ReferenceServer.json(
            200,
            [
                "numFound": .int(docs.count), "start": 0, "numFoundExact": true, "q": .string(query),
                "docs": .array(Array(docs)),
            ])
    }

    static func openLibraryDoc(_ book: CatalogBook) -> JSONValue {
        var isbns: [JSONValue] = [.string(book.isbn13)]
        if let isbn10 = ISBN.isbn10(fromISBN13: book.isbn13) { isbns.append(.string(isbn10)) }
        return [
            "key": .string("/works/OL\(fnv1a64(Array(book.isbn13.utf8)) % 10_000_000)W"),
            "title": .string(book.title),
            "author_name": .array(book.authors.map { .string($0) }),
            "isbn": .array(isbns),
            "first_publish_year": .int(book.year),
            "publisher": [.string(book.publisher)],
        ]
    }

    /// `GET /books/v1/volumes?q=isbn:<isbn>` → `{"kind": "books#volumes", "totalItems": n, "items": [...]}`.
    func googleBooksVolumes(_ request: Request, _ context: Context) async throws -> Response {
        let query = request.uri.queryParameters.get("q") ?? ""
        guard query.hasPrefix("isbn:"), query.count > 5 else {
            return Self.catalogError(400, "q=isbn:<ISBN> is the only query this catalogue answers")
        }
        let isbn = String(query.dropFirst(5))
        if let response = try await catalogFault(for: [isbn], context) { return response }
        guard let book = Catalog.book(isbn: isbn) else {
            return ReferenceServer.json(200, ["kind": "books#volumes", "totalItems": 0])
        }
        return ReferenceServer.json(
            200, ["kind": "books#volumes", "totalItems": 1, "items": [Self.googleBooksVolume(book)]])
    }

    /// Counts the lookup, then applies the next `catalog:` faults; `nil` means answer normally.
    private func catalogFault(for isbns: [String], _ context: Context) async throws -> Response? {
        for isbn in isbns { await state.countCatalogLookup(isbn) }
        let faults = await state.takeFaults(.catalog)
        for case .slow(let ms) in faults { try await Task.sleep(for: configuration.scaled(ms)) }
        for fault in faults {
            switch fault {
            case .drop:
                try? await context.channel.close()
                throw ConnectionDropped()
            case .rateLimited(let seconds):
                return Self.catalogError(429, "Rate Limit Exceeded", headers: [.retryAfter: String(seconds ?? 2)])
            case .http500: return Self.catalogError(500, "Backend Error")
            case .http503: return Self.catalogError(503, "Service Unavailable", headers: [.retryAfter: "1"])
            case .html:
                return Response(
                    status: .badGateway, headers: [.contentType: "text/html; charset=utf-8"],
                    body: .init(byteBuffer: ByteBuffer(string: "<html><body><h1>502 Bad Gateway</h1></body></html>\n")))
            case .malformed:
                return Response(
                    status: .ok, headers: [.contentType: "application/json"],
                    body: .init(byteBuffer: ByteBuffer(string: "{\"ISBN:\(isbns[0])\": {\"title\": \"Unterminat")))
            case .unknownBook:
                return ReferenceServer.json(200, [:])
            default: continue
            }
        }
        return nil
    }

    /// Errors in the shape both catalogues use: `{"error": {"code", "message"}}`.
    private static func catalogError(_ status: Int, _ message: String, headers: HTTPFields = [:]) -> Response {
        ReferenceServer.json(status, ["error": ["code": .int(status), "message": .string(message)]], headers: headers)
    }

    static func openLibraryRecord(_ book: CatalogBook) -> JSONValue {
        var identifiers: [String: JSONValue] = ["isbn_13": [.string(book.isbn13)]]
        if let isbn10 = ISBN.isbn10(fromISBN13: book.isbn13) { identifiers["isbn_10"] = [.string(isbn10)] }
        let cover = "https://covers.openlibrary.org/b/isbn/\(book.isbn13)"
        return [
            "title": .string(book.title),
            "authors": .array(book.authors.map { ["name": .string($0)] }),
            "publishers": [["name": .string(book.publisher)]],
            "publish_date": .string(String(book.year)),
            "number_of_pages": .int(book.pageCount),
            "identifiers": .object(identifiers),
            "cover": [
                "small": .string(cover + "-S.jpg"), "medium": .string(cover + "-M.jpg"),
                "large": .string(cover + "-L.jpg"),
            ],
        ]
    }

    static func googleBooksVolume(_ book: CatalogBook) -> JSONValue {
        var identifiers: [JSONValue] = [["type": "ISBN_13", "identifier": .string(book.isbn13)]]
        if let isbn10 = ISBN.isbn10(fromISBN13: book.isbn13) {
            identifiers.append(["type": "ISBN_10", "identifier": .string(isbn10)])
        }
        return [
            "kind": "books#volume",
            "volumeInfo": [
                "title": .string(book.title),
                "authors": .array(book.authors.map { .string($0) }),
                "publisher": .string(book.publisher),
                "publishedDate": .string(String(book.year)),
                "pageCount": .int(book.pageCount),
                "printType": "BOOK",
                "industryIdentifiers": .array(identifiers),
                "imageLinks": ["thumbnail": .string("https://books.google.com/books/content?vid=ISBN\(book.isbn13)")],
            ],
        ]
    }
}
