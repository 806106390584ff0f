import Foundation
import GRDB
import Testing

@testable import Store

@Suite("Library review and a person's changes")
struct LibraryReviewTests {
    private func storedNeedsReview(_ database: AppDatabase, _ id: Int64?) throws -> Bool? {
        try database.writer.read { db in
            try Bool.fetchOne(db, sql: "SELECT needsReview FROM book WHERE id = ?", arguments: [id])
        }
    }

    @Test(
        "a review reason makes SQLite flag the book; a person's review ends it",
        arguments: [
            (0.95 as Double?, "title is a number (42), not text" as String?, true),
            (nil, "the backend gave no confidence", true),
            (0.95, nil, false),
            (0.5, nil, true),
        ])
    func reasonFlags(confidence: Double?, reason: String?, expected: Bool) throws {
        let database = try AppDatabase.inMemory()
        let book = try database.library.insert(BookRecord(title: "T", confidence: confidence, reviewReason: reason))
        #expect(try storedNeedsReview(database, book.id) == expected)
        #expect(book.needsReview == expected)
        let approved = try database.library.approve(id: book.id!, now: Date(timeIntervalSince1970: 2_000_000_000))
        #expect(try storedNeedsReview(database, book.id) == false)
        #expect(!approved.needsReview)
        #expect(approved.reviewedAt == Date(timeIntervalSince1970: 2_000_000_000))
        #expect(approved.reviewReason == reason, "the reason stays, for the record")
    }

    @Test("an empty review reason is refused by the schema")
    func emptyReason() throws {
        let database = try AppDatabase.inMemory()
        #expect(throws: StoreError.self) { try database.library.insert(BookRecord(title: "T", reviewReason: "")) }
    }

    @Test("edit changes title, authors and ISBN in one go and approves; --needs-review keeps it listed")
    func correct() throws {
        let database = try AppDatabase.inMemory()
        let book = try database.library.insert(
            BookRecord(title: "42", confidence: 0.4, rawJSON: #"{"title":42}"#, reviewReason: "title is a number"))
        let edited = try database.library.correct(
            id: book.id!,
            BookCorrection(title: "Dune", authors: ["Frank Herbert"], isbn13: "9780441013593", isbn10: "0441013597"))
        let stored = try #require(try database.library.book(id: book.id!))
        #expect(stored.id == edited.id && stored.title == edited.title && stored.reviewedAt != nil)
        #expect(stored.title == "Dune" && stored.authors == ["Frank Herbert"])
        #expect(stored.isbn13 == "9780441013593" && stored.isbn10 == "0441013597")
        #expect(stored.rawJSON == #"{"title":42}"#, "the backend's JSON is kept as it came")
        #expect(try storedNeedsReview(database, book.id) == false)
        #expect(try database.library.searchBooks(matching: "herbert").map(\.id) == [book.id])

        let again = try database.library.correct(id: book.id!, BookCorrection(keepForReview: true))
        #expect(again.reviewedAt == nil)
        #expect(try storedNeedsReview(database, book.id) == true)
        #expect(try database.library.books(needingReviewOnly: true).map(\.id) == [book.id])
    }

    @Test("a person asking to review a confident book again gives it a reason")
    func reviewAgain() throws {
        let database = try AppDatabase.inMemory()
        let book = try database.library.insert(BookRecord(title: "Sure", confidence: 0.99))
        let again = try database.library.correct(id: book.id!, BookCorrection(keepForReview: true))
        #expect(again.reviewReason == personAskedForReview)
        #expect(try storedNeedsReview(database, book.id) == true)
    }

    @Test("an ISBN another book has is refused with that book's id; nothing changes")
    func isbnTaken() throws {
        let database = try AppDatabase.inMemory()
        let dune = try database.library.insert(BookRecord(isbn13: "9780441013593", title: "Dune"))
        let other = try database.library.insert(BookRecord(title: "Dune?", confidence: 0.3))
        #expect(throws: StoreError.isbnTaken(isbn13: "9780441013593", bookID: dune.id!)) {
            try database.library.correct(id: other.id!, BookCorrection(title: "Dune", isbn13: "9780441013593"))
        }
        #expect(try database.library.book(id: other.id!)?.title == "Dune?")
        #expect(try database.library.book(id: other.id!)?.needsReview == true)
        // The book's own ISBN again is fine.
        try database.library.correct(id: dune.id!, BookCorrection(isbn13: "9780441013593", isbn10: "0441013597"))
    }

    @Test("delete removes the book and its search entry; an unknown id is named")
    func delete() throws {
        let database = try AppDatabase.inMemory()
        let book = try database.library.insert(BookRecord(title: "Gone Girl", authors: ["Gillian Flynn"]))
        let kept = try database.library.insert(BookRecord(title: "Gone with the Wind"))
        #expect(try database.library.delete(id: book.id!).title == "Gone Girl")
        #expect(try database.library.book(id: book.id!) == nil)
        #expect(try database.library.searchBooks(matching: "gone").map(\.id) == [kept.id])
        #expect(throws: StoreError.bookNotFound(book.id!)) { try database.library.delete(id: book.id!) }
        #expect(throws: StoreError.bookNotFound(999)) {
            try database.library.correct(id: 999, BookCorrection(title: "x"))
        }
    }

