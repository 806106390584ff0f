import Foundation
import Store
import Talaria

/// How two books of one result list are recognised as the same: by ISBN-13, else by the
/// library's title + first author key (docs/protocol.md §3).
enum BookIdentity: Hashable, Sendable {
    case isbn13(String)
    case titleAndAuthor(BookMatchKey)
}

/// The wire's books as the library's records: the protocol (Talaria) knows nothing of the library.
extension TalariaBook {
    /// ISBN-13 when known, else title + first author; `nil` when neither can identify the book.
    var identity: BookIdentity? {
        if let isbn13 { return .isbn13(isbn13) }
        return BookMatchKey(title: title, authors: authors).map(BookIdentity.titleAndAuthor)
    }

    /// The library row for this book, found by `scanID`; an unknown enrichment status reads as pending,
    /// and the reasons the decoder found for a person's review become the row's review reason.
    func record(scanID: UUID?, now: Date) -> BookRecord {
        BookRecord(
            isbn13: isbn13, isbn10: isbn10, title: title, authors: authors, format: format, publisher: publisher,
            publishedDate: publishedDate, pageCount: pageCount, coverURL: coverURL, confidence: confidence,
            enrichmentStatus: EnrichmentStatus(tolerating: enrichmentStatus), addedAt: now, scanID: scanID,
            rawJSON: rawJSON, reviewReason: reviewReasons.isEmpty ? nil : reviewReasons.joined(separator: "; "))
    }

    /// One book per ``identity``, in first-seen order; a later duplicate fills what the first
    /// lacked and the higher confidence wins. Books without identity are kept as they are.
    static func deduplicated(_ books: [TalariaBook]) -> [TalariaBook] {
        var out: [TalariaBook] = []
        var index: [BookIdentity: Int] = [:]
        for book in books {
            // A book known by ISBN is also indexed by its title key, so an ISBN-less duplicate finds it.
            let keys = [
                book.identity,
                book.isbn13 == nil
                    ? nil
                    : BookMatchKey(title: book.title, authors: book.authors)
                        .map(BookIdentity.titleAndAuthor),
            ].compactMap { $0 }
            if let position = keys.lazy.compactMap({ index[$0] }).first,
                out[position].isbn13 == nil || book.isbn13 == nil || out[position].isbn13 == book.isbn13
            {
                out[position] = merge(out[position], book)
                for key in [out[position].identity].compactMap({ $0 }) { index[key] = position }
                continue
            }
            for key in keys where index[key] == nil { index[key] = out.count }
            out.append(book)
        }
        return out
    }

    private static func merge(_ first: TalariaBook, _ second: TalariaBook) -> TalariaBook {
        let secondWins = (second.confidence ?? -1) > (first.confidence ?? -1)
        let (winner, other) = secondWins ? (second, first) : (first, second)
        var merged = winner
        merged.isbn13 = winner.isbn13 ?? other.isbn13
        merged.isbn10 = winner.isbn10 ?? other.isbn10
        if merged.title.isEmpty { merged.title = other.title }
        if merged.authors.isEmpty { merged.authors = other.authors }
        merged.format = winner.format ?? other.format
        merged.publisher = winner.publisher ?? other.publisher
        merged.publishedDate = winner.publishedDate ?? other.publishedDate
        merged.pageCount = winner.pageCount ?? other.pageCount
        merged.coverURL = winner.coverURL ?? other.coverURL
        merged.boundingBox = winner.boundingBox ?? other.boundingBox
        // Either sighting's doubts stay: the merged book carries fields from both.
        merged.reviewReasons = winner.reviewReasons + other.reviewReasons.filter { !winner.reviewReasons.contains($0) }
        return merged
    }
}
