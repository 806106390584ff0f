import Foundation
import GRDB

/// The library: books found by scans, with full-text search.
///
/// Minimal on purpose: ``insert(_:)``, ``upsert(_:)`` keyed by ISBN-13, listing, counting and
/// search. Matching books without an ISBN (normalised title + author) is left to the backend
/// integration.
public struct Library: Sendable {
    public let database: AppDatabase

    public init(database: AppDatabase) {
        self.database = database
    }

    /// Inserts a new book. Fails with ``StoreError/constraintViolated(message:)`` when its ISBN-13
    /// is already in the library (use ``upsert(_:)``).
    @discardableResult
    public func insert(_ book: BookRecord) throws(StoreError) -> BookRecord {
        try database.write("the book was not added") { db in try book.inserted(db) }
    }

    /// Inserts the book, or, when a book with the same ISBN-13 exists, updates that one: the new
    /// values win where they are present, the old ones stay where the new record has `nil`;
    /// `id`, `addedAt` and `scanID` stay the first ones. Books without ISBN-13 are inserted.
    @discardableResult
    public func upsert(_ book: BookRecord, now: Date = Date()) throws(StoreError) -> BookRecord {
        try database.write("the book was not added") { db in try Self.upsert(book, now: now, db) }
    }

    /// The book with this row id.
    public func book(id: Int64) throws(StoreError) -> BookRecord? {
        try database.read("nothing was read") { db in try BookRecord.fetchOne(db, key: id) }
    }

    /// The book with this ISBN-13.
    public func book(isbn13: String) throws(StoreError) -> BookRecord? {
        try database.read("nothing was read") { db in
            try BookRecord.filter(BookRecord.Columns.isbn13 == isbn13).fetchOne(db)
        }
    }

    /// All books in the order they were added (optionally only those needing review).
    public func books(needingReviewOnly: Bool = false, limit: Int? = nil, offset: Int = 0) throws(StoreError)
        -> [BookRecord]
    {
        try database.read("nothing was read") { db in
            var request = BookRecord.order(BookRecord.Columns.id)
            if needingReviewOnly { request = request.filter(BookRecord.Columns.needsReview == true) }
            if let limit { request = request.limit(limit, offset: offset) }
            return try request.fetchAll(db)
        }
    }

    /// The books found by one scan.
    public func books(fromScan id: UUID) throws(StoreError) -> [BookRecord] {
        try database.read("nothing was read") { db in
            try BookRecord.filter(BookRecord.Columns.scanID == id.uuidString.lowercased())
                .order(BookRecord.Columns.id).fetchAll(db)
        }
    }

    public func bookCount() throws(StoreError) -> Int {
        try database.read("nothing was read") { db in try BookRecord.fetchCount(db) }
    }

    /// Books matching what a person typed: every word, as a prefix, in the title, the authors or an
    /// ISBN; best matches first (FTS5 rank). An ISBN typed with hyphens or spaces is found too.
    /// An empty or punctuation-only query matches nothing.
    public func searchBooks(matching query: String, limit: Int = 100) throws(StoreError) -> [BookRecord] {
        guard let pattern = Self.searchPattern(query) else { return [] }
        return try database.read("nothing was read") { db in
            try BookRecord.fetchAll(
                db,
                sql: """
                    SELECT book.* FROM book
                    JOIN book_ft ON book_ft.rowid = book.id
                    WHERE book_ft MATCH ?
                    ORDER BY book_ft.rank, book.id
                    LIMIT ?
                    """,
                arguments: [pattern, limit])
        }
    }

    /// The book with this ISBN-13, by a statement prepared once per connection (a job may bring 200 books).
    static func book(isbn13: String, _ db: Database) throws -> BookRecord? {
        try BookRecord.fetchOne(db.cachedStatement(sql: "SELECT * FROM book WHERE isbn13 = ?"), arguments: [isbn13])
    }

    static func upsert(_ book: BookRecord, now: Date, _ db: Database) throws -> BookRecord {
        guard let isbn13 = book.isbn13, let existing = try Self.book(isbn13: isbn13, db) else {
            var fresh = book
            fresh.id = nil
            return try fresh.inserted(db)
        }
        let merged = existing.merged(with: book, now: now)
        try merged.updateChanges(db, from: existing)
        return merged
    }
}

