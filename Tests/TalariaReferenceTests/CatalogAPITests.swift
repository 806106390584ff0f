import Foundation
import Testing

@testable import TalariaReferenceServer

/// The Open Library and Google Books look-alikes the device enriches barcode-only books from.
@Suite struct CatalogAPITests {
    static let knuth = "9780201896831"

    @Test("Open Library: a known ISBN-13 or ISBN-10 answers in Open Library's shape, an unknown one is absent")
    func openLibrary() async throws {
        try await withServer { server in
            let known = try await server.request("GET", "/api/books?bibkeys=ISBN:\(Self.knuth)&format=json&jscmd=data")
            #expect(known.status == 200)
            let record = try #require(try known.json()["ISBN:\(Self.knuth)"] as? [String: Any])
            #expect(record["title"] as? String == "The Art of Computer Programming, Volume 1: Fundamental Algorithms")
            #expect((record["authors"] as? [[String: Any]])?.first?["name"] as? String == "Donald E. Knuth")
            #expect((record["publishers"] as? [[String: Any]])?.first?["name"] as? String == "Addison-Wesley")
            #expect(record["publish_date"] as? String == "1997")
            #expect(record["number_of_pages"] as? Int == 672)
            #expect((record["cover"] as? [String: Any])?["medium"] is String)

            let isbn10 = try #require(ISBN.isbn10(fromISBN13: Self.knuth))
            let byTen = try await server.request("GET", "/api/books?bibkeys=ISBN:\(isbn10)&format=json&jscmd=data")
            #expect(
                (try byTen.json()["ISBN:\(isbn10)"] as? [String: Any])?["title"] as? String == record["title"]
                    as? String)

            let unknown = try await server.request(
                "GET", "/api/books?bibkeys=ISBN:9783161484100&format=json&jscmd=data")
            #expect(unknown.status == 200)
            #expect(try unknown.json().isEmpty)
            #expect(try await server.request("GET", "/api/books").status == 400)
            let lookups = try await server.stats()["catalogLookups"] as? [String: Int]
            #expect(lookups?[Self.knuth] == 1 && lookups?["9783161484100"] == 1)
        }
    }

    @Test("Google Books: totalItems and volumeInfo with both ISBNs; an unknown ISBN is totalItems 0")
    func googleBooks() async throws {
        try await withServer { server in
            let known = try await server.request("GET", "/books/v1/volumes?q=isbn:\(Self.knuth)")
            let body = try known.json()
            #expect(body["totalItems"] as? Int == 1)
            let items = try #require(body["items"] as? [[String: Any]])
            let info = try #require(items.first?["volumeInfo"] as? [String: Any])
            #expect(info["authors"] as? [String] == ["Donald E. Knuth"])
            #expect(info["pageCount"] as? Int == 672)
            let identifiers = (info["industryIdentifiers"] as? [[String: String]]) ?? []
            #expect(identifiers.contains { $0["type"] == "ISBN_13" && $0["identifier"] == Self.knuth })
            #expect(identifiers.contains { $0["type"] == "ISBN_10" && $0["identifier"] == "0201896834" })

            let unknown = try await server.request("GET", "/books/v1/volumes?q=isbn:9783161484100")
            #expect(try unknown.json()["totalItems"] as? Int == 0)
            #expect(try await server.request("GET", "/books/v1/volumes?q=intitle:knuth").status == 400)
        }
    }

    @Test("catalog faults: 429 with Retry-After, 500, 503, HTML, malformed JSON, not found, then normal again")
    func faults() async throws {
        try await withServer { server in
            try await server.queueFaults([
                "catalog:429:7", "catalog:500", "catalog:503", "catalog:html", "catalog:malformed", "catalog:not-found",
            ])
            let path = "/books/v1/volumes?q=isbn:\(Self.knuth)"
            let limited = try await server.request("GET", path)
            #expect(limited.status == 429 && limited.header("Retry-After") == "7")
            #expect(try await server.request("GET", path).status == 500)
            #expect(try await server.request("GET", path).status == 503)
            let html = try await server.request("GET", path)
            #expect(html.status == 502 && (html.header("Content-Type") ?? "").hasPrefix("text/html"))
            let malformed = try await server.request("GET", path)
            #expect(malformed.status == 200 && malformed.object == nil)
            #expect(try await server.request("GET", path).json().isEmpty)
            #expect(try await server.request("GET", path).json()["totalItems"] as? Int == 1)
        }
    }

    @Test("catalog fault spellings parse, and a wrong one names the known ones")
    func faultSpellings() throws {
        #expect(try Fault.parse("catalog:429").action == .rateLimited(seconds: nil))
        #expect(try Fault.parse("catalog:429:30").action == .rateLimited(seconds: 30))
        #expect(try Fault.parse("catalog:not-found").action == .unknownBook)
        #expect(try Fault.parse("catalog:slow:200").action == .slow(ms: 200))
        #expect(throws: Fault.ParseError.self) { try Fault.parse("catalog:404") }
    }
}

/// Open Library's search API as the reference server answers it from its catalogue (the recognizer's open set).
@Suite struct CatalogSearchTests {
    @Test func searchFindsBooksByTitleAndAuthorWords() async throws {
        try await withServer { server in
            let found = try await server.request("GET", "/search.json?q=THE%20HOBBIT%20TOLKIEN&limit=3").json()
            let docs = try #require(found["docs"] as? [[String: Any]])
            #expect(docs.first?["title"] as? String == "The Hobbit")
            #expect(docs.first?["author_name"] as? [String] == ["J. R. R. Tolkien"])
            #expect((docs.first?["isbn"] as? [String])?.contains("9780547928227") == true)
            #expect(docs.count <= 3)
            #expect(found["numFound"] as? Int == docs.count)

            let accents = try await server.request("GET", "/search.json?q=garcia%20marquez%20soledad").json()
            #expect(
                (accents["docs"] as? [[String: Any]])?.first?["title"] as? String == "One Hundred Years of Solitude")

            let none = try await server.request("GET", "/search.json?q=zzzz%20qqqq").json()
            #expect((none["docs"] as? [Any])?.isEmpty == true && none["numFound"] as? Int == 0)
            #expect(try await server.request("GET", "/search.json").status == 400)
            #expect(
                try await server.stats()["catalogSearches"] as? [String] == [
                    "THE HOBBIT TOLKIEN", "garcia marquez soledad", "zzzz qqqq",
                ])
        }
    }
}
