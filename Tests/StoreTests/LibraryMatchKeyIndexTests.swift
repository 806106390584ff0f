import Foundation
import GRDB
import Testing

@testable import Store

/// The dedupe finds candidates by the stored match key (`book_on_matchKey`), and never misses a book whose key
/// is not stored or went stale: those are judged by their own title and authors.
@Suite("Library: the match key index")
struct LibraryMatchKeyIndexTests {
    @Test("the lookup searches the index: no scan of the book table")
    func queryPlan() throws {
        let database = try AppDatabase.inMemory()
        let key = try #require(BookMatchKey(title: "Emma", authors: ["Jane Austen"]))
        for withoutISBN in [false, true] {
            // EXPLAIN QUERY PLAN rows are (id, parent, notused, detail).
            let details = try database.writer.read { db in
                try Row.fetchAll(
                    db, sql: "EXPLAIN QUERY PLAN " + Library.candidatesSQL(withoutISBNOnly: withoutISBN),
                    arguments: [key.title, key.author]
                ).map { $0["detail"] as String }
            }
            #expect(details.contains { $0.contains("book_on_matchKey") }, "\(details)")
            // A full read of the table is "SCAN book" (or "SCAN TABLE book"), with or without an index.
            let scansBooks = details.contains { detail in
                let words = detail.split(separator: " ")
                return words.first == "SCAN" && words.dropFirst().first { $0 != "TABLE" } == "book"
            }
            #expect(!scansBooks, "\(details)")
        }
    }

