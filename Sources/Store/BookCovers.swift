import Foundation
import GRDB

/// A book's own picture: its spine cut from the scan's photo, kept in `bookCover` beside the book after the photo
/// is deleted. It goes with its book (deleted with it) and is never exported.
public struct BookCover: Hashable, Sendable {
    /// The largest picture the schema takes: a tile, never a photo.
    public static let maximumBytes = 131_072
    /// The longest edge the schema takes, in pixels.
    public static let maximumLongEdge = 640

    public var bookID: Int64
    public var jpeg: [UInt8]
    public var width: Int
    public var height: Int

    public init(bookID: Int64, jpeg: [UInt8], width: Int, height: Int) {
        self.bookID = bookID
        self.jpeg = jpeg
        self.width = width
        self.height = height
    }
}

/// A book as it was before a delete: its fields and the spine picture kept beside it (which the delete takes with the
/// book), so an undo can put both back (``AppDatabase/restoreBook(_:now:)``).
public struct DeletedBook: Hashable, Sendable {
    public var book: BookRecord
    public var cover: BookCover?

    public init(book: BookRecord, cover: BookCover?) {
        self.book = book
        self.cover = cover
    }
}

extension AppDatabase {
    /// Keeps `covers`, in one transaction, each only when its book still exists and has no picture yet: a book seen
    /// again keeps the picture of its first sighting, as it keeps that scan. Returns the ids of the books whose
    /// picture was stored now.
    @discardableResult
    public func saveBookCovers(_ covers: [BookCover], now: Date = Date()) throws(StoreError) -> [Int64] {
        guard !covers.isEmpty else { return [] }
        return try write("the books' pictures were not kept (the books are in the library without them)") { db in
            try Self.insertCovers(covers, now: now, db)
        }
    }

    private static func insertCovers(_ covers: [BookCover], now: Date, _ db: Database) throws -> [Int64] {
        let insert = try db.cachedStatement(
            sql: """
                INSERT INTO bookCover (bookId, jpeg, width, height, createdAt)
                SELECT id, ?, ?, ?, ? FROM book WHERE id = ?
                ON CONFLICT (bookId) DO NOTHING
                """)
        var stored: [Int64] = []
        for cover in covers {
            try insert.execute(arguments: [
                Data(cover.jpeg), cover.width, cover.height, StorageTimestamp.databaseValue(now), cover.bookID,
            ])
            if db.changesCount > 0 { stored.append(cover.bookID) }
        }
        return stored
    }

    /// The picture of book `id`, or `nil` when it has none.
    public func bookCover(id: Int64) throws(StoreError) -> BookCover? {
        try read("the book's picture was not read") { db in try Self.cover(id: id, db) }
    }

    private static func cover(id: Int64, _ db: Database) throws -> BookCover? {
        guard
            let row = try Row.fetchOne(
                db, sql: "SELECT jpeg, width, height FROM bookCover WHERE bookId = ?", arguments: [id])
        else { return nil }
        let jpeg: Data = row["jpeg"]
        return BookCover(bookID: id, jpeg: Array(jpeg), width: row["width"], height: row["height"])
    }

    /// Removes the book `id` with its picture, in one transaction, and returns both: what an undo needs to put back.
    public func deleteBookKeepingCover(id: Int64) throws(StoreError) -> DeletedBook {
        try write("the book was not deleted") { db in
            guard let book = try BookRecord.fetchOne(db, key: id) else { throw StoreError.bookNotFound(id) }
            let cover = try Self.cover(id: id, db)
            try book.delete(db)
            return DeletedBook(book: book, cover: cover)
        }
    }

    /// Puts back a book ``deleteBookKeepingCover(id:)`` removed, with its id, every field and its picture, in one
    /// transaction: both come back or neither (refused, for instance, when another book has taken its ISBN-13).
    public func restoreBook(_ deleted: DeletedBook, now: Date = Date()) throws(StoreError) -> BookRecord {
        try write("the book was not put back") { db in
            let restored = try deleted.book.inserted(db)
            if var cover = deleted.cover, let id = restored.id {
                cover.bookID = id
                _ = try Self.insertCovers([cover], now: now, db)
            }
            return restored
        }
    }

    /// Which of `ids` have a picture: one indexed look-up for a page of the library.
    public func booksWithCovers(among ids: [Int64]) throws(StoreError) -> Set<Int64> {
        guard !ids.isEmpty else { return [] }
        return try read("the books' pictures were not looked up") { db in
            Set(
                try Int64.fetchAll(
                    db, sql: "SELECT bookId FROM bookCover WHERE bookId IN (SELECT value FROM json_each(?))",
                    arguments: ["[" + ids.map(String.init).joined(separator: ",") + "]"]))
        }
    }
}

extension AppDatabase {
    /// A book that has a bounding box in its JSON and no picture: ``AppDatabase/scansAwaitingSpines()``.
    static let awaitingSpineCondition = """
        CASE WHEN json_valid(book.rawJSON) THEN json_type(book.rawJSON, '$.boundingBox') END = 'object'
        AND NOT EXISTS (SELECT 1 FROM bookCover WHERE bookCover.bookId = book.id)
        """

    /// Done scans, not discarded, with a book whose spine was never kept, or a spine to check whose picture is still
    /// to be cut: the device stopped between landing the books and cutting their spines. Their photos stay until
    /// the uplink cuts them.
    public func scansAwaitingSpines() throws(StoreError) -> Set<UUID> {
        try read("the books waiting for their spines were not looked up") { db in
            let ids = try String.fetchAll(
                db,
                sql: """
                    SELECT scan.id FROM scan WHERE scan.state = 'done' AND scan.discardedAt IS NULL AND (EXISTS (
                        SELECT 1 FROM book WHERE book.scanId = scan.id AND \(Self.awaitingSpineCondition))
                        OR EXISTS (SELECT 1 FROM spineToCheck
                            WHERE spineToCheck.scanId = scan.id AND spineToCheck.cropState = 'pending'))
                    """)
            return Set(ids.compactMap(UUID.init(uuidString:)))
        }
    }

    /// The books of `scanID` that have a bounding box in their JSON and no picture, with that JSON.
    public func booksAwaitingSpines(scanID: UUID) throws(StoreError) -> [(id: Int64, rawJSON: String)] {
        try read("the books waiting for their spines were not read") { db in
            try Row.fetchAll(
                db,
                sql:
                    "SELECT id, rawJSON FROM book WHERE book.scanId = ? AND \(Self.awaitingSpineCondition) ORDER BY id",
                arguments: [scanID.uuidString.lowercased()]
            ).map { (id: $0["id"], rawJSON: $0["rawJSON"]) }
        }
    }
}
