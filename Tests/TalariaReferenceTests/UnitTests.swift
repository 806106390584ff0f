import Foundation
import Testing

@testable import TalariaReferenceServer

@Suite struct CatalogTests {
    @Test func catalogHasAtLeastFortyRealBooksWithValidISBNs() {
        #expect(Catalog.books.count >= 40)
        #expect(Set(Catalog.books.map(\.isbn13)).count == Catalog.books.count, "duplicate ISBN")
        for book in Catalog.books {
            #expect(ISBN.isValid13(book.isbn13), "\(book.title): \(book.isbn13) fails the ISBN-13 checksum")
            let isbn10 = ISBN.isbn10(fromISBN13: book.isbn13)
            #expect(isbn10.map(ISBN.isValid10) == true, "\(book.title): no valid ISBN-10")
            #expect(isbn10.flatMap(ISBN.isbn13) == book.isbn13)
            #expect(!book.title.isEmpty && !book.authors.isEmpty && !book.publisher.isEmpty)
            #expect((1450...2030).contains(book.year) && book.pageCount > 0)
        }
        #expect(Set(Catalog.books.map(\.format)) == [.hardcover, .paperback])
    }

    @Test func isbnChecks() {
        #expect(ISBN.isValid13("9780131103627"))
        #expect(!ISBN.isValid13("9780131103628"))
        #expect(ISBN.isValid10("020161622X"))
        #expect(!ISBN.isValid10("0201616221"))
        #expect(ISBN.isbn13("020161622X") == "9780201616224")
        let corrupted = ISBN.corrupted("9780131103627")
        #expect(corrupted.count == 13 && !ISBN.isValid13(corrupted))
        #expect(!ISBN.isValid10(ISBN.corrupted("020161622X")))
    }

    @Test func recognitionIsDeterministicAndVaried() {
        var counts = Set<Int>()
        var confidences: [Double] = []
        var sentISBN10 = 0
        var authorString = 0
        var authorArray = 0
        for i in 0..<200 {
            let image = [0xFF, 0xD8] + Array("photo \(i)".utf8)
            let books = Catalog.recognise(image)
            #expect(books == Catalog.recognise(image), "same image, different books")
            #expect((1...4).contains(books.count))
            #expect(Set(books.map(\.catalogIndex)).count == books.count, "a book twice on one image")
            counts.insert(books.count)
            for book in books {
                confidences.append(book.confidence)
                let json = book.json()
                guard case .string(let isbn)? = json["isbn"] else {
                    Issue.record("no isbn")
                    continue
                }
                if isbn.count == 10 {
                    sentISBN10 += 1
                    #expect(ISBN.isValid10(isbn))
                } else {
                    #expect(ISBN.isValid13(isbn))
                }
                if json["author"] != nil { authorString += 1 }
                if json["authors"] != nil { authorArray += 1 }
                #expect((json["publishedDate"] == nil) != (json["publicationYear"] == nil))
                #expect(json["boundingBox"] != nil && json["coverUrl"] != nil && json["enrichmentStatus"] != nil)
            }
        }
        #expect(counts == [1, 2, 3, 4])
        #expect(confidences.allSatisfy { (0.62...0.99).contains($0) })
        #expect(confidences.contains { $0 < 0.8 } && confidences.contains { $0 >= 0.8 })
        #expect(sentISBN10 > 0 && authorString > 0 && authorArray > 0)
        #expect(Catalog.recognise(jpeg("a")) != Catalog.recognise(jpeg("b")) || Catalog.recognise(jpeg("a")) != Catalog.recognise(jpeg("c")))
    }

    @Test func fnv1aKnownValues() {
        #expect(fnv1a64([UInt8]()) == 0xcbf2_9ce4_8422_2325)
        #expect(fnv1a64(Array("a".utf8)) == 0xaf63_dc4c_8601_ec8c)
    }
}

@Suite struct MultipartTests {
    @Test func boundaryFromContentType() throws {
        #expect(try Multipart.boundary(fromContentType: "multipart/form-data; boundary=abc123") == "abc123")
        #expect(try Multipart.boundary(fromContentType: "Multipart/Form-Data;boundary=\"a b;c\"") == "a b;c")
        #expect(try Multipart.boundary(fromContentType: "multipart/form-data; charset=utf-8; boundary=----x") == "----x")
        #expect(throws: MultipartError.notMultipart) { try Multipart.boundary(fromContentType: "application/json") }
        #expect(throws: MultipartError.missingBoundary) { try Multipart.boundary(fromContentType: "multipart/form-data") }
    }

