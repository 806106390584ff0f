import Foundation
import Testing

@testable import Store

@Suite("Library and full-text search")
struct LibraryTests {
    private func sampleLibrary() throws -> AppDatabase {
        let database = try AppDatabase.inMemory()
        try database.library.insert(BookRecord(isbn13: "9780441013593", title: "Dune", authors: ["Frank Herbert"]))
        try database.library.insert(
            BookRecord(
                isbn13: "9780547928227", isbn10: "0547928270", title: "The Hobbit", authors: ["J. R. R. Tolkien"]))
        try database.library.insert(BookRecord(title: "Le Petit Prince", authors: ["Antoine de Saint-Exupéry"]))
        return database
    }

    @Test("search finds a book by a word of the title, by author, by ISBN")
    func search() throws {
        let library = try sampleLibrary().library
        #expect(try library.searchBooks(matching: "hobbit").map(\.title) == ["The Hobbit"])
        #expect(try library.searchBooks(matching: "HERBERT").map(\.title) == ["Dune"])
        #expect(try library.searchBooks(matching: "tolk").map(\.title) == ["The Hobbit"])  // prefix
        #expect(try library.searchBooks(matching: "9780441013593").map(\.title) == ["Dune"])
        #expect(try library.searchBooks(matching: "978-0-547-92822-7").map(\.title) == ["The Hobbit"])
        #expect(try library.searchBooks(matching: "0547928270").map(\.title) == ["The Hobbit"])
        #expect(try library.searchBooks(matching: "exupery").map(\.title) == ["Le Petit Prince"])  // diacritics
        #expect(try library.searchBooks(matching: "hobbit tolkien").map(\.title) == ["The Hobbit"])
        #expect(try library.searchBooks(matching: "hobbit herbert").isEmpty)
        #expect(try library.searchBooks(matching: "").isEmpty)
        #expect(try library.searchBooks(matching: "\"(*").isEmpty)
    }

    @Test("upsert by ISBN-13 merges into the existing row and the index follows")
    func upsert() throws {
        let database = try sampleLibrary()
        let before = try #require(try database.library.book(isbn13: "9780441013593"))
        let merged = try database.library.upsert(
            BookRecord(
                isbn13: "9780441013593", title: "Dune (Deluxe Edition)", publisher: "Ace", confidence: 0.9))
        #expect(merged.id == before.id)
        #expect(merged.authors == ["Frank Herbert"])  // kept: the new record had none
        #expect(merged.publisher == "Ace")
        #expect(merged.addedAt == before.addedAt)
        #expect(try database.library.bookCount() == 3)
        #expect(try database.library.searchBooks(matching: "deluxe").map(\.id) == [before.id])

        let fresh = try database.library.upsert(
            BookRecord(isbn13: "9780261103573", title: "The Fellowship of the Ring"))
        #expect(fresh.id != nil)
        #expect(try database.library.bookCount() == 4)
    }

    @Test("completing a scan adds its books and marks it done, once")
    func completeScan() throws {
        let database = try sampleLibrary()
        let scan = try database.queue.enqueue(newScan())
        try database.queue.markUploading(scan.id)
        try database.queue.recordJob(scan.id, jobID: "job-1", streamURL: "/s", statusURL: nil, jobToken: "secret")
        let books = [
            BookRecord(isbn13: "9780441013593", title: "Dune", confidence: 0.95),
            BookRecord(title: "Unknown Spine", confidence: 0.4),
        ]
        let (done, saved) = try database.completeScan(scan.id, books: books)
        #expect(done.state == .done)
        #expect(done.progress == 1)
        #expect(done.jobToken == nil)
        #expect(saved.count == 2)
        #expect(try database.library.bookCount() == 4)  // Dune merged, one new
        // Dune had no scan link (added by hand), so it takes this scan's; a first link is never replaced.
        #expect(try database.library.books(fromScan: scan.id).map(\.title) == ["Dune", "Unknown Spine"])

        // The terminal event arrives again: nothing is added twice.
        let (again, _) = try database.completeScan(scan.id, books: books)
        #expect(again.state == .done)
        #expect(try database.library.bookCount() == 4)
    }
}
