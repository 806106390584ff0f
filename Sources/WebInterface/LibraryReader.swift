import Foundation
import GRDB
import Store
import Synchronization

/// What the pages read from the daemon's database, as a WAL reader beside the daemon (as the CLI reads):
/// every read sees the transactions committed before it. Opened at the first read that finds the database,
/// so the web process may start before the daemon ever ran. Every method blocks: call it through ``blocking(_:)``.
final class LibraryReader: Sendable {
    typealias Sort = Library.PageOrder

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
        /// Spines read but not identified, waiting for the owner.
        var spinesToCheck = 0
    }

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

    /// One page: of the search's matches (best first unless `sort`), or of every book (newest first unless `sort`).
    func page(query: String, sort: Sort?, page: Int, pageSize: Int) throws -> Page {
        let searching = !query.trimmingCharacters(in: .whitespaces).isEmpty
        let offset = max(page, 0) * pageSize
        let found = try database().library.page(
            matching: query, order: sort ?? (searching ? .relevance : .added), limit: pageSize, offset: offset)
        return Page(books: found.books, total: found.total, hasMore: offset + found.books.count < found.total)
    }

    func book(id: Int64) throws -> BookRecord? {
        try database().library.book(id: id)
    }

    /// The spine the daemon kept for book `id` when it landed, if any.
    func cover(id: Int64) throws -> BookCover? {
        try database().bookCover(id: id)
    }

    /// Which of `ids` have a kept spine.
    func booksWithCovers(among ids: [Int64]) throws -> Set<Int64> {
        try database().booksWithCovers(among: ids)
    }

    /// One page of the books kept for review, and how many there are in all.
    func reviewList(limit: Int, offset: Int) throws -> (books: [BookRecord], total: Int) {
        let database = try database()
        let books = try database.library.books(needingReviewOnly: true, limit: limit, offset: offset)
        let total = try database.writer.read { db in
            try BookRecord.filter(BookRecord.Columns.needsReview == true).fetchCount(db)
        }
        return (books, total)
    }

    func latestBooks(_ count: Int) throws -> [BookRecord] {
        try database().library.page(matching: "", order: .added, limit: count, offset: 0).books
    }

    /// The latest scans not discarded, newest first.
    func scans(limit count: Int) throws -> [ScanRecord] {
        try database().writer.read { db in
            try ScanRecord.filter(ScanRecord.Columns.discardedAt == nil).order(Column.rowID.desc).limit(count).fetchAll(
                db)
        }
    }

    func scan(id: UUID) throws -> ScanRecord? {
        try database().queue.scan(id: id)
    }

    func counts() throws -> Counts {
        let database = try database()
        let queue = try database.queue.counts()
        let spines = try database.spinesToCheckCount()
        return try database.writer.read { db in
            Counts(
                books: try BookRecord.fetchCount(db),
                needsReview: try BookRecord.filter(BookRecord.Columns.needsReview == true).fetchCount(db),
                active: (queue[.queued] ?? 0) + (queue[.uploading] ?? 0) + (queue[.analyzing] ?? 0),
                stuck: (queue[.failed] ?? 0) + (queue[.needsAttention] ?? 0), spinesToCheck: spines)
        }
    }
}
