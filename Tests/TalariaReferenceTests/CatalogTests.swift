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
        let a = Catalog.recognise(jpeg("a"))
        #expect(a != Catalog.recognise(jpeg("b")) || a != Catalog.recognise(jpeg("c")))
    }

    @Test func fnv1aKnownValues() {
        #expect(fnv1a64([UInt8]()) == 0xcbf2_9ce4_8422_2325)
        #expect(fnv1a64(Array("a".utf8)) == 0xaf63_dc4c_8601_ec8c)
    }
}