    @Test("the library page's newest-first ids come from book_on_addedAt, not a sort of every book; v6 gains it")
    func newestFirstPageReadsTheIndex() throws {
        let queue = try DatabaseQueue(configuration: AppDatabase.makeConfiguration(readonly: false))
        try AppDatabase.migrator.migrate(queue, upTo: "v6-book-cover")
        let database = try AppDatabase(queue)
        let sql = Library.allIDsSQL(sorting: Library.sortingSQL(.added, searching: false))
        let details = try database.writer.read { db in
            try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + sql, arguments: [60, 0]).map { $0["detail"] as String }
        }
        #expect(details.contains { $0.contains("book_on_addedAt") }, "\(details)")
        #expect(!details.contains { $0.contains("TEMP B-TREE") }, "\(details)")
        // Same second, so the id decides: the newest first, paged.
        let added = Date(timeIntervalSince1970: 1_790_000_000)
        for title in ["A", "B", "C"] { _ = try database.library.insert(BookRecord(title: title, addedAt: added)) }
        _ = try database.library.insert(BookRecord(title: "Old", addedAt: added - 60))
        let first = try database.library.page(matching: "", order: .added, limit: 2, offset: 0)
        let second = try database.library.page(matching: "", order: .added, limit: 2, offset: 2)
        #expect(first.books.map(\.title) == ["C", "B"] && first.total == 4)
        #expect(second.books.map(\.title) == ["A", "Old"])
    }

    @Test("every save stores the key; a title changed by a person moves it")
    func keysStored() throws {
        let database = try AppDatabase.inMemory()
        let book = try database.library.insert(
            BookRecord(title: "The Hobbit: or There and Back Again", authors: ["J.R.R. Tolkien"]))
        let empty = try database.library.insert(BookRecord(title: "!!!"))
        func key(_ id: Int64?) throws -> [String?] {
            try database.writer.read { db in
                let row = try #require(
                    try Row.fetchOne(db, sql: "SELECT matchTitle, matchAuthor FROM book WHERE id = ?", arguments: [id]))
                return [row["matchTitle"], row["matchAuthor"]]
            }
        }
        #expect(try key(book.id) == ["hobbit", "j r r tolkien"])
        #expect(try key(empty.id) == ["", ""])
        try database.library.correct(id: try #require(book.id), BookCorrection(title: "Farmer Giles of Ham"))
        #expect(try key(book.id) == ["farmer giles of ham", "j r r tolkien"])
        let farmer = try #require(BookMatchKey(title: "Farmer Giles of Ham", authors: ["J. R. R. Tolkien"]))
        #expect(try database.library.book(matching: farmer)?.id == book.id)
        let hobbit = try #require(BookMatchKey(title: "The Hobbit", authors: ["J. R. R. Tolkien"]))
        #expect(try database.library.book(matching: hobbit) == nil)
    }

    @Test("the search follows a title edited after the key index came, and only the indexed columns touch it")
    func searchFollowsEdits() throws {
        let database = try AppDatabase.inMemory()
        let book = try database.library.insert(BookRecord(title: "Emma", authors: ["Jane Austen"], confidence: 0.5))
        let id = try #require(book.id)
        try database.library.correct(id: id, BookCorrection(title: "Persuasion"))
        #expect(try database.library.searchBooks(matching: "persuasion").map(\.id) == [id])
        #expect(try database.library.searchBooks(matching: "emma").isEmpty)
        try database.writer.write { db in
            try db.execute(sql: "UPDATE book SET confidence = 0.9 WHERE id = ?", arguments: [id])
            try db.execute(sql: "INSERT INTO book_ft (book_ft) VALUES ('integrity-check')")
        }
        #expect(try database.library.searchBooks(matching: "austen").map(\.id) == [id])
    }

    @Test("rows written by plain SQL are matched all the same: a missing key, a title changed under a stored key")
    func keysNotStored() throws {
        let database = try AppDatabase.inMemory()
        try database.writer.write { db in
            try db.execute(
                sql: """
                    INSERT INTO book (id, title, authors, addedAt, updatedAt)
                    VALUES (1, 'Persuasion', '["Jane Austen"]', '2026-01-01', '2026-01-01')
                    """)
        }
        let merged = try database.library.upsertMatching(
            BookRecord(title: "PERSUASION", authors: ["jane austen"], publisher: "P"))
        #expect(merged.id == 1)
        #expect(merged.publisher == "P")

        let emma = try database.library.insert(BookRecord(title: "Emma", authors: ["Jane Austen"]))
        try database.writer.write { db in
            try db.execute(sql: "UPDATE book SET title = 'Mansfield Park' WHERE id = ?", arguments: [emma.id])
        }
        let oldTitle = try #require(BookMatchKey(title: "Emma", authors: ["Jane Austen"]))
        let newTitle = try #require(BookMatchKey(title: "Mansfield Park", authors: ["Jane Austen"]))
        #expect(try database.library.book(matching: oldTitle) == nil)
        #expect(try database.library.book(matching: newTitle)?.id == emma.id)
        #expect(try database.library.bookCount() == 2)
    }

    @Test("the oldest match wins, whether its key is stored or not")
    func oldestWins() throws {
        let database = try AppDatabase.inMemory()
        try database.writer.write { db in
            try db.execute(
                sql: """
                    INSERT INTO book (id, title, authors, addedAt, updatedAt)
                    VALUES (5, 'Dune', '["Frank Herbert"]', '2026-01-01', '2026-01-01')
                    """)
        }
        let newer = try database.library.insert(BookRecord(title: "Dune (Deluxe)", authors: ["Frank Herbert"]))
        let dune = try #require(BookMatchKey(title: "dune", authors: ["frank herbert"]))
        #expect(try database.library.book(matching: dune)?.id == 5)
        try database.writer.write { db in try db.execute(sql: "DELETE FROM book WHERE id = 5") }
        #expect(try database.library.book(matching: dune)?.id == newer.id)
    }

    @Test("v5-match-key gives the books of a v4 library their keys, so the dedupe finds them")
    func migrationFromV4() throws {
        let queue = try DatabaseQueue(configuration: AppDatabase.makeConfiguration(readonly: false))
        try AppDatabase.migrator.migrate(queue, upTo: "v4-review")
        try queue.write { db in
            try db.execute(
                sql: """
                    INSERT INTO book (id, isbn13, title, authors, confidence, addedAt, updatedAt)
                    VALUES (1, NULL, 'The Hobbit', '["J.R.R. Tolkien"]', 0.9, '2026-01-01', '2026-01-01'),
                           (2, '9780441013593', 'Dune: Book One', '["Frank Herbert", "x"]', 0.9, '2026-01-01',
                            '2026-01-01'),
                           (3, NULL, '', '[]', 0.9, '2026-01-01', '2026-01-01')
                    """)
        }
        let database = try AppDatabase(queue)
        let keys = try queue.read { db in
            try Row.fetchAll(db, sql: "SELECT matchTitle, matchAuthor FROM book ORDER BY id").map {
                [$0["matchTitle"] as String?, $0["matchAuthor"] as String?]
            }
        }
        #expect(keys == [["hobbit", "j r r tolkien"], ["dune", "frank herbert"], ["", ""]])
        let hobbit = try database.library.upsertMatching(
            BookRecord(title: "Hobbit", authors: ["J. R. R. Tolkien"], publisher: "HMH"))
        #expect(hobbit.id == 1)
        let dune = try database.library.upsertMatching(BookRecord(title: "Dune", authors: ["Frank Herbert"]))
        #expect(dune.id == 2)
        #expect(try database.library.bookCount() == 3)
    }
}
