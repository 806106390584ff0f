import Foundation
import GRDB
import Store
import Synchronization

/// What the pages read from the daemon's database, as a WAL reader beside the daemon (as the CLI reads):
/// every read sees the transactions committed before it. Opened at the first read that finds the database,
/// so the web process may start before the daemon ever ran. Every method blocks: call it through ``blocking(_:)``.
final class LibraryReader: Sendable {
    enum Sort: String, CaseIterable, Sendable {
        case added, title, author

        var label: String {
            switch self {
            case .added: "Newest first"
            case .title: "Title"
            case .author: "Author"
            }
        }
    }

    struct Page: Sendable {
        var books: [BookRecord]
        /// Books matching (all of them when there is no query).
        var total: Int
        var hasMore: Bool
    }

    struct Counts: Sendable, Equatable {
        var books = 0
        var needsReview = 0
        /// Scans on their way: queued, uploading, analyzing.
        var active = 0
        /// Scans a person should look at: failed, needs attention.
        var stuck = 0
    }

    /// Search results are read up to this many, then paged (FTS5's rank needs the matches first).
    static let searchLimit = 1000

    let stateDirectory: StateDirectory
    private let opened = Mutex<AppDatabase?>(nil)

    init(stateDirectory: StateDirectory) {
        self.stateDirectory = stateDirectory
    }

    func database() throws(StoreError) -> AppDatabase {
        if let database = opened.withLock({ $0 }) { return database }
        let database = try AppDatabase.openReadOnly(stateDirectory)
        opened.withLock { $0 = database }
        return database
    }

    func page(query: String, sort: Sort?, page: Int, pageSize: Int) throws -> Page {
        let database = try database()
        let offset = max(page, 0) * pageSize
        if !query.trimmingCharacters(in: .whitespaces).isEmpty {
            var matches = try database.library.searchBooks(matching: query, limit: Self.searchLimit)
            if let sort { matches.sort(by: Self.order(sort)) }
            let slice = Array(matches.dropFirst(offset).prefix(pageSize))
            return Page(books: slice, total: matches.count, hasMore: offset + slice.count < matches.count)
        }
        return try database.writer.read { db in
            let total = try BookRecord.fetchCount(db)
            let order: String
            switch sort ?? .added {
            case .added: order = "addedAt DESC, id DESC"
            case .title: order = "title COLLATE NOCASE, id"
            case .author: order = "authors COLLATE NOCASE, title COLLATE NOCASE, id"
            }
            let books = try BookRecord.fetchAll(
                db, sql: "SELECT * FROM book ORDER BY \(order) LIMIT ? OFFSET ?", arguments: [pageSize, offset])
            return Page(books: books, total: total, hasMore: offset + books.count < total)
        }
    }

    private static func order(_ sort: Sort) -> (BookRecord, BookRecord) -> Bool {
        switch sort {
        case .added: { ($0.addedAt, $0.id ?? 0) > ($1.addedAt, $1.id ?? 0) }
        case .title: { $0.title.localizedCaseInsensitiveCompare($1.title) == .orderedAscending }
        case .author: {
            ($0.authors.first ?? "").localizedCaseInsensitiveCompare($1.authors.first ?? "") == .orderedAscending
        }
        }
    }

    func book(id: Int64) throws -> BookRecord? {
        try database().library.book(id: id)
    }

    func reviewList() throws -> [BookRecord] {
        try database().library.books(needingReviewOnly: true)
    }

    func latestBooks(_ count: Int) throws -> [BookRecord] {
        try database().writer.read { db in
            try BookRecord.fetchAll(db, sql: "SELECT * FROM book ORDER BY addedAt DESC, id DESC LIMIT ?", arguments: [count])
        }
    }

    /// The latest scans not discarded, newest first.
    func scans(limit count: Int) throws -> [ScanRecord] {
        try database().writer.read { db in
            try ScanRecord.filter(ScanRecord.Columns.discardedAt == nil).order(Column.rowID.desc).limit(count).fetchAll(db)
        }
    }

    func scan(id: UUID) throws -> ScanRecord? {
        try database().queue.scan(id: id)
    }

    func counts() throws -> Counts {
        let database = try database()
        let queue = try database.queue.counts()
        return try database.writer.read { db in
            Counts(
                books: try BookRecord.fetchCount(db),
                needsReview: try BookRecord.filter(BookRecord.Columns.needsReview == true).fetchCount(db),
                active: (queue[.queued] ?? 0) + (queue[.uploading] ?? 0) + (queue[.analyzing] ?? 0),
                stuck: (queue[.failed] ?? 0) + (queue[.needsAttention] ?? 0))
        }
    }
}
