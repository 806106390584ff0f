import Foundation
import SwiftWingCore
import Testing

@testable import Talaria

@Suite("ISBNs and books (docs/protocol.md §3)")
struct BookTests {
    @Test("ISBN-10 and ISBN-13 checksums")
    func checksums() {
        #expect(ISBN(isbn13: "9780441013593") != nil)
        #expect(ISBN(isbn13: "9780441013594") == nil)
        #expect(ISBN(isbn13: "4006381333931") == nil)  // a valid EAN-13, not a book
        #expect(ISBN(isbn13: "9791032305690") != nil)  // 979 prefix
        #expect(ISBN(isbn10: "0547928270") != nil)
        #expect(ISBN(isbn10: "080442957X") != nil)
        #expect(ISBN(isbn10: "0804429570") == nil)
        #expect(ISBN(isbn10: "X804429570") == nil)  // X only as the check digit
        #expect(ISBN(isbn10: "054792827") == nil)
    }

    @Test("normalisation to ISBN-13: hyphens, spaces, labels, x, ISBN-10 → 978; invalid and placeholders → nil")
    func normalisation() {
        #expect(ISBN("978-0-441-01359-3")?.isbn13 == "9780441013593")
        #expect(ISBN(" 978 0441 013593 ")?.isbn13 == "9780441013593")
        #expect(ISBN("ISBN-13: 978-0-441-01359-3")?.isbn13 == "9780441013593")
        #expect(ISBN("0-547-92822-x")?.isbn13 == "9780547928227")
        #expect(ISBN("0-547-92827-0")?.isbn13 == "9780547928272")
        #expect(ISBN("080442957x")?.isbn13 == "9780804429573")
        #expect(ISBN("9780441013594")?.isbn13 == nil)
        #expect(ISBN("")?.isbn13 == nil)
        #expect(ISBN("unknown")?.isbn13 == nil)
        #expect(ISBN(isbn13: "9780804429573")?.isbn10 == "080442957X")
        #expect(ISBN(isbn13: "9791032305690")?.isbn10 == nil)
    }

    @Test("a full book: every field, raw JSON kept")
    func fullBook() throws {
        let json = try JSONValue.parse(
            #"""
            {"isbn":"054792822X","title":" The Hobbit ","authors":["J. R. R. Tolkien",""],"confidence":0.79,
             "format":"hardcover","publisher":"HMH","publicationYear":2012,"pageCount":300,
             "coverUrl":"https://c.example/h.jpg","enrichmentStatus":"success",
             "boundingBox":{"x":0.1,"y":0.2,"width":0.05,"height":0.7}}
            """#, what: "test")
        let (book, warnings) = TalariaBook.decode(json)
        let hobbit = try #require(book)
        #expect(warnings.isEmpty)
        #expect(hobbit.isbn13 == "9780547928227")
        #expect(hobbit.isbn10 == "054792822X")
        #expect(hobbit.title == "The Hobbit")
        #expect(hobbit.authors == ["J. R. R. Tolkien"])
        #expect(hobbit.publishedDate == "2012")
        #expect(hobbit.pageCount == 300)
        #expect(hobbit.boundingBox == BoundingBox(x: 0.1, y: 0.2, width: 0.05, height: 0.7))
        #expect(hobbit.enrichmentStatus == "success")
        #expect(try JSONValue.parse(hobbit.rawJSON, what: "raw") == json)  // lossless
    }

    @Test("tolerance: author string, enrichment.isbn13, placeholder ISBNs, unknown status kept as sent, % confidence")
    func tolerance() throws {
        func book(_ text: String) throws -> (TalariaBook?, [TalariaWarning]) {
            TalariaBook.decode(try JSONValue.parse(text, what: "test"))
        }
        let (nested, _) = try book(
            #"{"title":"Dune","author":"Frank Herbert","isbn":null,"enrichment":{"isbn13":"9780441013593"}}"#)
        #expect(nested?.isbn13 == "9780441013593")
        #expect(nested?.authors == ["Frank Herbert"])
        let (unknown, unknownWarnings) = try book(
            #"{"title":"X","isbn":"unknown","enrichmentStatus":"brand_new","confidence":85}"#)
        #expect(unknown?.isbn13 == nil)
        #expect(unknownWarnings.isEmpty)  // "unknown" is a placeholder, not a bad ISBN
        #expect(unknown?.enrichmentStatus == "brand_new")
        #expect(unknown?.confidence == 0.85)
        let (bad, badWarnings) = try book(#"{"title":"Children of Dune","isbn":"9780441013594","confidence":-3}"#)
        #expect(bad?.isbn13 == nil)
        #expect(bad?.confidence == nil)
        #expect(badWarnings.count == 2)
        // A bad top-level ISBN, a good nested one: the good one wins, no warning.
        let (rescued, rescuedWarnings) = try book(
            #"{"title":"Dune","isbn":"123","enrichment":{"isbn13":"9780441013593"}}"#)
        #expect(rescued?.isbn13 == "9780441013593")
        #expect(rescuedWarnings.isEmpty)
        let (authorObjects, _) = try book(
            #"{"title":"Good Omens","authors":[{"name":"Terry Pratchett"},{"name":"Neil Gaiman"}]}"#)
        #expect(authorObjects?.authors == ["Terry Pratchett", "Neil Gaiman"])
        let (isbnOnly, _) = try book(#"{"isbn":"9780441013593"}"#)
        #expect(isbnOnly?.title == "")
        let (nothing, why) = try book(#"{"confidence":0.9}"#)
        #expect(nothing == nil)
        #expect(why.first?.message.contains("neither a title nor a valid ISBN") == true)
    }
}
