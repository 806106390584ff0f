import Foundation
import GRDB

/// How a book without ISBN is recognised as one already in the library: its normalised title and
/// first author (docs/protocol.md §3).
///
/// Title: lower-cased; the subtitle dropped (from the first `:`, ` - `, `(` or `[`); one leading
/// article (`the`, `a`, `an`) dropped; punctuation other than letters and digits read as spaces;
/// spaces collapsed and trimmed. Author: the first one, lower-cased, with `.`/`,` read as spaces and
/// spaces collapsed ("J.R.R. Tolkien" and "J. R. R. Tolkien" match).
public struct BookMatchKey: Hashable, Sendable, CustomStringConvertible {
    public let title: String
    public let author: String

    /// `nil` when the title normalises to nothing (such a book cannot be matched).
    public init?(title: String, authors: [String]) {
        let normalisedTitle = Self.normaliseTitle(title)
        guard !normalisedTitle.isEmpty else { return nil }
        self.title = normalisedTitle
        self.author = authors.lazy.map(Self.normaliseAuthor).first { !$0.isEmpty } ?? ""
    }

    /// The key a row stores (`matchTitle`, `matchAuthor`), read back: `nil` for the "" of a title with no key.
    init?(storedTitle: String, storedAuthor: String) {
        guard !storedTitle.isEmpty else { return nil }
        self.title = storedTitle
        self.author = storedAuthor
    }

    public var description: String { "\(title) / \(author)" }

    /// The title rule above.
    public static func normaliseTitle(_ title: String) -> String {
        ASCIIMatchRule.title(title) ?? normaliseTitleByCharacters(title)
    }

    /// The author rule above.
    public static func normaliseAuthor(_ author: String) -> String {
        ASCIIMatchRule.author(author) ?? normaliseAuthorByCharacters(author)
    }

    /// The title rule on `Character`s, for any text.
    static func normaliseTitleByCharacters(_ title: String) -> String {
        let lowered = title.lowercased()
        var main = Substring(lowered)
        for separator in [":", " - ", "(", "["] {
            if let range = main.range(of: separator) {
                let head = main[..<range.lowerBound]
                if !collapse(head).isEmpty { main = head }  // "(untitled)" keeps its words
            }
        }
        var words = collapse(main).split(separator: " ")
        if words.count > 1, ["the", "a", "an"].contains(words[0]) { words.removeFirst() }
        return words.joined(separator: " ")
    }

    /// The author rule on `Character`s, for any text.
    static func normaliseAuthorByCharacters(_ author: String) -> String {
        collapse(Substring(author.lowercased().map { $0 == "." || $0 == "," ? " " : $0 }))
    }

    /// Punctuation (anything not a letter or digit) becomes a space; runs of spaces become one; trimmed.
    private static func collapse(_ text: Substring) -> String {
        var out = ""
        var pendingSpace = false
        for character in text {
            if character.isLetter || character.isNumber || character == "'" || character == "’" {
                if pendingSpace, !out.isEmpty { out.append(" ") }
                pendingSpace = false
                if character != "'", character != "’" { out.append(character) }
            } else {
                pendingSpace = true
            }
        }
        return out
    }
}

