import Foundation
import GRDB

extension AppDatabase {
    /// The schema, as named migrations. A released migration is never edited: add `v2`, `v3`, ….
    ///
    /// Invariants live in the schema so that no code path can break them: NOT NULL, CHECK on every
    /// enum and range, UNIQUE on ISBN-13 and on backend job ids, foreign keys, and a trigger that
    /// makes `done` final (a done scan re-uploaded would add its books twice).
    public static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()

        migrator.registerMigration("v1") { db in
            try db.create(table: "scan") { t in
                // The scan id is a lowercase UUID string; it is also the upload's Idempotency-Key.
                t.primaryKey("id", .text).check { length($0) == 36 }
                // When the shutter was pressed: CLOCK_MONOTONIC ns (0 when unknown, e.g. a recovered
                // file) and wall-clock time (the Pi may lack an RTC: do not order by it).
                t.column("pressedAt", .integer).notNull().check { $0 >= 0 }
                t.column("pressedWallAt", .datetime).notNull()
                // The monotonic timestamp of the frame that was kept.
                t.column("frameAt", .integer).check { $0 == nil || $0 >= 0 }
                t.column("createdAt", .datetime).notNull()
                t.column("updatedAt", .datetime).notNull()
                t.column("state", .text).notNull().defaults(to: ScanState.queued.rawValue)
                    .check(sql: "state IN (\(ScanState.allCases.map { "'\($0.rawValue)'" }.joined(separator: ", ")))")
                t.column("attempts", .integer).notNull().defaults(to: 0).check { $0 >= 0 }
                t.column("nextAttemptAt", .datetime)
                // From the backend's 202: job id, progress stream, status URL, per-job token (secret).
                t.column("jobId", .text).unique()
                t.column("streamUrl", .text)
                t.column("statusUrl", .text)
                t.column("jobToken", .text)
                t.column("lastEventId", .text)
                t.column("progress", .double).notNull().defaults(to: 0).check { $0 >= 0 && $0 <= 1 }
                t.column("lastError", .text)
                t.column("retryable", .boolean).check { $0 == nil || [0, 1].contains($0) }
                // The photo and thumbnail, as file names inside <state>/spool.
                t.column("imagePath", .text).notNull().check { length($0) > 0 }
                t.column("imageSize", .integer).notNull().check { $0 > 0 }
                t.column("width", .integer).notNull().check { $0 > 0 }
                t.column("height", .integer).notNull().check { $0 > 0 }
                t.column("thumbnailPath", .text)
                // Re-queued by reconciliation from a spool file whose row never committed.
                t.column("recovered", .boolean).notNull().defaults(to: false).check { [0, 1].contains($0) }
                // Set when a person discards the scan; it then leaves every list of work.
                t.column("discardedAt", .datetime)
                // An analyzing scan has a job to follow.
                t.check(sql: "state <> 'analyzing' OR jobId IS NOT NULL")
            }
            try db.create(index: "scan_on_state", on: "scan", columns: ["state"])
            try db.execute(
                sql: """
                    CREATE TRIGGER scan_done_is_final
                    BEFORE UPDATE OF state ON scan
                    WHEN OLD.state = 'done' AND NEW.state <> 'done'
                    BEGIN
                        SELECT RAISE(ABORT, 'a done scan cannot change state');
                    END
                    """)

            try db.create(table: "book") { t in
                t.autoIncrementedPrimaryKey("id")
                t.column("isbn13", .text).unique()
                    .check(sql: "isbn13 IS NULL OR (length(isbn13) = 13 AND isbn13 NOT GLOB '*[^0-9]*')")
                t.column("isbn10", .text)
                    .check(sql: "isbn10 IS NULL OR isbn10 GLOB '[0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9X]'")
                t.column("title", .text).notNull()
                // A JSON array of names: lossless (names may hold commas) and still plain words for FTS5.
                t.column("authors", .text).notNull().defaults(to: "[]")
                    .check(sql: "json_valid(authors) AND json_type(authors) = 'array'")
                t.column("format", .text)
                t.column("publisher", .text)
                t.column("publishedDate", .text)  // "YYYY-MM-DD", "YYYY-MM" or "YYYY", as the backend gave it
                t.column("pageCount", .integer).check { $0 == nil || $0 > 0 }
                t.column("coverUrl", .text)
                t.column("confidence", .double).check { $0 == nil || ($0 >= 0 && $0 <= 1) }
                t.column("enrichmentStatus", .text).notNull().defaults(to: EnrichmentStatus.pending.rawValue)
                    .check(
                        sql:
                            "enrichmentStatus IN (\(EnrichmentStatus.allCases.map { "'\($0.rawValue)'" }.joined(separator: ", ")))"
                    )
                // Computed by SQLite, never written: confidence below 0.8, or the backend asked for review.
                t.column("needsReview", .boolean)
                    .generatedAs(sql: "coalesce(confidence < 0.8, 0) OR enrichmentStatus = 'review_needed'", .stored)
                t.column("addedAt", .datetime).notNull()
                t.column("updatedAt", .datetime).notNull()
                t.column("scanId", .text).indexed().references("scan", onDelete: .setNull)
                t.column("rawJSON", .text).check(sql: "rawJSON IS NULL OR json_valid(rawJSON)")
            }

            // Full-text search over title, authors and ISBNs, kept in sync with `book` by triggers.
            try db.create(virtualTable: "book_ft", using: FTS5()) { t in
                t.synchronize(withTable: "book")
                t.tokenizer = .unicode61()  // case- and diacritic-insensitive words
                t.column("title")
                t.column("authors")
                t.column("isbn13")
                t.column("isbn10")
            }
        }

