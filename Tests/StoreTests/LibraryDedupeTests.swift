import Foundation
import Testing

@testable import Store

@Suite("Library: matching books by normalised title and first author")
struct LibraryDedupeTests {
    @Test("an ISBN-less book merges into the book with the same title key and first author")
    func matchWithoutISBN() throws {
        let database = try AppDatabase.inMemory()
        let library = database.library
        let first = try library.upsertMatching(BookRecord(title: "The Hobbit", authors: ["J.R.R. Tolkien"], confidence: 0.5))
        let again = try library.upsertMatching(BookRecord(
            title: "Hobbit: or There and Back Again", authors: ["J. R. R. Tolkien"], publisher: "HMH", confidence: 0.9))
        #expect(again.id == first.id)
        #expect(again.publisher == "HMH")
        #expect(again.confidence == 0.9)
        #expect(try library.bookCount() == 1)
        // Another author: another book.
        try library.upsertMatching(BookRecord(title: "The Hobbit", authors: ["Somebody Else"]))
        #expect(try library.bookCount() == 2)
        #expect(try library.book(matching: BookMatchKey(title: "the hobbit", authors: ["j r r tolkien"])!)?.id == first.id)
    }

    @Test("an ISBN-less book matches a book that has an ISBN; a new ISBN upgrades an ISBN-less row")
    func isbnAndTitle() throws {
        let database = try AppDatabase.inMemory()
        let library = database.library
        let dune = try library.insert(BookRecord(isbn13: "9780441013593", title: "Dune", authors: ["Frank Herbert"]))
        let sighting = try library.upsertMatching(BookRecord(title: "Dune", authors: ["Frank Herbert"], format: "paperback"))
        #expect(sighting.id == dune.id)
        #expect(sighting.isbn13 == "9780441013593")
        #expect(sighting.format == "paperback")

        let emma = try library.upsertMatching(BookRecord(title: "Emma", authors: ["Jane Austen"]))
        let withISBN = try library.upsertMatching(BookRecord(isbn13: "9780141439587", title: "Emma", authors: ["Jane Austen"]))
        #expect(withISBN.id == emma.id)
        #expect(try library.book(isbn13: "9780141439587")?.id == emma.id)
        // A second edition with another ISBN stays a separate book (the first row already has an ISBN).
        try library.upsertMatching(BookRecord(isbn13: "9780593099322", title: "Dune", authors: ["Frank Herbert"]))
        #expect(try library.bookCount() == 3)
    }

    @Test("plain upsert is unchanged: ISBN-less books are still inserted")
    func existingBehaviourKept() throws {
        let database = try AppDatabase.inMemory()
        try database.library.upsert(BookRecord(title: "Emma", authors: ["Jane Austen"]))
        try database.library.upsert(BookRecord(title: "Emma", authors: ["Jane Austen"]))
        #expect(try database.library.bookCount() == 2)
    }

    @Test("completing a scan with title matching is one transaction and idempotent")
    func completeScan() throws {
        let database = try AppDatabase.inMemory()
        try database.library.insert(BookRecord(title: "Emma", authors: ["Jane Austen"]))
        let scan = try database.queue.enqueue(newScan())
        try database.queue.markUploading(scan.id)
        try database.queue.recordJob(scan.id, jobID: "j", streamURL: nil, statusURL: nil, jobToken: "t")
        let books = [BookRecord(title: "EMMA", authors: ["jane austen"], confidence: 0.95), BookRecord(title: "Persuasion")]
        let (done, saved) = try database.completeScanMatchingTitles(scan.id, books: books)
        #expect(done.state == .done)
        #expect(done.jobToken == nil)
        #expect(saved.count == 2)
        #expect(try database.library.bookCount() == 2)
        let (_, again) = try database.completeScanMatchingTitles(scan.id, books: books)
        #expect(again.map(\.title).sorted() == ["EMMA", "Persuasion"])
        #expect(try database.library.bookCount() == 2)
    }
}