extension BookRecord {
    /// This row with what a newer sighting of the same book adds: known values win over missing
    /// ones, the row keeps its id, ISBN-13, added date and first scan. A row a person approved or
    /// edited keeps what the person saw and only has its gaps filled; another row takes the newer
    /// values, and the reasons for review of both sightings.
    func merged(with book: BookRecord, now: Date) -> BookRecord {
        let personChecked = reviewedAt != nil || editedAt != nil
        func pick<Value>(_ mine: Value?, _ theirs: Value?) -> Value? {
            personChecked ? (mine ?? theirs) : (theirs ?? mine)
        }
        var merged = self
        merged.isbn10 = pick(isbn10, book.isbn10)
        if !book.title.isEmpty, !(personChecked && !title.isEmpty) { merged.title = book.title }
        if !book.authors.isEmpty, !(personChecked && !authors.isEmpty) { merged.authors = book.authors }
        merged.format = pick(format, book.format)
        merged.publisher = pick(publisher, book.publisher)
        merged.publishedDate = pick(publishedDate, book.publishedDate)
        merged.pageCount = pick(pageCount, book.pageCount)
        merged.coverURL = pick(coverURL, book.coverURL)
        merged.confidence = pick(confidence, book.confidence)
        if !personChecked { merged.enrichmentStatus = book.enrichmentStatus }
        merged.rawJSON = pick(rawJSON, book.rawJSON)
        merged.reviewReason = personChecked ? reviewReason : Self.joinedReasons(reviewReason, book.reviewReason)
        merged.scanID = scanID ?? book.scanID
        merged.updatedAt = now
        return merged
    }

    /// The reasons of both (each a `; `-separated list), each once.
    static func joinedReasons(_ first: String?, _ second: String?) -> String? {
        guard let first, let second else { return first ?? second }
        var reasons = first.components(separatedBy: "; ")
        for reason in second.components(separatedBy: "; ") where !reasons.contains(reason) { reasons.append(reason) }
        return reasons.joined(separator: "; ")
    }
}

extension AppDatabase {
    /// The terminal step of a scan, in one transaction: its books go into the library (upserted by
    /// ISBN-13, each linked to the scan) and the scan becomes `done` with progress 1 and its job
    /// token forgotten. Idempotent: for a scan already `done` (a terminal event seen twice, a
    /// restart) nothing is added again and the scan's existing books are returned.
    @discardableResult
    public func completeScan(
        _ id: UUID, books: [BookRecord], now: Date = Date()
    ) throws(StoreError) -> (scan: ScanRecord, books: [BookRecord]) {
        try completeScan(id, books: books, now: now, upsert: Library.upsert)
    }

    /// The transaction both `completeScan` variants share; they differ only in how a book finds its row.
    func completeScan(
        _ id: UUID, books: [BookRecord], now: Date,
        upsert: @escaping (BookRecord, Date, Database) throws -> BookRecord
    ) throws(StoreError) -> (scan: ScanRecord, books: [BookRecord]) {
        try write("the scan's results were not saved (it stays analyzing and is fetched again)") { db in
            try Self.completeScan(id, books: books, now: now, upsert: upsert, db)
        }
    }

    /// The body of the terminal transaction, for callers that are already inside one.
    static func completeScan(
        _ id: UUID, books: [BookRecord], now: Date,
        upsert: (BookRecord, Date, Database) throws -> BookRecord, _ db: Database
    ) throws -> (scan: ScanRecord, books: [BookRecord]) {
        try completeScan(id, books: books, now: now, db) { books, db in try books.map { try upsert($0, now, db) } }
    }

    /// The body of the terminal transaction, with `save` putting the scan's books (each linked to it) into the
    /// library and returning what each became.
    static func completeScan(
        _ id: UUID, books: [BookRecord], now: Date, _ db: Database,
        save: ([BookRecord], Database) throws -> [BookRecord]
    ) throws -> (scan: ScanRecord, books: [BookRecord]) {
        guard var scan = try ScanQueue.fetch(db, id) else { throw StoreError.scanNotFound(id) }
        if scan.state == .done {
            let existing = try BookRecord.filter(BookRecord.Columns.scanID == id.uuidString.lowercased())
                .order(BookRecord.Columns.id).fetchAll(db)
            return (scan, existing)
        }
        let saved = try save(
            books.map { book in
                var linked = book
                linked.scanID = id
                linked.addedAt = now
                linked.updatedAt = now
                return linked
            }, db)
        let before = scan
        scan.state = .done
        scan.progress = 1
        scan.jobToken = nil
        // The backend keeps the job and the photo until told otherwise (docs/protocol.md §4).
        scan.cleanupPending = scan.jobID != nil
        scan.lastError = nil
        scan.retryable = nil
        scan.nextAttemptAt = nil
        scan.updatedAt = now
        try scan.updateChanges(db, from: before)
        return (scan, saved)
    }
}
