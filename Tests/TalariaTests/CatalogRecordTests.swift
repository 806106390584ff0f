import Foundation
import Testing

@testable import Talaria

@Suite("Book catalogue answers: Open Library's ISBN API and Google Books' volumes API")
struct CatalogRecordTests {
    // Recorded in the shape each service answers, trimmed to the fields read plus some they add.
    static let openLibrary = #"""
        {"ISBN:9780131103627": {"url": "https://openlibrary.org/books/OL2030327M/The_C_programming_language",
        "key": "/books/OL2030327M", "title": "The C programming language", "subtitle": "ANSI C",
        "authors": [{"url": "https://openlibrary.org/authors/OL1819940A", "name": "Brian W. Kernighan"},
        {"url": "https://openlibrary.org/authors/OL1820020A/Dennis_M._Ritchie", "name": "Dennis M. Ritchie"}],
        "number_of_pages": 272, "identifiers": {"isbn_10": ["0131103628"], "isbn_13": ["9780131103627"]},
        "publishers": [{"name": "Prentice Hall"}], "publish_date": "1988",
        "subjects": [{"name": "C (Computer program language)", "url": "https://openlibrary.org/subjects/c"}],
        "cover": {"small": "https://covers.openlibrary.org/b/id/1-S.jpg",
        "medium": "https://covers.openlibrary.org/b/id/1-M.jpg",
        "large": "https://covers.openlibrary.org/b/id/1-L.jpg"}}}
        """#

    static let googleBooks = #"""
        {"kind": "books#volumes", "totalItems": 2, "items": [
        {"kind": "books#volume", "id": "x1", "volumeInfo": {"title": "Other Edition",
        "industryIdentifiers": [{"type": "ISBN_13", "identifier": "9999999999999"}]}},
        {"kind": "books#volume", "id": "161", "volumeInfo": {"title": "The C Programming Language",
        "authors": ["Brian W. Kernighan", "Dennis M. Ritchie"], "publisher": "Prentice Hall",
        "publishedDate": "1988-03-22", "pageCount": 272, "printType": "BOOK",
        "industryIdentifiers": [{"type": "ISBN_10", "identifier": "0131103628"},
        {"type": "ISBN_13", "identifier": "9780131103627"}],
        "imageLinks": {"smallThumbnail": "http://books.google.com/s.jpg", "thumbnail": "http://books.google.com/t.jpg"},
        "language": "en"}}]}
        """#

    @Test("Open Library: title with subtitle, author and publisher names, pages, year, large cover, ISBN-10")
    func openLibraryRecord() throws {
        let lookup = try CatalogProvider.openLibrary.read(Array(Self.openLibrary.utf8), isbn: "9780131103627")
        #expect(
            lookup
                == .found(
                    CatalogRecord(
                        title: "The C programming language", subtitle: "ANSI C",
                        authors: ["Brian W. Kernighan", "Dennis M. Ritchie"], publisher: "Prentice Hall",
                        publishedDate: "1988", pageCount: 272, coverURL: "https://covers.openlibrary.org/b/id/1-L.jpg",
                        isbn10: "0131103628")))
        if case .found(let record) = lookup { #expect(record.fullTitle == "The C programming language: ANSI C") }
    }

    @Test("Google Books: the volume carrying the ISBN asked for, not the first one")
    func googleBooksRecord() throws {
        let lookup = try CatalogProvider.googleBooks.read(Array(Self.googleBooks.utf8), isbn: "9780131103627")
        #expect(
            lookup
                == .found(
                    CatalogRecord(
                        title: "The C Programming Language", authors: ["Brian W. Kernighan", "Dennis M. Ritchie"],
                        publisher: "Prentice Hall", publishedDate: "1988-03-22", pageCount: 272,
                        coverURL: "http://books.google.com/t.jpg", isbn10: "0131103628")))
    }

    @Test("unknown ISBNs: Open Library's {} and Google Books' totalItems 0 are not found")
    func unknown() throws {
        #expect(try CatalogProvider.openLibrary.read(Array("{}".utf8), isbn: "9780000000002") == .notFound)
        #expect(
            try CatalogProvider.googleBooks.read(
                Array(#"{"kind": "books#volumes", "totalItems": 0}"#.utf8), isbn: "9780000000002") == .notFound)
        // Another ISBN's entry alongside is not taken for the one asked.
        let two = #"{"ISBN:1": {"title": "A"}, "ISBN:2": {"title": "B"}}"#
        #expect(try CatalogProvider.openLibrary.read(Array(two.utf8), isbn: "9780000000002") == .notFound)
    }

    @Test("an entry without a title is not found; missing or odd fields are left empty")
    func missingFields() throws {
        let untitled = #"{"ISBN:9780131103627": {"publishers": [{"name": "X"}]}}"#
        #expect(try CatalogProvider.openLibrary.read(Array(untitled.utf8), isbn: "9780131103627") == .notFound)
        let sparse = #"""
            {"ISBN:9780131103627": {"title": "  Sparse  ", "authors": [{"name": ""}, {"url": "u"}],
            "number_of_pages": 0, "publish_date": "March 1988", "cover": null, "publishers": "not a list"}}
            """#
        #expect(
            try CatalogProvider.openLibrary.read(Array(sparse.utf8), isbn: "9780131103627")
                == .found(CatalogRecord(title: "Sparse", publishedDate: "1988")))
        let volume = #"""
            {"totalItems": 1, "items": [{"volumeInfo": {"title": "T", "pageCount": "310", "authors": "A"}}]}
            """#
        #expect(
            try CatalogProvider.googleBooks.read(Array(volume.utf8), isbn: "9780131103627")
                == .found(CatalogRecord(title: "T", pageCount: 310)))
    }

    @Test("malformed bodies throw: cut-off JSON, an HTML page, JSON of another shape")
    func malformed() {
        let cut = #"{"ISBN:9780131103627": {"title": "Unterminat"#
        #expect(throws: TalariaDecodingError.self) {
            try CatalogProvider.openLibrary.read(Array(cut.utf8), isbn: "9780131103627")
        }
        #expect(throws: TalariaDecodingError.self) {
            try CatalogProvider.googleBooks.read(Array("<html><body>502</body></html>".utf8), isbn: "9780131103627")
        }
        #expect(throws: TalariaDecodingError.self) {
            try CatalogProvider.openLibrary.read(Array("[1, 2]".utf8), isbn: "9780131103627")
        }
        #expect(throws: TalariaDecodingError.self) {
            try CatalogProvider.googleBooks.read(Array(#"{"error": "quota"}"#.utf8), isbn: "9780131103627")
        }
    }

    @Test("dates: YYYY, YYYY-MM, YYYY-MM-DD kept; the year taken from free text; none from nothing")
    func dates() {
        #expect(CatalogLookup.date("1988") == "1988")
        #expect(CatalogLookup.date("1988-03") == "1988-03")
        #expect(CatalogLookup.date("1988-03-22") == "1988-03-22")
        #expect(CatalogLookup.date("March 22, 1988") == "1988")
        #expect(CatalogLookup.date("c1988.") == "1988")
        #expect(CatalogLookup.date("12345") == nil)
        #expect(CatalogLookup.date("n.d.") == nil)
    }

    @Test("lookup URLs: each provider's path and query, a base path kept")
    func urls() {
        let openLibrary = CatalogProvider.openLibrary.lookupURL(
            isbn: "9780131103627", base: URL(string: "http://127.0.0.1:8080/")!)
        #expect(
            openLibrary.absoluteString
                == "http://127.0.0.1:8080/api/books?bibkeys=ISBN:9780131103627&format=json&jscmd=data")
        let google = CatalogProvider.googleBooks.lookupURL(
            isbn: "9780131103627", base: URL(string: "https://proxy.example/catalogue")!)
        #expect(google.absoluteString == "https://proxy.example/catalogue/books/v1/volumes?q=isbn:9780131103627")
    }
}