/// The rules of ``BookMatchKey`` for all-ASCII text, on bytes: the same keys as its rules on `Character`s (in
/// ASCII a character is one byte, bar "\r\n", whose two bytes read as one space just as the pair does), at a
/// small part of their cost, which a job's commit pays several times for each of its books.
enum ASCIIMatchRule {
    /// The title rule, or `nil` when `title` is not all ASCII: one pass for each step, on one array of bytes.
    static func title(_ title: String) -> String? {
        guard let bytes = lowercased(title) else { return nil }
        // A subtitle separator cuts the title when what precedes it has a letter or digit (else its collapse is
        // empty: "(untitled)" keeps its words); each separator is searched in what the ones before it left.
        let firstWordByte = bytes.firstIndex(where: isLetterOrDigit) ?? bytes.count
        var end = bytes.count
        for separator in separators {
            if let start = firstIndex(of: separator, in: bytes, before: end), firstWordByte < start { end = start }
        }
        // The words of the collapse, one space between them (an apostrophe after a space can leave two, or one
        // at the end).
        var words: [UInt8] = []
        words.reserveCapacity(end)
        for byte in collapse(bytes[..<end])
        where byte != UInt8(ascii: " ") || (!words.isEmpty && words.last != UInt8(ascii: " ")) {
            words.append(byte)
        }
        if words.last == UInt8(ascii: " ") { words.removeLast() }
        // One leading article, when another word follows it.
        for article in articles where words.count > article.count && words.starts(with: article) {
            words.removeFirst(article.count)
            break
        }
        return String(decoding: words, as: UTF8.self)
    }

    private static let separators: [[UInt8]] = [Array(":".utf8), Array(" - ".utf8), Array("(".utf8), Array("[".utf8)]
    /// Each with the space that follows it in a collapsed title of more than one word.
    private static let articles: [[UInt8]] = [Array("the ".utf8), Array("a ".utf8), Array("an ".utf8)]

    /// The author rule, or `nil` when `author` is not all ASCII (`.` and `,` are punctuation, read as spaces).
    static func author(_ author: String) -> String? {
        guard let lowered = lowercased(author) else { return nil }
        return String(decoding: collapse(lowered[...]), as: UTF8.self)
    }

    /// The bytes lower-cased, or `nil` for a byte outside ASCII.
    private static func lowercased(_ text: String) -> [UInt8]? {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            guard byte < 0x80 else { return nil }
            bytes.append(byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte + 0x20 : byte)
        }
        return bytes
    }

    /// The first place of `needle` in `haystack` that ends at or before `end`.
    private static func firstIndex(of needle: [UInt8], in haystack: [UInt8], before end: Int) -> Int? {
        guard end >= needle.count else { return nil }
        let first = needle[0]
        for start in 0...(end - needle.count) where haystack[start] == first {
            var index = 1
            while index < needle.count, haystack[start + index] == needle[index] { index += 1 }
            if index == needle.count { return start }
        }
        return nil
    }

    private static func isLetterOrDigit(_ byte: UInt8) -> Bool {
        (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z"))
            || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
            || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
    }

    /// `BookMatchKey`'s collapse on bytes: letters and digits kept, apostrophes dropped, anything else a space.
    private static func collapse(_ text: ArraySlice<UInt8>) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(text.count)
        var pendingSpace = false
        for byte in text {
            if isLetterOrDigit(byte) || byte == UInt8(ascii: "'") {
                if pendingSpace, !out.isEmpty { out.append(UInt8(ascii: " ")) }
                pendingSpace = false
                if byte != UInt8(ascii: "'") { out.append(byte) }
            } else {
                pendingSpace = true
            }
        }
        return out
    }
}

extension BookRecord {
    /// This book's title + first author key (`nil` for an empty title).
    public var matchKey: BookMatchKey? { BookMatchKey(title: title, authors: authors) }

    /// Every insert and update of a book also stores its ``matchKey`` (`matchTitle`, `matchAuthor`: "" for
    /// none), which the dedupe finds books by: an insert with the row (``encode(to:)``), an update here, which
    /// also mends a key that SQL outside `BookRecord` left unset or stale (written only when it differs).
    public func aroundUpdate(_ db: Database, columns: Set<String>, update: () throws -> PersistenceSuccess) throws {
        _ = try update()
        try mendMatchKey(db)
    }

    /// Writes this book's key (`key`, when the caller has it already) over a stored one that differs, and forgets
    /// that it was stale.
    func mendMatchKey(_ db: Database, matchKey key: BookMatchKey?? = nil) throws {
        guard let id else { return }
        let key = key ?? matchKey
        let (title, author) = (key?.title ?? "", key?.author ?? "")
        try db.cachedStatement(
            sql: """
                UPDATE book SET matchTitle = ?, matchAuthor = ?
                WHERE id = ? AND (matchTitle IS NOT ? OR matchAuthor IS NOT ?)
                """
        ).execute(arguments: [title, author, id, title, author])
        try db.cachedStatement(sql: "DELETE FROM book_match_stale WHERE bookId = ?").execute(arguments: [id])
    }
}

