import Foundation
import GRDB

/// A person's correction of a book (`swiftwing library edit`). `nil` leaves a field as it is.
public struct BookCorrection: Sendable, Equatable {
    public var title: String?
    public var authors: [String]?
    /// A checked ISBN-13 (the caller validates what the person typed); it replaces both ISBNs.
    public var isbn13: String?
    /// The ISBN-10 that goes with ``isbn13`` (`nil` for a 979… ISBN, which has none).
    public var isbn10: String?
    /// Keep the book in the review list after the edit (by default an edited book counts as reviewed).
    public var keepForReview = false

    public init(
        title: String? = nil, authors: [String]? = nil, isbn13: String? = nil, isbn10: String? = nil,
        keepForReview: Bool = false
    ) {
        self.title = title
        self.authors = authors
        self.isbn13 = isbn13
        self.isbn10 = isbn10
        self.keepForReview = keepForReview
    }
}

/// The reason given to a book a person asked to keep under review.
let personAskedForReview = "a person asked to review it again"

extension Library {
    /// Applies `correction` to the book `id` in one transaction and returns the book as saved.
    /// The book then counts as reviewed, unless ``BookCorrection/keepForReview`` asks otherwise.
    @discardableResult
    public func correct(id: Int64, _ correction: BookCorrection, now: Date = Date()) throws(StoreError) -> BookRecord {
        try database.write("the book was not changed") { db in
            guard let before = try BookRecord.fetchOne(db, key: id) else { throw StoreError.bookNotFound(id) }
            var book = before
            if let title = correction.title { book.title = title }
            if let authors = correction.authors { book.authors = authors }
            if let isbn13 = correction.isbn13 {
                if let other = try BookRecord.filter(BookRecord.Columns.isbn13 == isbn13).fetchOne(db),
                    let otherID = other.id, otherID != id
                {
                    throw StoreError.isbnTaken(isbn13: isbn13, bookID: otherID)
                }
                book.isbn13 = isbn13
                book.isbn10 = correction.isbn10
            }
            if correction.title != nil || correction.authors != nil || correction.isbn13 != nil { book.editedAt = now }
            if correction.keepForReview {
                book.reviewedAt = nil
                if !book.needsReview { book.reviewReason = personAskedForReview }
            } else {
                book.reviewedAt = now
            }
            book.updatedAt = now
            try book.updateChanges(db, from: before)
            return book
        }
    }

    /// "Wrong book?": the book `id` is another book (one of its candidates, or one the owner named). Its title,
    /// authors and ISBNs become that book's (an ISBN it lacks is cleared, as it belonged to the wrong book) and what
    /// was looked up for the wrong one goes (format, publisher, date, pages, cover URL); its spine, scan and time
    /// added stay. It counts as reviewed. An ISBN another book holds is refused, naming that book.
    public func replace(
        id: Int64, title: String, authors: [String], isbn13: String?, isbn10: String?, now: Date = Date()
    ) throws(StoreError) -> BookRecord {
        try database.write("the book was not changed") { db in
            guard let before = try BookRecord.fetchOne(db, key: id) else { throw StoreError.bookNotFound(id) }
            if let isbn13, let other = try BookRecord.filter(BookRecord.Columns.isbn13 == isbn13).fetchOne(db),
                let otherID = other.id, otherID != id
            {
                throw StoreError.isbnTaken(isbn13: isbn13, bookID: otherID)
            }
            var book = before
            book.title = title
            book.authors = authors
            book.isbn13 = isbn13
            book.isbn10 = isbn13 == nil ? nil : isbn10
            book.format = nil
            book.publisher = nil
            book.publishedDate = nil
            book.pageCount = nil
            book.coverURL = nil
            book.enrichmentStatus = .pending
            book.editedAt = now
            book.reviewedAt = now
            book.updatedAt = now
            try book.updateChanges(db, from: before)
            return book
        }
    }

    /// Marks the book `id` as checked by a person: it leaves the review list, its fields stay.
    @discardableResult
    public func approve(id: Int64, now: Date = Date()) throws(StoreError) -> BookRecord {
        try correct(id: id, BookCorrection(), now: now)
    }

    /// Removes the book `id` from the library (and from the search) and returns what it was.
    @discardableResult
    public func delete(id: Int64) throws(StoreError) -> BookRecord {
        try database.write("the book was not deleted") { db in
            guard let book = try BookRecord.fetchOne(db, key: id) else { throw StoreError.bookNotFound(id) }
            try book.delete(db)
            return book
        }
    }

    /// The book `id`, or ``StoreError/bookNotFound(_:)``.
    public func existingBook(id: Int64) throws(StoreError) -> BookRecord {
        guard let book = try book(id: id) else { throw StoreError.bookNotFound(id) }
        return book
    }
}
