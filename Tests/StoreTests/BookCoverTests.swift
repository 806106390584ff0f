import Foundation
import GRDB
import Store
import Testing

/// `bookCover`: a book's kept spine, one per book, going with its book, held to being a small JPEG by the schema.
@Suite struct BookCoverTests {
    static let jpeg: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0, 1, 2, 3, 0xFF, 0xD9]

    @Test("v6-book-cover adds the table to a v5 library; a kept spine goes with its book")
    func migrationFromV5() throws {
        let queue = try DatabaseQueue(configuration: AppDatabase.makeConfiguration(readonly: false))
        try AppDatabase.migrator.migrate(queue, upTo: "v5-match-key")
        try queue.write { db in
            try db.execute(
                sql: """
                    INSERT INTO book (id, title, authors, addedAt, updatedAt)
                    VALUES (1, 'Dune', '["Frank Herbert"]', '2026-01-01', '2026-01-01'),
                           (2, 'Emma', '["Jane Austen"]', '2026-01-01', '2026-01-01')
                    """)
        }
        let database = try AppDatabase(queue)
        #expect(try database.library.bookCount() == 2)
        #expect(try database.bookCover(id: 1) == nil)
        let stored = try database.saveBookCovers([
            BookCover(bookID: 1, jpeg: Self.jpeg, width: 50, height: 320),
            BookCover(bookID: 2, jpeg: Self.jpeg, width: 320, height: 200),
            BookCover(bookID: 99, jpeg: Self.jpeg, width: 50, height: 320),  // no such book: nothing kept
        ])
        #expect(stored == [1, 2])
        #expect(try database.bookCover(id: 1) == BookCover(bookID: 1, jpeg: Self.jpeg, width: 50, height: 320))
        #expect(try database.booksWithCovers(among: [1, 2, 3, 99]) == [1, 2])

        // A second sighting keeps the first picture.
        #expect(
            try database.saveBookCovers([BookCover(bookID: 1, jpeg: Self.jpeg + [0], width: 60, height: 320)]) == [])
        #expect(try database.bookCover(id: 1)?.width == 50)

        _ = try database.library.delete(id: 1)
        #expect(try database.bookCover(id: 1) == nil)
        #expect(try database.booksWithCovers(among: [1, 2]) == [2])
    }

    @Test("the schema refuses a picture that is not a JPEG, too big, or of no size")
    func schemaHoldsTheInvariants() throws {
        let database = try AppDatabase.inMemory()
        let book = try database.library.insert(BookRecord(title: "Dune"))
        let id = try #require(book.id)
        for bad in [
            BookCover(bookID: id, jpeg: [0x89, 0x50, 0x4E, 0x47, 0, 0], width: 10, height: 10),  // a PNG
            BookCover(bookID: id, jpeg: [0xFF, 0xD8, 0xFF], width: 10, height: 10),
            BookCover(bookID: id, jpeg: Self.jpeg + [UInt8](repeating: 0, count: 131_072), width: 10, height: 10),
            BookCover(bookID: id, jpeg: Self.jpeg, width: 0, height: 10),
            BookCover(bookID: id, jpeg: Self.jpeg, width: 10, height: 4000),
        ] {
            #expect(throws: StoreError.self, "\(bad.jpeg.prefix(4)) \(bad.width)x\(bad.height)") {
                try database.saveBookCovers([bad])
            }
        }
        #expect(try database.bookCover(id: id) == nil)
        // A text value is not a picture either, even one starting like a JPEG.
        #expect(throws: DatabaseError.self) {
            try database.writer.write { db in
                try db.execute(
                    sql: "INSERT INTO bookCover (bookId, jpeg, width, height, createdAt) VALUES (?, ?, 1, 1, 'x')",
                    arguments: [id, "\u{FF}\u{D8}\u{FF}abc"])
            }
        }
    }

    @Test("an undone delete puts the book and its picture back together, or neither")
    func deleteKeepingCoverAndRestore() throws {
        let database = try AppDatabase.inMemory()
        let added = Date(timeIntervalSince1970: 1_780_000_000)
        let book = try database.library.insert(BookRecord(isbn13: "9780441013593", title: "Dune", addedAt: added))
        let id = try #require(book.id)
        let cover = BookCover(bookID: id, jpeg: Self.jpeg, width: 50, height: 320)
        try database.saveBookCovers([cover])

        let deleted = try database.deleteBookKeepingCover(id: id)
        #expect(deleted == DeletedBook(book: book, cover: cover))
        #expect(try database.library.book(id: id) == nil)
        #expect(try database.bookCover(id: id) == nil)
        #expect(throws: StoreError.self) { try database.deleteBookKeepingCover(id: id) }

        // Another book took the ISBN meanwhile: the undo is refused and leaves no picture behind.
        let other = try database.library.insert(BookRecord(isbn13: "9780441013593", title: "Dune (again)"))
        #expect(throws: StoreError.self) { try database.restoreBook(deleted) }
        #expect(try database.library.book(id: id) == nil)
        #expect(try database.bookCover(id: id) == nil)

        _ = try database.library.delete(id: try #require(other.id))
        let restored = try database.restoreBook(deleted)
        #expect(restored == book)
        #expect(try database.bookCover(id: id) == cover)
    }
}
