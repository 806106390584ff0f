import Foundation
import Testing

@testable import Talaria

@Suite("Books of the wrong shape are kept for review (docs/protocol.md §3)")
struct BookReviewReasonTests {
    private func decode(_ text: String) throws -> TalariaBook {
        let json = try JSONValue.parse(text, what: "test")
        let book = try #require(TalariaBook.decode(json).book)
        #expect(try JSONValue.parse(book.rawJSON, what: "raw") == json, "the raw JSON is kept as it came")
        return book
    }

    @Test("a well-formed book has no reason; a numeric string for pages or confidence is tolerated")
    func wellFormed() throws {
        let book = try decode(
            #"""
            {"isbn":"9780441013593","title":"Dune","authors":["Frank Herbert"],"confidence":"0.93",
             "pageCount":"412","publicationYear":1965,"enrichment":{"isbn13":"9780441013593"}}
            """#)
        #expect(book.reviewReasons == [])
        #expect(book.confidence == 0.93 && book.pageCount == 412)
    }

    @Test(
        "each field of the wrong type is named, with what it held",
        arguments: [
            (#"{"title":42,"confidence":0.9}"#, "title is a number (42), not text"),
            (#"{"title":"Dune","confidence":"high"}"#, #"confidence is text ("high"), not a number"#),
            (#"{"title":"Dune","confidence":true}"#, "confidence is true/false (true), not a number"),
            (#"{"title":"Dune","confidence":0.9,"authors":3}"#, "authors is a number (3), not a list of names"),
            (
                #"{"title":"Dune","confidence":0.9,"authors":["Frank Herbert",7]}"#,
                #"authors is a list (["Frank Herbert",7]), not a list of names"#
            ),
            (#"{"title":"Dune","confidence":0.9,"pageCount":"many"}"#, #"pageCount is text ("many"), not a number"#),
            (#"{"title":"Dune","confidence":0.9,"isbn":9780441013593}"#, "isbn is a number (9780441013593), not text"),
            (
                #"{"title":"Dune","confidence":0.9,"enrichment":{"publisher":["Ace"]}}"#,
                #"enrichment.publisher is a list (["Ace"]), not text"#
            ),
            (#"{"title":"Dune"}"#, "the backend gave no confidence"),
            (#"{"title":"Dune","confidence":null}"#, "the backend gave no confidence"),
            (#"{"title":"Dune","confidence":250}"#, "confidence 250 is not between 0 and 1"),
        ])
    func reasons(json: String, expected: String) throws {
        let book = try decode(json)
        #expect(book.reviewReasons == [expected])
    }

    @Test("a number for a title still names the book; an ISBN sent as a number still identifies it")
    func recoveredValues() throws {
        let titled = try decode(#"{"title":1984,"confidence":"high","authors":["George Orwell"]}"#)
        #expect(titled.title == "1984")
        #expect(titled.confidence == nil)
        #expect(titled.reviewReasons.count == 2)
        let counted = try decode(#"{"title":"Dune","confidence":0.9,"authors":["Frank Herbert",7,{"name":8}]}"#)
        #expect(counted.authors == ["Frank Herbert"], "numbers are not taken for names")
        #expect(try decode(#"{"title":"Dune","confidence":0.9,"authors":3}"#).authors == [])
        let numbered = try decode(#"{"title":"Dune","isbn":9780441013593,"confidence":0.9}"#)
        #expect(numbered.isbn13 == "9780441013593")
    }

    @Test("a title of no usable type, without an ISBN, is kept (nameless) rather than dropped")
    func namelessKept() throws {
        let book = try decode(#"{"title":{"en":"Dune"},"confidence":0.9}"#)
        #expect(book.title == "")
        #expect(book.reviewReasons == [#"title is an object ({"en":"Dune"}), not text"#])
        // Without any title at all it is still not a book.
        #expect(TalariaBook.decode(try JSONValue.parse(#"{"confidence":0.9}"#, what: "test")).book == nil)
    }
}
