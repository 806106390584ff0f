import Foundation
import GRDB

/// The library a page at a time, for the browser (`swiftwing-web`): with 10,000 books only the ids are sorted
/// (or ranked by the full-text index) and only one page of rows is read.
extension Library {
    public enum PageOrder: String, CaseIterable, Sendable {
        /// The newest first.
        case added
        case title
        case author
        /// Best matches first (FTS5 rank); the order of a search unless another is asked for.
        case relevance
    }

    /// One page of the books matching `query` (every book when it is empty), and how many match in all.
    public func page(matching query: String, order: PageOrder, limit: Int, offset: Int) throws(StoreError)
        -> (books: [BookRecord], total: Int)
    {
        let searching = !query.trimmingCharacters(in: .whitespaces).isEmpty
        let pattern = searching ? Self.searchPattern(query) : nil
        if searching && pattern == nil { return ([], 0) }
        let sorting = Self.sortingSQL(order, searching: searching)
        return try database.read("nothing was read") { db in
            let ids: [Int64]
            let total: Int
            if let pattern {
                total =
                    try Int.fetchOne(
                        db, sql: "SELECT count(*) FROM book_ft WHERE book_ft MATCH ?", arguments: [pattern]) ?? 0
                ids = try Int64.fetchAll(
                    db,
                    sql: """
                        SELECT book.id FROM book JOIN book_ft ON book_ft.rowid = book.id
                        WHERE book_ft MATCH ? ORDER BY \(sorting) LIMIT ? OFFSET ?
                        """,
                    arguments: [pattern, limit, offset])
            } else {
                total = try BookRecord.fetchCount(db)
                ids = try Int64.fetchAll(db, sql: Self.allIDsSQL(sorting: sorting), arguments: [limit, offset])
            }
            let rows = try BookRecord.fetchAll(db, keys: ids)
            let byID = Dictionary(uniqueKeysWithValues: rows.compactMap { book in book.id.map { ($0, book) } })
            return (ids.compactMap { byID[$0] }, total)
        }
    }

    static func sortingSQL(_ order: PageOrder, searching: Bool) -> String {
        switch order {
        case .added: "book.addedAt DESC, book.id DESC"
        case .title: "book.title COLLATE NOCASE, book.id"
        case .author: "book.authors COLLATE NOCASE, book.title COLLATE NOCASE, book.id"
        case .relevance: searching ? "book_ft.rank, book.id" : "book.addedAt DESC, book.id DESC"
        }
    }

    /// A page of the whole library's ids. The newest-first order (the library page's own) walks `book_on_addedAt`
    /// backwards and stops at the page: no sort of every book on each load.
    static func allIDsSQL(sorting: String) -> String {
        "SELECT book.id FROM book ORDER BY \(sorting) LIMIT ? OFFSET ?"
    }

    /// What ``searchBooks(matching:limit:)`` looks for: every word as a prefix; an ISBN typed with hyphens or spaces
    /// as one word. Nil when nothing searchable was typed.
    static func searchPattern(_ query: String) -> FTS5Pattern? {
        // "978-0-441-01359-3" → "9780441013593": FTS would otherwise see five separate numbers.
        let compact = query.filter { !$0.isWhitespace && $0 != "-" }
        let isISBN =
            (compact.count == 13 || compact.count == 10)
            && compact.allSatisfy { $0.isASCII && ($0.isNumber || $0 == "X" || $0 == "x") }
        return FTS5Pattern(matchingAllPrefixesIn: isISBN ? compact.uppercased() : query)
    }
}