        // v2: the uplink. A job re-sent after the server failed it gets its own Idempotency-Key;
        // a done scan owes the backend a cleanup until it is acknowledged.
        migrator.registerMigration("v2") { db in
            try db.alter(table: "scan") { t in
                t.add(column: "uploadKey", .text).check { $0 == nil || length($0) > 0 }
                t.add(column: "cleanupPending", .boolean).notNull().defaults(to: false)
                    .check { [0, 1].contains($0) }
                t.add(column: "cleanupAttempts", .integer).notNull().defaults(to: 0).check { $0 >= 0 }
            }
            try db.create(index: "scan_on_uploadKey", on: "scan", columns: ["uploadKey"], unique: true)
            // Only a done scan can owe a cleanup, and only for a job it had.
            try db.execute(
                sql: """
                    CREATE TRIGGER scan_cleanup_needs_done_job
                    BEFORE UPDATE OF cleanupPending ON scan
                    WHEN NEW.cleanupPending = 1 AND (NEW.state <> 'done' OR NEW.jobId IS NULL)
                    BEGIN
                        SELECT RAISE(ABORT, 'only a done scan with a job can owe a cleanup');
                    END
                    """)
        }

        // v3-identify: what the device tells about a frame by itself. A scan keeps its frame's
        // quality and the barcodes read in it; a book says whether the backend or a barcode found it.
        migrator.registerMigration("v3-identify") { db in
            let verdicts = ScanQuality.Verdict.allCases.map { "'\($0.rawValue)'" }.joined(separator: ", ")
            let sources = BookSource.allCases.map { "'\($0.rawValue)'" }.joined(separator: ", ")
            try db.alter(table: "scan") { t in
                // NULL for scans taken before the quality check (or recovered from the spool).
                t.add(column: "qualityVerdict", .text)
                    .check(sql: "qualityVerdict IS NULL OR qualityVerdict IN (\(verdicts))")
                t.add(column: "sharpness", .double).check { $0 == nil || $0 >= 0 }
                t.add(column: "exposureMean", .double).check { $0 == nil || ($0 >= 0 && $0 <= 255) }
                t.add(column: "exposureShadows", .double).check { $0 == nil || ($0 >= 0 && $0 <= 1) }
                t.add(column: "exposureHighlights", .double).check { $0 == nil || ($0 >= 0 && $0 <= 1) }
                // A JSON array of {"format", "text"}: the codes read in the frame.
                t.add(column: "barcodes", .text).notNull().defaults(to: "[]")
                    .check(sql: "json_valid(barcodes) AND json_type(barcodes) = 'array'")
                // A person asked for a poor frame to be sent anyway.
                t.add(column: "uploadDespiteQuality", .boolean).notNull().defaults(to: false)
                    .check { [0, 1].contains($0) }
            }
            try db.alter(table: "book") { t in
                t.add(column: "source", .text).notNull().defaults(to: BookSource.backend.rawValue)
                    .check(sql: "source IN (\(sources))")
            }
            // The figures and the verdict come together, or not at all.
            let events = [("insert", "INSERT"), ("update", "UPDATE OF qualityVerdict, sharpness, exposureMean")]
            for (name, event) in events {
                try db.execute(
                    sql: """
                        CREATE TRIGGER scan_quality_is_whole_on_\(name)
                        BEFORE \(event) ON scan
                        WHEN (NEW.qualityVerdict IS NULL) <> (NEW.sharpness IS NULL)
                            OR (NEW.qualityVerdict IS NULL) <> (NEW.exposureMean IS NULL)
                        BEGIN
                            SELECT RAISE(ABORT, 'a scan quality needs its verdict, sharpness and exposure together');
                        END
                        """)
            }
        }

