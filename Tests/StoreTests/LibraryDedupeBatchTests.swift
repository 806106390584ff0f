import Foundation
import GRDB
import SwiftWingTesting
import Testing

@testable import Store

/// A job's books committed as one batch, which reads the stored books they may meet once and then keeps them as
/// the database has them, against the same books saved one at a time (each reading the database afresh).
@Suite("Library: a job's books committed as one batch")
struct LibraryDedupeBatchTests {
    @Test("the batch's one read of the candidates searches indexes: no scan of the book table")
    func candidatesQueryPlan() throws {
        let database = try AppDatabase.inMemory()
        let details = try database.writer.read { db in
            try Row.fetchAll(
                db, sql: "EXPLAIN QUERY PLAN " + MatchingBatch.candidatesSQL,
                arguments: [#"[["emma","jane austen"]]"#, #"["9780141439518"]"#]
            ).map { $0["detail"] as String }
        }
        #expect(details.contains { $0.contains("book_on_matchKey (matchTitle=? AND matchAuthor=?)") }, "\(details)")
        #expect(details.contains { $0.contains("(isbn13=?)") }, "\(details)")
        let scansBooks = details.contains { detail in
            let words = detail.split(separator: " ")
            return words.first == "SCAN" && words.dropFirst().first { $0 != "TABLE" } == "book"
        }
        #expect(!scansBooks, "\(details)")
    }

    @Test("authors are written as the JSON encoder writes them, escaped names included")
    func authorsJSON() throws {
        let lists: [[String]] = [
            [], ["Jane Austen"], ["Gabriel García Márquez", "Лев Толстой"], ["夏目漱石", "🦊 Fox"],
            ["AC/DC"], [#"The "Quoted""#], [#"back\slash"#], ["line\nbreak", "tab\there"], ["\u{7F}del"],
            ["para\u{2029}graph"], ["", " "], ["O'Brien, Flann"],
        ]
        let encoder = BookRecord.databaseJSONEncoder(for: "authors")
        for authors in lists {
            let expected = String(decoding: try encoder.encode(authors), as: UTF8.self)
            #expect(try BookRecord.authorsJSON(authors) == expected, "\(authors)")
        }
        #expect(BookRecord.isVerbatimJSON("Gabriel García Márquez"))
        #expect(!BookRecord.isVerbatimJSON("AC/DC"))
    }

    @Test("a row read column by column is the record Codable reads, or left to Codable when not plain")
    func quickDecoding() throws {
        let database = try AppDatabase.inMemory()
        var random = SeededGenerator(seed: 7)
        for book in (0..<30).map({ _ in randomBook(&random) }) { try database.library.upsert(book) }
        let scan = try database.queue.enqueue(newScan())
        try database.writer.write { db in
            try db.execute(
                sql: """
                    INSERT INTO book (title, authors, addedAt, updatedAt, reviewedAt, scanId, confidence) VALUES
                        ('Spaced', '[ "Jane Austen" ]', '2026-01-01', '2026-01-01 10:00', NULL, NULL, 1),
                        ('Escaped', '["AC\\/DC", "a\\"b"]', 1700000000, '2026-01-01', '2026-02-03 04:05:06.789',
                            ?, 0.25),
                        ('Empty names', '["",""]', '2026-01-01 00:00:00.000', '2026-01-01', NULL, ?, NULL)
                    """, arguments: [scan.id.uuidString.lowercased(), scan.id.uuidString.lowercased()])
        }
        let rows = try database.writer.read { db in try Row.fetchAll(db, sql: "SELECT * FROM book ORDER BY id") }
        let columns = Dictionary(uniqueKeysWithValues: rows[0].columnNames.enumerated().map { ($1, $0) })
        var quick = 0
        for row in rows {
            let codable = try BookRecord(row: row)
            if let decoded = BookRecord.quicklyDecoded(row, columns: columns) {
                #expect(decoded == codable, "\(row)")
                quick += 1
            }
        }
        #expect(quick == rows.count - 2)  // the spaced and the escaped authors go to Codable
        #expect(BookRecord.plainAuthors(#"["Jane Austen","Лев Толстой"]"#) == ["Jane Austen", "Лев Толстой"])
        #expect(BookRecord.plainAuthors(#"["a\"b"]"#) == nil)
        #expect(BookRecord.plainAuthors("[]") == [])
    }

    @Test("the authors read byte by byte are the names JSONDecoder reads, or left to it")
    func plainAuthorsAgreeWithJSONDecoder() throws {
        let texts = [
            #"[]"#, #"[""]"#, #"["",""]"#, #"["a",""]"#, #"["","a"]"#, #"["a","b","c"]"#, #"["Лев Толстой","吾輩"]"#,
            "[\"\u{301}e\",\"x\u{301}\"]", #"["🦊","a"]"#, #"["a","]"#, #"["a"]]"#, #"[["a"]]"#, #"["a", "b"]"#,
            #"[ "a"]"#, #"["a"b"]"#, #"["a\"b"]"#, #"["a","b"," ]"#, #"["""]"#, #"["a",,"b"]"#, #"["a"",""b"]"#,
            #"["a",""b"]"#, #"{"a":"b"}"#, #"[1]"#, #"[""#, #""]"#, "",
        ]
        var readHere = 0
        for text in texts {
            guard let names = BookRecord.plainAuthors(text) else { continue }
            readHere += 1
            #expect(names == (try? JSONDecoder().decode([String].self, from: Data(text.utf8))), "\(text)")
        }
        #expect(readHere == 9)
    }

    @Test("values bound one by one are stored as they are; one too many is an error that names it")
    func executeBinding() throws {
        let database = try AppDatabase.inMemory()
        let values: [DatabaseValue] = [
            .null, 42.databaseValue, 0.1.databaseValue, "Война и мир 🦊".databaseValue, Data([0, 1, 255]).databaseValue,
        ]
        try database.writer.write { db in
            try db.execute(sql: "CREATE TEMP TABLE bound (a, b, c, d, e)")
            let insert = try db.cachedStatement(sql: "INSERT INTO bound VALUES (?, ?, ?, ?, ?)")
            try insert.execute(binding: values)
            try insert.execute(binding: Array(values.reversed()))
            #expect(throws: DatabaseError.self) { try insert.execute(binding: values + [.null]) }
            let rows = try Row.fetchAll(db, sql: "SELECT * FROM bound ORDER BY rowid")
            #expect(rows.map { Array($0.databaseValues) } == [values, Array(values.reversed())])
        }
    }

    @Test("random jobs into libraries with unsure keys become the rows they become one book at a time (12 seeds)")
    func randomJobsEqualOneByOne() throws {
        for seed in UInt64(1)...12 {
            var random = SeededGenerator(seed: seed)
            let stored = (0..<12).map { _ in randomBook(&random) }
            let incoming = (0..<24).map { _ in randomBook(&random) }
            let now = Date(timeIntervalSince1970: 1_800_000_000 + Double(seed))

            func library(
                _ commit: (AppDatabase, UUID) throws -> [BookRecord]
            ) throws -> (rows: [[String: DatabaseValue]], saved: [BookRecord]) {
                let database = try AppDatabase.inMemory()
                for book in stored { try database.library.upsert(book, now: now.addingTimeInterval(-100)) }
                try database.writer.write { db in
                    // A key never stored, a title changed under a stored key (stale), a person's review.
                    try db.execute(sql: "UPDATE book SET matchTitle = NULL, matchAuthor = NULL WHERE id = 2")
                    try db.execute(sql: "UPDATE book SET title = 'Persuasion' WHERE id = 3")
                    try db.execute(sql: "UPDATE book SET title = 'Emma (Penguin)' WHERE id = 5")
                    try db.execute(sql: "UPDATE book SET reviewedAt = '2026-01-01 00:00:00.000' WHERE id = 4")
                }
                let scan = try database.queue.enqueue(newScan())
                let saved = try commit(database, scan.id)
                let rows = try database.writer.read { db in
                    try Row.fetchAll(db, sql: "SELECT * FROM book ORDER BY id").map { row in
                        var values: [String: DatabaseValue] = [:]
                        for (column, value) in row where column != "scanId" { values[column] = value }
                        return values
                    }
                }
                let stale = try database.writer.read { db in
                    try Int64.fetchAll(db, sql: "SELECT bookId FROM book_match_stale ORDER BY bookId")
                }
                try database.writer.write { db in
                    try db.execute(sql: "INSERT INTO book_ft (book_ft) VALUES ('integrity-check')")
                }
                return (
                    rows + [["stale": stale.map(String.init).joined(separator: ",").databaseValue]],
                    saved.map { book in
                        var unlinked = book
                        unlinked.scanID = nil
                        return unlinked
                    }
                )
            }
            let together = try library { database, scan in
                try database.queue.markUploading(scan)
                try database.queue.recordJob(scan, jobID: "j", streamURL: nil, statusURL: nil, jobToken: nil)
                return try database.completeScanMatchingTitles(scan, books: incoming, now: now).books
            }
            let oneByOne = try library { database, scan in
                try incoming.map { book in
                    var linked = book
                    (linked.scanID, linked.addedAt, linked.updatedAt) = (scan, now, now)
                    return try database.library.upsertMatching(linked, now: now)
                }
            }
            #expect(together.rows == oneByOne.rows, "seed \(seed)")
            #expect(together.saved == oneByOne.saved, "seed \(seed)")
        }
    }
}

/// Books drawn from a few titles, authors and ISBNs, so that a job's books meet stored ones and each other.
private func randomBook(_ random: inout SeededGenerator) -> BookRecord {
    let titles = [
        "Emma", "EMMA: A Novel", "Persuasion", "The Hobbit", "Hobbit (illustrated)", "Cien años de soledad",
        "Война и мир", "!!!", "Kim", "A Study in Scarlet",
    ]
    let authors: [[String]] = [
        [], ["Jane Austen"], ["jane austen", "Someone"], ["J.R.R. Tolkien"], ["Лев Толстой"], ["Rudyard Kipling"],
    ]
    let isbns: [String?] = [nil, nil, nil, "9780141439518", "9780547928227", "9780441013593", "9780547928272"]
    func pick<Value>(_ values: [Value]) -> Value { values[Int(random.next() % UInt64(values.count))] }
    let coin = { (random: inout SeededGenerator) in random.next() % 2 == 0 }
    return BookRecord(
        isbn13: pick(isbns), title: pick(titles), authors: pick(authors),
        publisher: coin(&random) ? nil : pick(["P", "Q"]), pageCount: coin(&random) ? nil : pick([100, 200]),
        confidence: coin(&random) ? nil : pick([0.5, 0.9]),
        enrichmentStatus: coin(&random) ? .pending : .success,
        reviewReason: random.next() % 5 == 0 ? "the backend gave no confidence" : nil)
}
