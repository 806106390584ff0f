import Foundation
import GRDB

/// How a book without ISBN is recognised as one already in the library: its normalised title and
/// first author (docs/protocol.md §3).
///
/// Title: lower-cased; the subtitle dropped (from the first `:`, ` - `, `(` or `[`); one leading
/// article (`the`, `a`, `an`) dropped; punctuation other than letters and digits read as spaces;
/// spaces collapsed and trimmed. Author: the first one, lower-cased, with `.`/`,` read as spaces and
/// spaces collapsed ("J.R.R. Tolkien" and "J. R. R. Tolkien" match).
public struct BookMatchKey: Hashable, Sendable, CustomStringConvertible {
    public let title: String
    public let author: String

    /// `nil` when the title normalises to nothing (such a book cannot be matched).
    public init?(title: String, authors: [String]) {
        let normalisedTitle = Self.normaliseTitle(title)
        guard !normalisedTitle.isEmpty else { return nil }
        self.title = normalisedTitle
        self.author = Self.normaliseAuthor(authors.first(where: { !Self.normaliseAuthor($0).isEmpty }) ?? "")
    }

    public var description: String { "\(title) / \(author)" }

    /// The title rule above.
    public static func normaliseTitle(_ title: String) -> String {
        let lowered = title.lowercased()
        var main = Substring(lowered)
        for separator in [":", " - ", "(", "["] {
            if let range = main.range(of: separator) {
                let head = main[..<range.lowerBound]
                if !collapse(head).isEmpty { main = head }  // "(untitled)" keeps its words
            }
        }
        var words = collapse(main).split(separator: " ")
        if words.count > 1, ["the", "a", "an"].contains(words[0]) { words.removeFirst() }
        return words.joined(separator: " ")
    }

    /// The author rule above.
    public static func normaliseAuthor(_ author: String) -> String {
        collapse(Substring(author.lowercased().map { $0 == "." || $0 == "," ? " " : $0 }))
    }

    /// Punctuation (anything not a letter or digit) becomes a space; runs of spaces become one; trimmed.
    private static func collapse(_ text: Substring) -> String {
        var out = ""
        var pendingSpace = false
        for character in text {
            if character.isLetter || character.isNumber || character == "'" || character == "’" {
                if pendingSpace, !out.isEmpty { out.append(" ") }
                pendingSpace = false
                if character != "'", character != "’" { out.append(character) }
            } else {
                pendingSpace = true
            }
        }
        return out
    }
}

extension BookRecord {
    /// This book's title + first author key (`nil` for an empty title).
    public var matchKey: BookMatchKey? { BookMatchKey(title: title, authors: authors) }

    /// Every insert and update of a book also stores its ``matchKey`` (`matchTitle`, `matchAuthor`: "" for
    /// none), which the dedupe finds books by. Written only when it changed.
    public func aroundSave(_ db: Database, save: () throws -> PersistenceSuccess) throws {
        let saved = try save()
        // After an insert the saved values hold the new row id; this value's `id` is set only later (`didInsert`).
        guard let rowID = saved.persistenceContainer["id"]?.databaseValue ?? id?.databaseValue, !rowID.isNull else {
            return
        }
        let key = matchKey
        let (title, author) = (key?.title ?? "", key?.author ?? "")
        try db.execute(
            sql: """
                UPDATE book SET matchTitle = ?, matchAuthor = ?
                WHERE id = ? AND (matchTitle IS NOT ? OR matchAuthor IS NOT ?);
                DELETE FROM book_match_stale WHERE bookId = ?
                """,
            arguments: [title, author, rowID, title, author, rowID])
    }
}

extension Library {
    /// The first book (oldest) whose normalised title and first author equal `key`.
    public func book(matching key: BookMatchKey) throws(StoreError) -> BookRecord? {
        try database.read("nothing was read") { db in try Self.book(matching: key, db) }
    }

    /// Like ``upsert(_:now:)``, and a book is also recognised by its title and first author:
    /// - with an ISBN-13: the book with that ISBN-13; else the oldest book *without* ISBN whose
    ///   ``BookMatchKey`` matches (it gains the ISBN); else a new row;
    /// - without ISBN: the oldest book with the same ``BookMatchKey`` (with or without ISBN); else a
    ///   new row.
    /// Merging follows ``upsert(_:now:)``: new values win where present, `id`, `addedAt`, `scanID` stay.
    @discardableResult
    public func upsertMatching(_ book: BookRecord, now: Date = Date()) throws(StoreError) -> BookRecord {
        try database.write("the book was not added") { db in try Self.upsertMatching(book, now: now, db) }
    }

    static func book(matching key: BookMatchKey, withoutISBNOnly: Bool = false, _ db: Database) throws -> BookRecord? {
        let candidates = try BookRecord.fetchCursor(
            db, sql: candidatesSQL(withoutISBNOnly: withoutISBNOnly), arguments: [key.title, key.author])
        while let candidate = try candidates.next() {
            if candidate.matchKey == key { return candidate }
        }
        return nil
    }

    /// The books that may match a key (its title and author are the arguments): those with that stored key
    /// (found by `book_on_matchKey`) and those whose key is not known (NULL) or stale (`book_match_stale`),
    /// each then judged by its own title and authors; oldest first, so the first match is the oldest.
    static func candidatesSQL(withoutISBNOnly: Bool) -> String {
        // Three indexed look-ups rather than one `OR`, so the plan cannot fall back to reading the table;
        // a row in two of them is judged twice, which changes nothing. `+isbn13`: the ISBN filters the
        // candidates, it is never the index they are found by.
        let isbn = withoutISBNOnly ? "AND +isbn13 IS NULL" : ""
        return """
            SELECT * FROM book WHERE matchTitle = ? AND matchAuthor = ? \(isbn)
            UNION ALL SELECT * FROM book WHERE matchTitle IS NULL \(isbn)
            UNION ALL SELECT * FROM book WHERE id IN (SELECT bookId FROM book_match_stale) \(isbn)
            ORDER BY id
            """
    }

    static func upsertMatching(_ book: BookRecord, now: Date, _ db: Database) throws -> BookRecord {
        if let isbn13 = book.isbn13 {
            if try BookRecord.filter(BookRecord.Columns.isbn13 == isbn13).fetchCount(db) == 0,
                let key = book.matchKey,
                var existing = try Self.book(matching: key, withoutISBNOnly: true, db)
            {
                // The same book seen before without its ISBN: give that row the ISBN, then merge.
                let before = existing
                existing.isbn13 = isbn13
                try existing.updateChanges(db, from: before)
            }
            return try upsert(book, now: now, db)
        }
        guard let key = book.matchKey, let existing = try Self.book(matching: key, db) else {
            return try upsert(book, now: now, db)  // no ISBN, no match: inserted
        }
        if existing.isbn13 != nil {
            var keyed = book
            keyed.isbn13 = existing.isbn13
            return try upsert(keyed, now: now, db)
        }
        let merged = existing.merged(with: book, now: now)
        try merged.updateChanges(db, from: existing)
        return merged
    }
}

extension AppDatabase {
    /// ``completeScan(_:books:now:)`` with books matched by ISBN-13 *or* title + first author
    /// (``Library/upsertMatching(_:now:)``): one transaction, idempotent for a scan already `done`.
    /// The two differ only in the upsert they use.
    @discardableResult
    public func completeScanMatchingTitles(
        _ id: UUID, books: [BookRecord], now: Date = Date()
    ) throws(StoreError) -> (scan: ScanRecord, books: [BookRecord]) {
        try completeScan(id, books: books, now: now, upsert: Library.upsertMatching)
    }
}