        // v4-review: a book the device does not trust by itself carries the reason (fields of the
        // wrong type, no confidence), a person's review ends the need for one, and a person's edit is
        // dated. `needsReview` is a stored
        // generated column, which SQLite cannot alter: the table is rebuilt with the wider rule.
        migrator.registerMigration("v4-review") { db in
            try db.alter(table: "book") { t in
                t.add(column: "reviewReason", .text).check { $0 == nil || length($0) > 0 }
                t.add(column: "reviewedAt", .datetime)
                t.add(column: "editedAt", .datetime)
            }
            try rebuildBookTable(
                db,
                needsReview: """
                    reviewedAt IS NULL AND (coalesce(confidence < 0.8, 0) OR enrichmentStatus = 'review_needed'
                        OR reviewReason IS NOT NULL)
                    """)
            // Backend books stored before this rule without a confidence were trusted silently.
            try db.execute(
                sql: """
                    UPDATE book SET reviewReason = 'the backend gave no confidence'
                    WHERE source = 'backend' AND confidence IS NULL AND rawJSON IS NOT NULL
                    """)
        }

        // v5-match-key: a book's title + first author key (``BookMatchKey``) stored beside it and indexed, so the
        // dedupe of a job's books looks each one up instead of reading the whole library. Every save of a
        // ``BookRecord`` writes it. A key the dedupe cannot trust is still never missed: NULL (a row inserted by
        // SQL that bypassed ``BookRecord``), or the row's id in `book_match_stale` (SQL changed its title or
        // authors and not the key); the dedupe then judges such a row by its own title and authors. "" is a
        // title with no key. The key is computed here by today's rule: a change of the rule needs a migration
        // that recomputes it.
        migrator.registerMigration("v5-match-key") { db in
            try db.alter(table: "book") { t in
                t.add(column: "matchTitle", .text)
                t.add(column: "matchAuthor", .text)
            }
            let rows = try Row.fetchCursor(db, sql: "SELECT id, title, authors FROM book")
            var keys: [(id: Int64, key: BookMatchKey?)] = []
            while let row = try rows.next() {
                let authors = (try? JSONDecoder().decode([String].self, from: Data((row["authors"] as String).utf8)))
                keys.append((row["id"], BookMatchKey(title: row["title"], authors: authors ?? [])))
            }
            let update = try db.makeStatement(sql: "UPDATE book SET matchTitle = ?, matchAuthor = ? WHERE id = ?")
            for (id, key) in keys {
                try update.execute(arguments: [key?.title ?? "", key?.author ?? "", id])
            }
            try db.create(index: "book_on_matchKey", on: "book", columns: ["matchTitle", "matchAuthor"])
            // A table of its own: a trigger that wrote `book` again would run the full-text triggers out of order.
            try db.create(table: "book_match_stale") { t in
                t.primaryKey("bookId", .integer)
            }
            try db.execute(
                sql: """
                    CREATE TRIGGER book_match_key_goes_stale
                    AFTER UPDATE OF title, authors ON book
                    WHEN NEW.matchTitle IS OLD.matchTitle AND NEW.matchAuthor IS OLD.matchAuthor
                    BEGIN
                        INSERT OR IGNORE INTO book_match_stale (bookId) VALUES (NEW.id);
                    END;
                    CREATE TRIGGER book_match_stale_on_delete
                    AFTER DELETE ON book
                    BEGIN
                        DELETE FROM book_match_stale WHERE bookId = OLD.id;
                    END
                    """)
            // The full-text index follows the columns it holds, not every update of a book (a stored key, a
            // confidence): GRDB's trigger, narrowed to them.
            try db.execute(
                sql: """
                    DROP TRIGGER "__book_ft_au";
                    CREATE TRIGGER "__book_ft_au" AFTER UPDATE OF id, title, authors, isbn13, isbn10 ON book BEGIN
                        INSERT INTO book_ft (book_ft, rowid, title, authors, isbn13, isbn10)
                            VALUES ('delete', old.id, old.title, old.authors, old.isbn13, old.isbn10);
                        INSERT INTO book_ft (rowid, title, authors, isbn13, isbn10)
                            VALUES (new.id, new.title, new.authors, new.isbn13, new.isbn10);
                    END
                    """)
        }