    @Test("a new sighting of a reviewed book fills its gaps and keeps what the person saw")
    func reviewedBookKeepsPersonsFields() throws {
        let database = try AppDatabase.inMemory()
        let book = try database.library.insert(BookRecord(isbn13: "9780441013593", title: "Dune", confidence: 0.5))
        try database.library.correct(
            id: book.id!, BookCorrection(title: "Dune (corrected)", authors: ["Frank Herbert"]))
        let seen = try database.library.upsert(
            BookRecord(
                isbn13: "9780441013593", title: "DUNE", authors: ["F. Herbert"], publisher: "Ace", confidence: 0.3,
                reviewReason: "pageCount is text"))
        #expect(seen.title == "Dune (corrected)" && seen.authors == ["Frank Herbert"])
        #expect(seen.publisher == "Ace")
        #expect(!seen.needsReview)
        #expect(try storedNeedsReview(database, book.id) == false)
    }

    @Test("a book a person edited keeps the edit when sighted again while it waits for a second review")
    func editedBookUnderReviewKeepsEdit() throws {
        let database = try AppDatabase.inMemory()
        let book = try database.library.insert(BookRecord(isbn13: "9780441013593", title: "DUNE", confidence: 0.5))
        try database.library.correct(id: book.id!, BookCorrection(title: "Dune", keepForReview: true))
        let seen = try database.library.upsert(BookRecord(isbn13: "9780441013593", title: "DUNE", confidence: 0.5))
        #expect(seen.title == "Dune")
        #expect(seen.editedAt != nil && seen.needsReview)
    }

    @Test("an unreviewed book merges the reasons of both sightings")
    func mergeReasons() throws {
        let database = try AppDatabase.inMemory()
        try database.library.insert(BookRecord(isbn13: "9780441013593", title: "Dune", reviewReason: "a"))
        let merged = try database.library.upsert(BookRecord(isbn13: "9780441013593", title: "Dune", reviewReason: "b"))
        #expect(merged.reviewReason == "a; b")
        let same = try database.library.upsert(BookRecord(isbn13: "9780441013593", title: "Dune", reviewReason: "b"))
        #expect(same.reviewReason == "a; b")
    }

    @Test("v4-review migrates a v3 library: rows, ids, search and the wider needsReview rule")
    func migrationFromV3() throws {
        let queue = try DatabaseQueue(configuration: AppDatabase.makeConfiguration(readonly: false))
        try AppDatabase.migrator.migrate(queue, upTo: "v3-identify")
        try queue.write { db in
            try db.execute(
                sql: """
                    INSERT INTO book (id, isbn13, title, authors, confidence, addedAt, updatedAt, rawJSON, source)
                    VALUES (1, '9780441013593', 'Dune', '["Frank Herbert"]', 0.9, '2026-01-01', '2026-01-01',
                            '{}', 'backend'),
                           (2, NULL, 'No Confidence', '[]', NULL, '2026-01-01', '2026-01-01',
                            '{"title":"x"}', 'backend'),
                           (3, '9780261103573', '', '[]', NULL, '2026-01-01', '2026-01-01', NULL, 'barcode'),
                           (9, NULL, 'Doubtful', '[]', 0.5, '2026-01-01', '2026-01-01', '{}', 'backend')
                    """)
            try db.execute(sql: "DELETE FROM book WHERE id = 9")
        }
        let database = try AppDatabase(queue)
        let books = try database.library.books()
        #expect(books.map(\.id) == [1, 2, 3])
        #expect(books.map(\.needsReview) == [false, true, false])
        #expect(books[1].reviewReason == "the backend gave no confidence")
        #expect(try database.library.searchBooks(matching: "dune").map(\.id) == [1])
        #expect(try database.library.searchBooks(matching: "9780261103573").map(\.id) == [3])
        // The search follows later changes (its triggers are back), and deleted ids are not reused.
        let added = try database.library.insert(BookRecord(title: "Children of Dune"))
        #expect(added.id == 10)
        #expect(Set(try database.library.searchBooks(matching: "dune").map(\.id)) == [1, 10])
        try database.library.correct(id: 1, BookCorrection(title: "Dune Messiah"))
        #expect(try database.library.searchBooks(matching: "messiah").map(\.id) == [1])
        let indexes = try queue.read { db in try db.indexes(on: "book").map(\.name) }
        #expect(indexes.contains("book_on_scanId"))
        // The schema still refuses what it refused before the rebuild.
        #expect(throws: StoreError.self) { try database.library.insert(BookRecord(title: "x", confidence: 2)) }
    }
}
