import Foundation
import GRDB

extension Library {
    /// Books known by their ISBN-13 alone (no title yet: a barcode read on the device, or a backend
    /// result that carried only the ISBN) whose catalogue lookup is still owed: `pending`, or
    /// `error` (the last round failed; it is tried again). Oldest first.
    public func booksAwaitingEnrichment(limit: Int = 50) throws(StoreError) -> [BookRecord] {
        try database.read("nothing was read") { db in
            try BookRecord
                .filter(BookRecord.Columns.isbn13 != nil && BookRecord.Columns.title == "")
                .filter([EnrichmentStatus.pending, .error].contains(BookRecord.Columns.enrichmentStatus))
                .order(BookRecord.Columns.id).limit(limit).fetchAll(db)
        }
    }

    /// Records a catalogue lookup of book `id`: its status, and with `completion` the fields the
    /// catalogue knows. What the row already has is kept; only a missing title, authors, publisher,
    /// date, page count, cover or ISBN-10 is filled. Returns the row, or `nil` when it is gone.
    @discardableResult
    public func recordEnrichment(
        _ id: Int64, status: EnrichmentStatus, completion: BookRecord? = nil, now: Date = Date()
    ) throws(StoreError) -> BookRecord? {
        try database.write("the catalogue's answer was not saved (the book is looked up again)") { db in
            guard let before = try BookRecord.fetchOne(db, key: id) else { return nil }
            var book = before
            if let completion {
                if book.title.isEmpty { book.title = completion.title }
                if book.authors.isEmpty { book.authors = completion.authors }
                book.isbn10 = book.isbn10 ?? completion.isbn10
                book.publisher = book.publisher ?? completion.publisher
                book.publishedDate = book.publishedDate ?? completion.publishedDate
                book.pageCount = book.pageCount ?? completion.pageCount
                book.coverURL = book.coverURL ?? completion.coverURL
            }
            book.enrichmentStatus = status
            book.updatedAt = now
            try book.updateChanges(db, from: before)
            return book
        }
    }
}