        // v6-book-cover: a book's own picture (its spine cut from the scan's photo), kept when the photo is deleted.
        // A table of its own keyed by the book: the book rows stay small for the library's pages and searches, the
        // picture goes with its book (ON DELETE CASCADE), and a book has at most one. The checks hold what every
        // reader relies on: a JPEG (it starts with SOI), small (a tile, never a photo: ``BookCover/maximumBytes``,
        // ``BookCover/maximumLongEdge``), and its size in pixels.
        migrator.registerMigration("v6-book-cover") { db in
            try db.create(table: "bookCover") { t in
                t.primaryKey("bookId", .integer).references("book", onDelete: .cascade)
                t.column("jpeg", .blob).notNull()
                    .check(
                        sql: """
                            typeof(jpeg) = 'blob' AND length(jpeg) BETWEEN 4 AND 131072
                                AND substr(jpeg, 1, 3) = x'FFD8FF'
                            """)
                t.column("width", .integer).notNull()
                    .check(sql: "width BETWEEN 1 AND 640")
                t.column("height", .integer).notNull()
                    .check(sql: "height BETWEEN 1 AND 640")
                t.column("createdAt", .datetime).notNull()
            }
        }

        // The library page's newest-first order read from an index instead of a sort of every book per load
        // (10,000 books: 64.5 ms to 0.03 ms for the page's ids, measured on a copy of a library).
        migrator.registerMigration("v7-added-order") { db in
            try db.create(index: "book_on_addedAt", on: "book", columns: ["addedAt", "id"])
        }

        // v8-spine-to-check: spines the backend read but did not identify (docs/protocol.md §6), kept so nothing
        // read is lost (SpinesToCheck.swift).
        migrator.registerMigration("v8-spine-to-check", migrate: AppDatabase.createSpineToCheck)

        return migrator
    }

    /// Rebuilds `book` (SQLite's documented way to change a column it cannot alter) with `needsReview`
    /// generated from `needsReview`, keeping every row, its id, the id sequence, the index and the
    /// full-text search.
    private static func rebuildBookTable(_ db: Database, needsReview: String) throws {
        let tableSQL = "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'book'"
        guard let create = try String.fetchOne(db, sql: tableSQL),
            let generated = create.range(of: #""needsReview" BOOLEAN GENERATED ALWAYS AS ("#),
            let stored = create.range(of: ") STORED", range: generated.upperBound..<create.endIndex),
            let name = create.range(of: #"CREATE TABLE "book""#)
        else {
            throw DatabaseError(message: "the book table does not have the shape this migration expects")
        }
        var rebuilt = create
        rebuilt.replaceSubrange(generated.upperBound..<stored.lowerBound, with: needsReview)
        rebuilt.replaceSubrange(name, with: #"CREATE TABLE "book_rebuilt""#)
        let columns = try db.columns(in: "book").map(\.name).filter { $0 != "needsReview" }
            .map { $0.quotedDatabaseIdentifier }.joined(separator: ", ")
        let sequence = try Int64.fetchOne(db, sql: "SELECT seq FROM sqlite_sequence WHERE name = 'book'")

        try db.drop(table: "book_ft")
        try db.execute(sql: rebuilt)
        try db.execute(sql: "INSERT INTO book_rebuilt (\(columns)) SELECT \(columns) FROM book")
        try db.drop(table: "book")
        try db.rename(table: "book_rebuilt", to: "book")
        if let sequence {
            try db.execute(
                sql: "UPDATE sqlite_sequence SET seq = max(seq, ?) WHERE name = 'book'", arguments: [sequence])
        }
        try db.create(index: "book_on_scanId", on: "book", columns: ["scanId"])
        // The search as v1 made it; `synchronize` re-reads every row into the index.
        try db.create(virtualTable: "book_ft", using: FTS5()) { t in
            t.synchronize(withTable: "book")
            t.tokenizer = .unicode61()
            for column in ["title", "authors", "isbn13", "isbn10"] { t.column(column) }
        }
    }
}
