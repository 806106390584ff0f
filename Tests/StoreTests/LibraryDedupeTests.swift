import Foundation
import GRDB
import Testing

@testable import Store

@Suite("Library: matching books by normalised title and first author")
struct LibraryDedupeTests {
    @Test("an ISBN-less book merges into the book with the same title key and first author")
    func matchWithoutISBN() throws {
        let database = try AppDatabase.inMemory()
        let library = database.library
        let first = try library.upsertMatching(
            BookRecord(title: "The Hobbit", authors: ["J.R.R. Tolkien"], confidence: 0.5))
        let again = try library.upsertMatching(
            BookRecord(
                title: "Hobbit: or There and Back Again", authors: ["J. R. R. Tolkien"], publisher: "HMH",
                confidence: 0.9))
        #expect(again.id == first.id)
        #expect(again.publisher == "HMH")
        #expect(again.confidence == 0.9)
        #expect(try library.bookCount() == 1)
        // Another author: another book.
        try library.upsertMatching(BookRecord(title: "The Hobbit", authors: ["Somebody Else"]))
        #expect(try library.bookCount() == 2)
        #expect(
            try library.book(matching: BookMatchKey(title: "the hobbit", authors: ["j r r tolkien"])!)?.id == first.id)
    }

    @Test("an ISBN-less book matches a book that has an ISBN; a new ISBN upgrades an ISBN-less row")
    func isbnAndTitle() throws {
        let database = try AppDatabase.inMemory()
        let library = database.library
        let dune = try library.insert(BookRecord(isbn13: "9780441013593", title: "Dune", authors: ["Frank Herbert"]))
        let sighting = try library.upsertMatching(
            BookRecord(title: "Dune", authors: ["Frank Herbert"], format: "paperback"))
        #expect(sighting.id == dune.id)
        #expect(sighting.isbn13 == "9780441013593")
        #expect(sighting.format == "paperback")

        let emma = try library.upsertMatching(BookRecord(title: "Emma", authors: ["Jane Austen"]))
        let withISBN = try library.upsertMatching(
            BookRecord(isbn13: "9780141439587", title: "Emma", authors: ["Jane Austen"]))
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
        let books = [
            BookRecord(title: "EMMA", authors: ["jane austen"], confidence: 0.95), BookRecord(title: "Persuasion"),
        ]
        let (done, saved) = try database.completeScanMatchingTitles(scan.id, books: books)
        #expect(done.state == .done)
        #expect(done.jobToken == nil)
        #expect(saved.count == 2)
        #expect(try database.library.bookCount() == 2)
        let (_, again) = try database.completeScanMatchingTitles(scan.id, books: books)
        #expect(again.map(\.title).sorted() == ["EMMA", "Persuasion"])
        #expect(try database.library.bookCount() == 2)
    }

    @Test("ASCII titles and authors get the same key on bytes as on Characters (seeded, 5,000 texts)")
    func asciiRuleAgrees() {
        // Letters of both cases, digits, the separators, the articles, apostrophes, CR LF and other punctuation.
        let pieces = [
            "The", "the", "A", "a", "An", "an", "Dune", "HOBBIT", "j.r.r.", "tolkien", "9", "1984", " ", "  ", ":",
            " - ", "-", "(", ")", "[", "]", "'", "'s", ".", ",", "&", "!", "\r\n", "\n", "\t", "=", "\"", "_", "@",
        ]
        var state: UInt64 = 0x5EED
        func next(_ bound: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((state >> 33) % UInt64(bound))
        }
        for _ in 0..<5_000 {
            let text = (0..<next(9)).map { _ in pieces[next(pieces.count)] }.joined()
            #expect(BookMatchKey.normaliseTitle(text) == BookMatchKey.normaliseTitleByCharacters(text), "\(text)")
            #expect(BookMatchKey.normaliseAuthor(text) == BookMatchKey.normaliseAuthorByCharacters(text), "\(text)")
        }
        #expect(BookMatchKey.normaliseTitle("The Hobbit: or There and Back Again") == "hobbit")
        #expect(BookMatchKey.normaliseTitle("Cien años de soledad (Spanish)") == "cien años de soledad")
    }

    @Test("a job's books committed together become the rows they become one by one, matching each other too")
    func batchEqualsOneByOne() throws {
        let stored = [
            BookRecord(title: "Emma", authors: ["Jane Austen"]),
            BookRecord(isbn13: "9780441013593", title: "Dune", authors: ["Frank Herbert"]),
            BookRecord(title: "The Hobbit", authors: ["J.R.R. Tolkien"], confidence: 0.5),
        ]
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let incoming = [
            BookRecord(title: "Persuasion", authors: ["Jane Austen"], confidence: 0.6),  // new
            BookRecord(title: "PERSUASION: A Novel", authors: ["jane austen"], publisher: "P"),  // the one before
            BookRecord(isbn13: "9780141439518", title: "Persuasion", authors: ["Jane Austen"]),  // gives it the ISBN
            BookRecord(isbn13: "9780141439518", title: "Persuasion", pageCount: 249),  // by that ISBN
            BookRecord(title: "Emma", authors: ["Jane Austen"], format: "paperback"),  // a stored one
            BookRecord(title: "Dune", authors: ["Frank Herbert"]),  // the stored book with an ISBN
            BookRecord(isbn13: "9780547928227", title: "Hobbit", authors: ["J. R. R. Tolkien"]),  // to a stored one
            BookRecord(isbn13: "9780547928272", title: "Kim"),  // new, with ISBN
            BookRecord(title: "Kim", format: "hardcover"),  // the one before, by key, keyed by its ISBN
            BookRecord(title: "!!!"),  // no key: new
            BookRecord(title: "!!!"),  // no key: new again
            BookRecord(title: "Another", authors: ["Writer"]),  // new
        ]
        func library(
            _ commit: (AppDatabase, UUID) throws -> [BookRecord]
        ) throws -> (rows: [Row], saved: [BookRecord]) {
            let database = try AppDatabase.inMemory()
            for book in stored { try database.library.insert(book) }
            let scan = try database.queue.enqueue(newScan())
            let saved = try commit(database, scan.id)
            let rows = try database.writer.read { db in
                try Row.fetchAll(db, sql: "SELECT * FROM book ORDER BY id")
            }
            #expect(try database.library.searchBooks(matching: "persuasion").map(\.title) == ["Persuasion"])
            try database.writer.write { db in
                try db.execute(sql: "INSERT INTO book_ft (book_ft) VALUES ('integrity-check')")
            }
            return (rows, saved)
        }
        let together = try library { database, scan in
            try database.queue.markUploading(scan)
            try database.queue.recordJob(scan, jobID: "j", streamURL: nil, statusURL: nil, jobToken: nil)
            return try database.completeScanMatchingTitles(scan, books: incoming, now: now).books
        }
        let oneByOne = try library { database, scan in
            try incoming.map { book in
                var linked = book
                (linked.scanID, linked.addedAt, linked.updatedAt) = (scan, now, now)
                return try database.library.upsertMatching(linked, now: now)
            }
        }
        #expect(together.rows.count == 3 + 5)
        #expect(together.rows.map { $0.removingScanID() } == oneByOne.rows.map { $0.removingScanID() })
        #expect(together.saved.map(\.id) == oneByOne.saved.map(\.id))
        #expect(together.saved.map(\.title) == oneByOne.saved.map(\.title))
        #expect(together.saved.map(\.isbn13) == oneByOne.saved.map(\.isbn13))
    }
}

extension Row {
    /// The row without its scan id (each library of the comparison has its own scan).
    fileprivate func removingScanID() -> [String: DatabaseValue] {
        var values: [String: DatabaseValue] = [:]
        for (column, value) in self where column != "scanId" { values[column] = value }
        return values
    }
}