extension Library {
    /// The first book (oldest) whose normalised title and first author equal `key`.
    public func book(matching key: BookMatchKey) throws(StoreError) -> BookRecord? {
        try database.read("nothing was read") { db in try Self.book(matching: key, db) }
    }

    /// Like ``upsert(_:now:)``, and a book is also recognised by its title and first author:
    /// - with an ISBN-13: the book with that ISBN-13; else the oldest book *without* ISBN whose
    ///   ``BookMatchKey`` matches (it gains the ISBN); else a new row;
    /// - without ISBN: the oldest book with the same ``BookMatchKey`` (with or without ISBN); else a
    ///   new row.
    /// Merging follows ``upsert(_:now:)``: new values win where present, `id`, `addedAt`, `scanID` stay.
    @discardableResult
    public func upsertMatching(_ book: BookRecord, now: Date = Date()) throws(StoreError) -> BookRecord {
        try database.write("the book was not added") { db in try Self.upsertMatching(book, now: now, db) }
    }

    static func book(matching key: BookMatchKey, withoutISBNOnly: Bool = false, _ db: Database) throws -> BookRecord? {
        let candidates = try BookRecord.fetchCursor(
            db.cachedStatement(sql: candidatesSQL(withoutISBNOnly: withoutISBNOnly)),
            arguments: [key.title, key.author])
        while let candidate = try candidates.next() {
            if candidate.matchKey == key { return candidate }
        }
        return nil
    }

    /// The books that may match a key (its title and author are the arguments): those with that stored key
    /// (found by `book_on_matchKey`) and those whose key is not known (NULL) or stale (`book_match_stale`),
    /// each then judged by its own title and authors; oldest first, so the first match is the oldest.
    static func candidatesSQL(withoutISBNOnly: Bool) -> String {
        // Three indexed look-ups rather than one `OR`, so the plan cannot fall back to reading the table;
        // a row in two of them is judged twice, which changes nothing. `+isbn13`: the ISBN filters the
        // candidates, it is never the index they are found by.
        let isbn = withoutISBNOnly ? "AND +isbn13 IS NULL" : ""
        return """
            SELECT * FROM book WHERE matchTitle = ? AND matchAuthor = ? \(isbn)
            UNION ALL SELECT * FROM book WHERE matchTitle IS NULL \(isbn)
            UNION ALL SELECT * FROM book WHERE id IN (SELECT bookId FROM book_match_stale) \(isbn)
            ORDER BY id
            """
    }

    static func upsertMatching(_ book: BookRecord, now: Date, _ db: Database) throws -> BookRecord {
        var batch = MatchingBatch(now: now)
        return try batch.save([book], db)[0]
    }
}

/// Books put into the library as ``Library/upsertMatching(_:now:)`` describes, one after the other, each seeing
/// those before it; the new ones are inserted together at the end, a few statements for a whole job's books.
///
/// Why together: each statement that writes the full-text index makes SQLite's FTS5 write its pending terms out
/// as a new segment (a statement savepoint), so one insert a book cost a segment a book and the merging of them.
/// Until the end a new book is a pending row, found by ISBN and key like a stored one and younger than every
/// stored one; it is inserted with the id AUTOINCREMENT would have given it, so the ids are those of inserting
/// the books one by one.
///
/// The stored books a job's books can meet are read once, by one query (``candidatesSQL``): those with the
/// stored key or the ISBN-13 of one of them, and those whose stored key is not to be trusted (NULL or stale).
/// From then on the batch keeps them as the database has them, so each look-up is the one
/// ``Library/book(matching:withoutISBNOnly:_:)`` and ``Library/book(isbn13:_:)`` would make, without a query.
struct MatchingBatch {
    let now: Date
    /// The new rows, in the order they were first seen, with their keys, found by key and ISBN.
    private var pending: [BookRecord] = []
    private var pendingKeys: [BookMatchKey?] = []
    private var pendingByKey: [BookMatchKey: [Int]] = [:]
    private var pendingByISBN: [String: Int] = [:]
    /// The stored rows the job's books may go into, by id, key and ISBN.
    private var stored: [Int64: StoredBook] = [:]
    private var storedByKey: [BookMatchKey: [Int64]] = [:]
    private var storedByISBN: [String: Int64] = [:]
    private let timestamps = StorageTimestampMemo()
    /// The `UPDATE` of each set of changed columns (a bit for each of ``BookRecord/storedColumns``) written so far.
    private var updateSQL: [Int: String] = [:]