    @Test func parsesPartsWithBinaryBodies() throws {
        // A body containing CRLF, "--", a near-delimiter and the boundary mid-line must come back byte for byte.
        let binary: [UInt8] = [0xFF, 0xD8, 0x0D, 0x0A, 0x2D, 0x2D, 0x58, 0x0D, 0x0A] + Array("--XY not quite, --XYZ only mid-line".utf8) + [0x00, 0xFF, 0xD9]
        let body = Multipart.build(
            boundary: "XYZ",
            parts: [
                (name: "note", filename: nil, contentType: nil, body: Array("hello".utf8)),
                (name: "photos[]", filename: "spine.jpg", contentType: "image/jpeg", body: binary),
            ])
        let parts = try Multipart.parse(Array("preamble\r\n".utf8) + body + Array("epilogue".utf8), boundary: "XYZ")
        #expect(parts.count == 2)
        #expect(parts[0].name == "note" && parts[0].body == Array("hello".utf8) && parts[0].contentType == nil)
        #expect(parts[1].name == "photos[]" && parts[1].filename == "spine.jpg" && parts[1].contentType == "image/jpeg")
        #expect(parts[1].body == binary)
    }

    @Test func acceptsBareLineFeedsAndEmptyParts() throws {
        let text = "--b\nContent-Disposition: form-data; name=\"a\"\n\n1\n--b\nContent-Disposition: form-data; name=\"e\"\n\n\n--b--\n"
        let parts = try Multipart.parse(Array(text.utf8), boundary: "b")
        #expect(parts.map(\.name) == ["a", "e"])
        #expect(parts[0].body == Array("1".utf8) && parts[1].body.isEmpty)
    }

    @Test func rejectsMalformedBodies() {
        #expect(throws: MultipartError.self) { try Multipart.parse(Array("no delimiter here".utf8), boundary: "b") }
        #expect(throws: MultipartError.self) {
            try Multipart.parse(Array("--b\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nunterminated".utf8), boundary: "b")
        }
        #expect(throws: MultipartError.self) { try Multipart.parse(Array("--b\r\nno colon\r\n\r\nx\r\n--b--".utf8), boundary: "b") }
    }
}

@Suite struct FaultParsingTests {
    @Test func parsesEveryDocumentedFault() throws {
        let spellings = [
            "upload:429-ms", "upload:429-ms:700", "upload:429-seconds", "upload:429-date:4", "upload:429-reset", "upload:429-legacy",
            "upload:500", "upload:503", "upload:401", "upload:413", "upload:400-invalid-file", "upload:html", "upload:slow:100",
            "upload:drop", "upload:envelope:stream-token", "upload:no-stream", "stream:drop-after:2", "stream:malformed",
            "stream:duplicate-terminal", "stream:results-key", "stream:complete-alias", "stream:stripped", "stream:progress-100",
            "stream:timeout-event", "stream:never-end", "stream:huge-line", "stream:failed", "stream:failed-retryable", "stream:bad-isbn",
            "stream:slow:5", "status:404", "status:500", "status:slow:5", "results:404", "results:500", "cleanup:500", "cleanup:404",
            "cleanup:slow:1",
        ]
        for spelling in spellings {
            let fault = try Fault.parse(spelling)
            #expect(fault.spelling == spelling)
        }
        #expect(try Fault.parse("stream:drop-after:3").action == .dropAfter(3))
        #expect(try Fault.parse("upload:envelope:status-only").action == .envelope(.statusOnly))
    }

    @Test func rejectsUnknownFaults() {
        for bad in ["upload", "upload:nope", "stream:500", "status:drop", "upload:slow", "upload:slow:x", "stream:drop-after",
            "upload:envelope:weird", "bogus:500", "upload:500:1"]
        {
            #expect(throws: Fault.ParseError.self, "\(bad)") { try Fault.parse(bad) }
        }
    }
}
