import Foundation
import GRDB
import Testing

@testable import Store

@Suite("Schema invariants")
struct SchemaTests {
    /// Runs raw SQL and returns the SQLite result code it failed with, or nil.
    private func failure(_ database: AppDatabase, _ sql: String, _ arguments: StatementArguments = []) -> ResultCode? {
        do {
            try database.writer.write { try $0.execute(sql: sql, arguments: arguments) }
            return nil
        } catch let error as DatabaseError {
            return error.extendedResultCode
        } catch {
            return nil
        }
    }

    @Test("CHECK constraints reject a bad state, a negative attempt count and progress beyond 1")
    func scanChecks() throws {
        let database = try AppDatabase.inMemory()
        let scan = try database.queue.enqueue(newScan())
        let id = scan.idempotencyKey
        #expect(failure(database, "UPDATE scan SET state = 'bogus' WHERE id = ?", [id]) == .SQLITE_CONSTRAINT_CHECK)
        #expect(failure(database, "UPDATE scan SET attempts = -1 WHERE id = ?", [id]) == .SQLITE_CONSTRAINT_CHECK)
        #expect(failure(database, "UPDATE scan SET progress = 1.5 WHERE id = ?", [id]) == .SQLITE_CONSTRAINT_CHECK)
        #expect(failure(database, "UPDATE scan SET imageSize = 0 WHERE id = ?", [id]) == .SQLITE_CONSTRAINT_CHECK)
        #expect(failure(database, "UPDATE scan SET imagePath = NULL WHERE id = ?", [id]) == .SQLITE_CONSTRAINT_NOTNULL)
        // analyzing needs a job id
        #expect(failure(database, "UPDATE scan SET state = 'analyzing' WHERE id = ?", [id]) == .SQLITE_CONSTRAINT_CHECK)
        #expect(failure(database, "UPDATE scan SET state = 'needs_attention' WHERE id = ?", [id]) == nil)
    }

    @Test("the API turns a violated constraint into a typed error")
    func typedConstraintError() throws {
        let database = try AppDatabase.inMemory()
        let scan = try database.queue.enqueue(newScan())
        #expect {
            try database.queue.updateState(scan.id, to: .analyzing)  // no job id
        } throws: { error in
            guard case .constraintViolated = error as? StoreError else { return false }
            return true
        }
        // The same id twice (a repeated Idempotency-Key) is refused.
        #expect(throws: StoreError.self) { try database.queue.enqueue(newScan(id: scan.id)) }
    }

    @Test("confidence must lie in 0…1; 1.5 is refused")
    func confidenceRange() throws {
        let database = try AppDatabase.inMemory()
        #expect {
            try database.library.insert(BookRecord(title: "Too Sure", confidence: 1.5))
        } throws: { error in
            guard case .constraintViolated = error as? StoreError else { return false }
            return true
        }
        #expect(throws: StoreError.self) { try database.library.insert(BookRecord(title: "Unsure", confidence: -0.1)) }
        try database.library.insert(BookRecord(title: "Sure", confidence: 1))
        try database.library.insert(BookRecord(title: "Unknown"))
        #expect(try database.library.bookCount() == 2)
    }

    @Test("ISBN-13 is unique and must be 13 digits; ISBN-10 is 9 digits and a digit or X")
    func isbnRules() throws {
        let database = try AppDatabase.inMemory()
        try database.library.insert(BookRecord(isbn13: "9780441013593", isbn10: "044101359X", title: "Dune"))
        #expect(throws: StoreError.self) {
            try database.library.insert(BookRecord(isbn13: "9780441013593", title: "Dune again"))
        }
        for bad in ["978-0441013593", "978044101359", "97804410135930", "978044101359X"] {
            #expect(throws: StoreError.self) { try database.library.insert(BookRecord(isbn13: bad, title: bad)) }
        }
        #expect(throws: StoreError.self) { try database.library.insert(BookRecord(isbn10: "04410135", title: "short")) }
        // Books without ISBN are many.
        try database.library.insert(BookRecord(title: "No ISBN 1"))
        try database.library.insert(BookRecord(title: "No ISBN 2"))
        #expect(try database.library.bookCount() == 3)
    }

    @Test(
        "needsReview is computed by SQLite: confidence below 0.8, or review_needed",
        arguments: [
            (0.79 as Double?, EnrichmentStatus.success, true),
            (0.8, .success, false),
            (0.95, .success, false),
            (nil, .success, false),
            (0.0, .pending, true),
            (0.99, .reviewNeeded, true),
        ])
    func needsReview(confidence: Double?, status: EnrichmentStatus, expected: Bool) throws {
        let database = try AppDatabase.inMemory()
        let book = try database.library.insert(BookRecord(title: "T", confidence: confidence, enrichmentStatus: status))
        let stored = try database.writer.read { db in
            try Bool.fetchOne(db, sql: "SELECT needsReview FROM book WHERE id = ?", arguments: [book.id])
        }
        #expect(stored == expected)
        #expect(book.needsReview == expected)
        #expect(try database.library.books(needingReviewOnly: true).count == (expected ? 1 : 0))
        // It cannot be written.
        #expect(throws: (any Error).self) {
            try database.writer.write { try $0.execute(sql: "UPDATE book SET needsReview = 0") }
        }
    }

    @Test("a book's scan link is cleared when the scan row is deleted")
    func foreignKeySetNull() throws {
        let database = try AppDatabase.inMemory()
        let scan = try database.queue.enqueue(newScan())
        let book = try database.library.insert(BookRecord(title: "Linked", scanID: scan.id))
        #expect(book.scanID == scan.id)
        #expect(throws: (any Error).self) {
            try database.library.insert(BookRecord(title: "Dangling", scanID: UUID()))
        }
        _ = try database.writer.write { try ScanRecord.deleteAll($0) }
        #expect(try database.library.book(id: book.id!)?.scanID == nil)
    }

    @Test("authors must be a JSON array; the record round-trips names with commas")
    func authorsAsJSON() throws {
        let database = try AppDatabase.inMemory()
        let book = try database.library.insert(
            BookRecord(title: "Silmarillion", authors: ["Tolkien, J. R. R.", "Tolkien, Christopher"]))
        #expect(try database.library.book(id: book.id!)?.authors == ["Tolkien, J. R. R.", "Tolkien, Christopher"])
        #expect(throws: (any Error).self) {
            try database.writer.write { try $0.execute(sql: "UPDATE book SET authors = 'Tolkien'") }
        }
    }
}