    init(now: Date) {
        self.now = now
    }

    /// A stored row as the database has it now: the record, its key by today's rule, and the key column.
    private struct StoredBook {
        var record: BookRecord
        var key: BookMatchKey?
        var storedTitle: String?
        var storedAuthor: String?
        /// The stored key is NULL or stale: the row is judged by its own title and authors.
        var keyUnsure: Bool

        /// What the three look-ups of ``Library/candidatesSQL(withoutISBNOnly:)`` and the judging of their rows
        /// would answer for this row (its key, ``key``, is `key` already).
        func isFound(by key: BookMatchKey, withoutISBNOnly: Bool) -> Bool {
            (keyUnsure || (storedTitle == key.title && storedAuthor == key.author))
                && (!withoutISBNOnly || record.isbn13 == nil)
        }
    }

    /// Where a book goes: a row already stored (its id), or a pending one.
    private enum Target {
        case stored(Int64)
        case pending(Int)
    }

    /// What became of one book: the stored row it went into, or the pending row it is (the id comes at the end).
    private enum Outcome {
        case stored(BookRecord)
        case pending(Int, BookRecord)
    }

    /// Saves `books` in order and returns the record each became (as stored after it, with its id).
    mutating func save(_ books: [BookRecord], _ db: Database) throws -> [BookRecord] {
        let keys = books.map(\.matchKey)
        try loadCandidates(keys: keys.compactMap { $0 }, isbns: books.compactMap(\.isbn13), db)
        let outcomes = try zip(books, keys).map { book, key in try add(book, key: key, db) }
        let ids = try insertPending(db)
        return outcomes.map { outcome in
            switch outcome {
            case .stored(let record): return record
            case .pending(let index, var record):
                record.id = ids[index]
                return record
            }
        }
    }

    /// The stored rows a book with one of `keys` or `isbns` may meet, each once, with whether its key is unsure.
    /// The keys and ISBNs go in as JSON arrays (one statement whatever their number); each part searches an
    /// index.
    static let candidatesSQL = """
        SELECT *, matchTitle IS NULL OR id IN (SELECT bookId FROM book_match_stale) AS matchKeyUnsure FROM book
        WHERE (matchTitle, matchAuthor) IN (
            SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]') FROM json_each(?))
        UNION ALL SELECT *, 1 FROM book WHERE matchTitle IS NULL
        UNION ALL SELECT *, 1 FROM book WHERE id IN (SELECT bookId FROM book_match_stale)
        UNION ALL SELECT *, matchTitle IS NULL OR id IN (SELECT bookId FROM book_match_stale) FROM book
        WHERE isbn13 IN (SELECT value FROM json_each(?))
        """

