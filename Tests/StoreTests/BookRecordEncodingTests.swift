import Foundation
import GRDB
import Testing

@testable import Store

/// `BookRecord` writes its row column by column: every stored property, in the formats its `Codable`
/// reading expects, and the match key with it.
@Suite("Book records: the row written column by column")
struct BookRecordEncodingTests {
    static let full = BookRecord(
        isbn13: "9780441013593", isbn10: "0441013597", title: "Dune: Book One",
        authors: ["Frank Herbert", "A/B \"C\" é"],
        format: "paperback", publisher: "Ace", publishedDate: "1990-09", pageCount: 535, coverURL: "https://x/c.jpg",
        confidence: 0.75, enrichmentStatus: .reviewNeeded, addedAt: Date(timeIntervalSince1970: 1_795_000_000.25),
        updatedAt: Date(timeIntervalSince1970: 1_795_000_100.5), scanID: nil, rawJSON: #"{"title":"Dune"}"#,
        reviewReason: "the backend asked for review", reviewedAt: Date(timeIntervalSince1970: 1_795_000_200),
        editedAt: Date(timeIntervalSince1970: 1_795_000_300))

    @Test("every stored property has its column, the match key two more, and they are the table's columns")
    func everyPropertyWritten() throws {
        let properties = Mirror(reflecting: Self.full).children.compactMap(\.label)
        #expect(BookRecord.storedColumns.count == properties.count + 2, "\(BookRecord.storedColumns) for \(properties)")
        let values = try Self.full.storedValues()
        #expect(values.count == BookRecord.storedColumns.count)
        let key = Dictionary(uniqueKeysWithValues: zip(BookRecord.storedColumns, values))
        #expect(key["matchTitle"] == "dune".databaseValue)
        #expect(key["matchAuthor"] == "frank herbert".databaseValue)
        let database = try AppDatabase.inMemory()
        let tableColumns = try database.writer.read { db in try db.columns(in: "book").map(\.name) }
        #expect(Set(tableColumns) == Set(BookRecord.storedColumns + ["needsReview"]))
    }

    @Test("a full record reads back as it was written; its authors are the JSON text Codable wrote")
    func roundTrip() throws {
        let database = try AppDatabase.inMemory()
        var book = Self.full
        book.source = .barcode
        let scan = try database.queue.enqueue(newScan())
        book.scanID = scan.id
        let inserted = try database.library.insert(book)
        let id = try #require(inserted.id)
        let read = try #require(try database.library.book(id: id))
        #expect(read == inserted)
        let authors = try database.writer.read { db in
            try String.fetchOne(db, sql: "SELECT authors FROM book WHERE id = ?", arguments: [inserted.id])
        }
        let codable = try BookRecord.databaseJSONEncoder(for: "authors").encode(book.authors)
        #expect(authors == String(decoding: codable, as: UTF8.self))
        #expect(try database.library.book(matching: #require(book.matchKey))?.id == inserted.id)
    }
}