    private mutating func loadCandidates(keys: [BookMatchKey], isbns: [String], _ db: Database) throws {
        var keyList = "["
        keyList.reserveCapacity(keys.count * 40)
        for (index, key) in keys.enumerated() {
            keyList += (index == 0 ? "[" : ",[") + Self.jsonString(key.title) + "," + Self.jsonString(key.author) + "]"
        }
        keyList += "]"
        let isbnList = "[" + isbns.map(Self.jsonString).joined(separator: ",") + "]"
        let rows = try Row.fetchCursor(db.cachedStatement(sql: Self.candidatesSQL), arguments: [keyList, isbnList])
        var columns: [String: Int] = [:]
        while let row = try rows.next() {
            if columns.isEmpty {
                columns = Dictionary(row.columnNames.enumerated().map { ($1, $0) }) { first, _ in first }
            }
            let record = try BookRecord.quicklyDecoded(row, columns: columns) ?? BookRecord(row: row)
            guard let id = record.id, stored[id] == nil else { continue }
            let (storedTitle, storedAuthor): (String?, String?) = (row["matchTitle"], row["matchAuthor"])
            let keyUnsure: Bool = row["matchKeyUnsure"]
            // A stored key that is neither NULL nor stale is the row's key by today's rule (every save of a
            // ``BookRecord`` writes it, a change of the rule comes with a migration): read, not computed again.
            let key: BookMatchKey?
            if !keyUnsure, let storedTitle, let storedAuthor {
                key = BookMatchKey(storedTitle: storedTitle, storedAuthor: storedAuthor)
            } else {
                key = record.matchKey
            }
            let book = StoredBook(
                record: record, key: key, storedTitle: storedTitle, storedAuthor: storedAuthor, keyUnsure: keyUnsure)
            stored[id] = book
            if let key = book.key { storedByKey[key, default: []].append(id) }
            if let isbn13 = record.isbn13 { storedByISBN[isbn13] = id }
        }
    }

    /// `text` as a JSON string (keys and ISBNs are letters, digits and spaces, but nothing relies on it).
    private static func jsonString(_ text: String) -> String {
        if !text.utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) {
            return "\"" + text + "\""
        }
        var json = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": json += "\\\""
            case "\\": json += "\\\\"
            case _ where scalar.value < 0x20: json += "\\u" + String(repeating: "0", count: 2) + hexByte(scalar.value)
            default: json.unicodeScalars.append(scalar)
            }
        }
        return json + "\""
    }

    private static func hexByte(_ value: UInt32) -> String {
        let hex = String(value, radix: 16)
        return hex.count == 1 ? "0" + hex : hex
    }

    private mutating func add(_ book: BookRecord, key: BookMatchKey?, _ db: Database) throws -> Outcome {
        if let isbn13 = book.isbn13 {
            if target(isbn13: isbn13) == nil, let key, let existing = target(matching: key, withoutISBNOnly: true) {
                // The same book seen before without its ISBN: give that row the ISBN, then merge.
                switch existing {
                case .stored(let id):
                    var record = stored[id]!.record
                    record.isbn13 = isbn13
                    try updateStored(id, to: record, db)
                case .pending(let index):
                    var record = pending[index]
                    record.isbn13 = isbn13
                    setPending(index, to: record)
                }
            }
            return try upsert(book, key: key, db)
        }
        guard let key, let existing = target(matching: key) else {
            return try upsert(book, key: key, db)  // no ISBN, no match: a new row
        }
        let existingISBN: String?
        switch existing {
        case .stored(let id): existingISBN = stored[id]!.record.isbn13
        case .pending(let index): existingISBN = pending[index].isbn13
        }
        if existingISBN != nil {
            var keyed = book
            keyed.isbn13 = existingISBN
            return try upsert(keyed, key: key, db)
        }
        return try merge(book, into: existing, db)
    }

    /// ``Library/upsert(_:now:)``: into the row with the book's ISBN-13, else a new row.
    private mutating func upsert(_ book: BookRecord, key: BookMatchKey?, _ db: Database) throws -> Outcome {
        if let isbn13 = book.isbn13, let existing = target(isbn13: isbn13) {
            return try merge(book, into: existing, db)
        }
        var fresh = book
        fresh.id = nil
        pending.append(fresh)
        pendingKeys.append(key)
        let index = pending.count - 1
        if let key { pendingByKey[key, default: []].append(index) }
        if let isbn13 = fresh.isbn13 { pendingByISBN[isbn13] = index }
        return .pending(index, fresh)
    }

    private mutating func merge(_ book: BookRecord, into target: Target, _ db: Database) throws -> Outcome {
        switch target {
        case .stored(let id):
            let merged = stored[id]!.record.merged(with: book, now: now)
            try updateStored(id, to: merged, db)
            return .stored(merged)
        case .pending(let index):
            setPending(index, to: pending[index].merged(with: book, now: now))
            return .pending(index, pending[index])
        }
    }

    /// The key of `record`, which replaces `old` whose key is `oldKey`: computed again only when the title or the
    /// authors changed.
    private static func key(of record: BookRecord, replacing old: BookRecord, oldKey: BookMatchKey?) -> BookMatchKey? {
        record.title == old.title && record.authors == old.authors ? oldKey : record.matchKey
    }

    /// Replaces the pending row at `index`, keeping the look-ups by key and ISBN in step.
    private mutating func setPending(_ index: Int, to record: BookRecord) {
        let (old, oldKey) = (pending[index], pendingKeys[index])
        let key = Self.key(of: record, replacing: old, oldKey: oldKey)
        pending[index] = record
        pendingKeys[index] = key
        if key != oldKey {
            if let oldKey { pendingByKey[oldKey]?.removeAll { $0 == index } }
            if let key {
                // Oldest first: the first pending row with a key is the one a look-up finds.
                let rows = pendingByKey[key, default: []]
                pendingByKey[key] = (rows + [index]).sorted()
            }
        }
        if record.isbn13 != old.isbn13 {
            if let isbn13 = old.isbn13 { pendingByISBN[isbn13] = nil }
            if let isbn13 = record.isbn13 { pendingByISBN[isbn13] = index }
        }
    }

    /// GRDB's `updateChanges(_:from:)` for a stored book, leaner: the columns whose values differ from the stored
    /// row's, by a statement prepared once for each set of columns; then the key mended, as every update of a
    /// book does (``BookRecord/mendMatchKey(_:matchKey:)``), unless the stored key is known right and stays so.
    private mutating func updateStored(_ id: Int64, to record: BookRecord, _ db: Database) throws {
        var book = stored[id]!
        let old = book.record
        let oldKey = book.key
        let key = Self.key(of: record, replacing: old, oldKey: oldKey)
        book.record = record
        book.key = key
        defer {
            if key != oldKey {
                if let oldKey { storedByKey[oldKey]?.removeAll { $0 == id } }
                if let key { storedByKey[key, default: []].append(id) }
            }
            if record.isbn13 != old.isbn13 {
                if let isbn13 = old.isbn13 { storedByISBN[isbn13] = nil }
                if let isbn13 = record.isbn13 { storedByISBN[isbn13] = id }
            }
            stored[id] = book
        }
        let (changed, values) = try record.storedChanges(
            from: old, matchKey: key, oldMatchKey: oldKey, timestamps: timestamps)
        guard !changed.isEmpty else { return }
        let columnSet = changed.reduce(0) { $0 | (1 << $1) }
        let sql =
            updateSQL[columnSet]
            ?? {
                let assignments = changed.map { "\(BookRecord.storedColumns[$0]) = ?" }.joined(separator: ", ")
                let sql = "UPDATE book SET \(assignments) WHERE id = ?"
                updateSQL[columnSet] = sql
                return sql
            }()
        try db.cachedStatement(sql: sql).execute(binding: values + [id.databaseValue])
        let (keyTitle, keyAuthor) = (key?.title ?? "", key?.author ?? "")
        let keyStaysRight =
            !book.keyUnsure && book.storedTitle == keyTitle && book.storedAuthor == keyAuthor
            && record.title == old.title && record.authors == old.authors
        if !keyStaysRight { try record.mendMatchKey(db, matchKey: key) }
        (book.storedTitle, book.storedAuthor, book.keyUnsure) = (keyTitle, keyAuthor, false)
    }

    private func target(isbn13: String) -> Target? {
        if let id = storedByISBN[isbn13] { return .stored(id) }
        return pendingByISBN[isbn13].map(Target.pending)
    }

    /// The oldest row with this key: a stored one, else the first pending one.
    private func target(matching key: BookMatchKey, withoutISBNOnly: Bool = false) -> Target? {
        let storedMatch = storedByKey[key]?.filter { id in
            stored[id]!.isFound(by: key, withoutISBNOnly: withoutISBNOnly)
        }.min()
        if let storedMatch { return .stored(storedMatch) }
        return pendingByKey[key]?.first { index in !withoutISBNOnly || pending[index].isbn13 == nil }
            .map(Target.pending)
    }

    /// Inserts the pending rows, `rowsPerStatement` to a statement (within SQLite's oldest limit of 999
    /// arguments; a statement for each row count, prepared once per connection), with the ids AUTOINCREMENT
    /// gives: one more than the largest ever used. Returns them.
    private func insertPending(_ db: Database) throws -> [Int64] {
        guard !pending.isEmpty else { return [] }
        let first =
            try Int64.fetchOne(
                db.cachedStatement(
                    sql: """
                        SELECT max(coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'book'), 0),
                                   coalesce((SELECT max(id) FROM book), 0)) + 1
                        """)) ?? 1
        let ids = (0..<Int64(pending.count)).map { first + $0 }
        let columns = BookRecord.storedColumns
        let rowsPerStatement = 999 / columns.count
        for start in stride(from: 0, to: pending.count, by: rowsPerStatement) {
            let rows = start..<min(start + rowsPerStatement, pending.count)
            let row = "(" + Array(repeating: "?", count: columns.count).joined(separator: ", ") + ")"
            let sql =
                "INSERT INTO book (\(columns.joined(separator: ", "))) VALUES "
                + Array(repeating: row, count: rows.count).joined(separator: ", ")
            var values: [DatabaseValue] = []
            values.reserveCapacity(rows.count * columns.count)
            for index in rows {
                var record = pending[index]
                record.id = ids[index]
                try record.appendStoredValues(to: &values, matchKey: pendingKeys[index], timestamps: timestamps)
            }
            try db.cachedStatement(sql: sql).execute(binding: values)
        }
        return ids
    }
}

extension AppDatabase {
    /// ``completeScan(_:books:now:)`` with books matched by ISBN-13 *or* title + first author
    /// (``Library/upsertMatching(_:now:)``): one transaction, idempotent for a scan already `done`.
    /// The uplink commits a job's books with it; the new ones are inserted together (``MatchingBatch``).
    @discardableResult
    public func completeScanMatchingTitles(
        _ id: UUID, books: [BookRecord], now: Date = Date()
    ) throws(StoreError) -> (scan: ScanRecord, books: [BookRecord]) {
        try write("the scan's results were not saved (it stays analyzing and is fetched again)") { db in
            try Self.completeScan(id, books: books, now: now, db) { books, db in
                var batch = MatchingBatch(now: now)
                return try batch.save(books, db)
            }
        }
    }
}

extension Statement {
    /// `execute(arguments:)` for values that are already `DatabaseValue`s, one for each `?` of the statement
    /// (the callers build the statement from the values), bound one by one: GRDB's `StatementArguments` for a
    /// job's thousands of values cost more than SQLite's inserting of them.
    func execute(binding values: [DatabaseValue]) throws {
        // Reset, clear the bindings and mark them set; the loop binds each one.
        setUncheckedArguments(StatementArguments())
        for (index, value) in zip(CInt(1)..., values) {
            let code = value.bind(to: sqliteStatement, at: index)
            guard code == ResultCode.SQLITE_OK.rawValue else {
                throw DatabaseError(
                    resultCode: ResultCode(rawValue: code), message: "argument \(index) could not be bound", sql: sql)
            }
        }
        try execute()
    }
}
