import Foundation
import GRDB

/// A catalogue in SQLite, built once from its CSV and kept in a file so a restart does not rebuild it: the entries,
/// an FTS5 trigram index over their folded text (title and authors in one column, the call number tag in another),
/// each call number's key (``Normalisation/callNumberKey(_:)``) for a spine's label to be looked up whole, and the
/// document frequencies of words and trigrams the matcher weighs evidence by.
///
/// Text is indexed compacted (folded, spaces dropped: "guiadelamusculacion"), and spines are queried the same way,
/// so trigrams still meet when OCR merged or split words. Only the frequency tables live in memory (tens of
/// thousands of words and trigrams, whatever the catalogue's size); entries, with their folded words for the
/// scoring, stay on disk behind SQLite's page cache.
public final class CatalogueIndex: Sendable {
    /// Bumped when the schema or the indexed text changes, so an old index file is rebuilt.
    static let formatVersion = "6"

    let database: DatabaseQueue
    public let entryCount: Int
    let wordDocuments: [String: Int32]
    let textGramDocuments: [UInt64: Int32]
    let tagGramDocuments: [UInt64: Int32]
    /// Where the index lives, and whether this open built it (false: reused from an earlier run).
    public let path: String
    public let built: Bool
    /// Whether any entry has a call number tag (a library's catalogue); a Goodreads or SwiftWing export has none.
    public var hasCallNumbers: Bool { !tagGramDocuments.isEmpty }

    /// Opens the index of the catalogue CSV at `cataloguePath`, building it first when there is none or the CSV
    /// changed (size or modification time). `indexPath` defaults to ``defaultIndexPath(catalogue:)``.
    /// Without `indexPath`, a current index already beside the CSV is used even where that folder is read-only (the
    /// shipped catalogue's, built when the package was made), then one in the cache.
    public static func open(catalogue cataloguePath: String, indexPath: String? = nil) throws -> CatalogueIndex {
        let stamp = try sourceStamp(cataloguePath)
        let places =
            indexPath.map { [$0] } ?? [besidePath(catalogue: cataloguePath), cachePath(catalogue: cataloguePath)]
        for place in places where FileManager.default.fileExists(atPath: place) {
            if let index = try? CatalogueIndex(path: place, built: false), try index.meta("source") == stamp,
                try index.meta("format") == formatVersion
            {
                return index
            }
        }
        let indexPath = indexPath ?? defaultIndexPath(catalogue: cataloguePath)
        try build(catalogue: cataloguePath, into: indexPath, stamp: stamp)
        return try CatalogueIndex(path: indexPath, built: true)
    }

    /// `FILE.index.sqlite` beside the CSV when its folder is writable, else a file named after the CSV's full path
    /// in `$XDG_CACHE_HOME/swiftwing-recognizer` (or `~/.cache/swiftwing-recognizer`).
    public static func defaultIndexPath(catalogue: String) -> String {
        let folder = URL(fileURLWithPath: catalogue).standardizedFileURL.deletingLastPathComponent().path
        return FileManager.default.isWritableFile(atPath: folder)
            ? besidePath(catalogue: catalogue) : cachePath(catalogue: catalogue)
    }

    static func besidePath(catalogue: String) -> String {
        URL(fileURLWithPath: catalogue).standardizedFileURL.path + ".index.sqlite"
    }

    static func cachePath(catalogue: String) -> String {
        let environment = ProcessInfo.processInfo.environment
        let cache = environment["XDG_CACHE_HOME"] ?? (NSHomeDirectory() + "/.cache")
        let name = URL(fileURLWithPath: catalogue).standardizedFileURL.path.map {
            $0.isLetter || $0.isNumber ? $0 : "_"
        }
        return cache + "/swiftwing-recognizer/" + String(name) + ".index.sqlite"
    }

    private init(path: String, built: Bool) throws {
        var configuration = Configuration()
        configuration.readonly = true
        configuration.label = "catalogue-index"
        configuration.prepareDatabase { db in
            // A bounded page cache (8 MiB) whatever the catalogue's size; the file's pages are the OS's to cache.
            try db.execute(sql: "PRAGMA cache_size = -8192")
        }
        let queue = try DatabaseQueue(path: path, configuration: configuration)
        let (count, words, textGrams, tagGrams) = try queue.read { db in
            let count = try Int.fetchOne(db, sql: "SELECT count(*) FROM entry") ?? 0
            var words: [String: Int32] = [:]
            let wordRows = try Row.fetchCursor(db, sql: "SELECT word, documents FROM word_frequency")
            while let row = try wordRows.next() {
                let word: String = row[0]
                words[word] = row[1]
            }
            var textGrams: [UInt64: Int32] = [:]
            var tagGrams: [UInt64: Int32] = [:]
            let gramRows = try Row.fetchCursor(
                db, sql: "SELECT gram, text_documents, tag_documents FROM gram_frequency")
            while let row = try gramRows.next() {
                let gram: Int64 = row[0]
                let text: Int32 = row[1]
                let tag: Int32 = row[2]
                if text > 0 { textGrams[UInt64(bitPattern: gram)] = text }
                if tag > 0 { tagGrams[UInt64(bitPattern: gram)] = tag }
            }
            return (count, words, textGrams, tagGrams)
        }
        database = queue
        self.path = path
        self.built = built
        entryCount = count
        wordDocuments = words
        textGramDocuments = textGrams
        tagGramDocuments = tagGrams
    }

    private func meta(_ key: String) throws -> String? {
        try database.read { db in try String.fetchOne(db, sql: "SELECT value FROM meta WHERE key = ?", arguments: [key])
        }
    }

    private static func sourceStamp(_ path: String) throws -> String {
        let attributes: [FileAttributeKey: Any]
        do {
            attributes = try FileManager.default.attributesOfItem(atPath: path)
        } catch {
            throw CatalogueImportError(file: path, line: 0, column: nil, reason: "cannot read the file; check the path")
        }
        let size = (attributes[.size] as? NSNumber)?.int64Value ?? -1
        let modified = (attributes[.modificationDate] as? Date)?.timeIntervalSince1970 ?? 0
        return "\(size) \(modified)"
    }

    /// What a build did, for the benchmark.
    public struct BuildReport: Sendable {
        public var entries: Int
        public var format: CatalogueFormat
        public var bytes: Int64
    }

    /// Builds the index of `cataloguePath` into `indexPath`: written to a temporary file beside it and renamed into
    /// place, so a build that fails or is interrupted leaves any earlier index as it was.
    @discardableResult
    public static func build(catalogue cataloguePath: String, into indexPath: String, stamp: String? = nil) throws
        -> BuildReport
    {
        let stamp = try stamp ?? sourceStamp(cataloguePath)
        let folder = URL(fileURLWithPath: indexPath).deletingLastPathComponent().path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let temporary = indexPath + ".building-\(getpid())"
        try? FileManager.default.removeItem(atPath: temporary)
        var count = 0
        var format = CatalogueFormat.libraryDataset
        do {
            var configuration = Configuration()
            configuration.prepareDatabase { db in
                // The file is renamed into place only when complete, so no journal is needed while writing it.
                try db.execute(sql: "PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; PRAGMA cache_size = -32768")
            }
            let queue = try DatabaseQueue(path: temporary, configuration: configuration)
            try queue.writeWithoutTransaction { db in
                try db.execute(
                    sql: """
                        CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
                        CREATE TABLE entry(
                            id INTEGER PRIMARY KEY, title TEXT NOT NULL, authors TEXT NOT NULL,
                            isbn TEXT, tag TEXT, series TEXT,
                            main_words TEXT NOT NULL, subtitle_words TEXT NOT NULL, surnames TEXT NOT NULL,
                            forenames TEXT NOT NULL, tag_folded TEXT NOT NULL);
                        CREATE VIRTUAL TABLE entry_text USING fts5(
                            text, content='', columnsize=0, detail=none, tokenize='trigram');
                        CREATE VIRTUAL TABLE entry_tag USING fts5(
                            tag, content='', columnsize=0, detail=none, tokenize='trigram');
                        CREATE TABLE call_number(key TEXT NOT NULL, id INTEGER NOT NULL);
                        CREATE TABLE word_frequency(word TEXT PRIMARY KEY, documents INTEGER NOT NULL) WITHOUT ROWID;
                        CREATE TABLE gram_frequency(
                            gram INTEGER PRIMARY KEY, text_documents INTEGER NOT NULL, tag_documents INTEGER NOT NULL);
                        """)
                var words: [String: Int32] = [:]
                var grams: [UInt64: (text: Int32, tag: Int32)] = [:]
                try db.inTransaction {
                    let insertEntry = try db.makeStatement(
                        sql: """
                            INSERT INTO entry(
                                id, title, authors, isbn, tag, series,
                                main_words, subtitle_words, surnames, forenames, tag_folded)
                            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                            """)
                    let insertText = try db.makeStatement(sql: "INSERT INTO entry_text(rowid, text) VALUES (?, ?)")
                    let insertTag = try db.makeStatement(sql: "INSERT INTO entry_tag(rowid, tag) VALUES (?, ?)")
                    let insertKey = try db.makeStatement(sql: "INSERT INTO call_number(key, id) VALUES (?, ?)")
                    format = try CatalogueImport.read(path: cataloguePath) { entry in
                        count += 1
                        let prepared = PreparedEntry.Stored(entry)
                        let text = indexedText(entry)
                        let textGrams = Set(trigrams(text))
                        try insertEntry.execute(arguments: [
                            count, entry.title, entry.authors.joined(separator: "\n"), entry.isbn, entry.tag,
                            entry.series, prepared.main, prepared.subtitle, prepared.surnames, prepared.forenames,
                            prepared.tag,
                        ])
                        let tag = Normalisation.compact(prepared.tag)
                        try insertText.execute(arguments: [count, String(scalars: text)])
                        if !tag.isEmpty { try insertTag.execute(arguments: [count, String(scalars: tag)]) }
                        let key = Normalisation.callNumberKey(prepared.tag)
                        if key.unicodeScalars.count >= 3 { try insertKey.execute(arguments: [key, count]) }
                        for gram in textGrams { grams[gram, default: (0, 0)].text += 1 }
                        for gram in Set(trigrams(tag)) { grams[gram, default: (0, 0)].tag += 1 }
                        let entryWords = Set(
                            Normalisation.words(entry.title) + entry.authors.flatMap(Normalisation.words))
                        for word in entryWords { words[word, default: 0] += 1 }
                    }
                    return .commit
                }
                try db.inTransaction {
                    let insertWord = try db.makeStatement(sql: "INSERT INTO word_frequency VALUES (?, ?)")
                    for (word, documents) in words { try insertWord.execute(arguments: [word, documents]) }
                    let insertGram = try db.makeStatement(sql: "INSERT INTO gram_frequency VALUES (?, ?, ?)")
                    for (gram, documents) in grams {
                        try insertGram.execute(arguments: [Int64(bitPattern: gram), documents.text, documents.tag])
                    }
                    try db.execute(
                        sql: "INSERT INTO meta VALUES ('format', ?), ('source', ?), ('catalogue', ?)",
                        arguments: [formatVersion, stamp, cataloguePath])
                    return .commit
                }
                try db.execute(sql: "CREATE INDEX call_number_key ON call_number(key)")
                try db.execute(sql: "INSERT INTO entry_text(entry_text) VALUES ('optimize')")
                try db.execute(sql: "INSERT INTO entry_tag(entry_tag) VALUES ('optimize')")
            }
            try queue.close()
            if FileManager.default.fileExists(atPath: indexPath) {
                try FileManager.default.removeItem(atPath: indexPath)
            }
            try FileManager.default.moveItem(atPath: temporary, toPath: indexPath)
        } catch {
            try? FileManager.default.removeItem(atPath: temporary)
            throw error
        }
        let bytes = (try? FileManager.default.attributesOfItem(atPath: indexPath)[.size] as? NSNumber)?.int64Value ?? 0
        return BuildReport(entries: count, format: format, bytes: bytes)
    }

    /// The compacted title and authors an entry is found by.
    static func indexedText(_ entry: CatalogueEntry) -> [UInt32] {
        Normalisation.compact(Normalisation.fold(([entry.title] + entry.authors).joined(separator: " ")))
    }

    /// Each run of three scalars as one key (21 bits a scalar).
    static func trigrams(_ scalars: [UInt32]) -> [UInt64] {
        guard scalars.count >= 3 else { return [] }
        return (0...(scalars.count - 3)).map { trigramKey(scalars[$0], scalars[$0 + 1], scalars[$0 + 2]) }
    }

    static func trigramKey(_ a: UInt32, _ b: UInt32, _ c: UInt32) -> UInt64 {
        UInt64(a & 0x1F_FFFF) << 42 | UInt64(b & 0x1F_FFFF) << 21 | UInt64(c & 0x1F_FFFF)
    }

    static func trigramText(_ key: UInt64) -> String {
        let scalars = [UInt32(key >> 42 & 0x1F_FFFF), UInt32(key >> 21 & 0x1F_FFFF), UInt32(key & 0x1F_FFFF)]
        return String(scalars: scalars)
    }

    /// Tag trigrams asked of the index per spine, beside the title and author ones.
    static let tagQueryGrams = 6
    /// Title and author trigrams asked per spine: at least this many, then as long as the postings they hold stay
    /// within the budget. At 3,000 a spine whose title words are common and short ("TOTAL GUIA Cerdeña") lost the
    /// title's own trigrams to the other words'; 6,000 keeps them at ~0.4 of an entry read per catalogue entry.
    static let minimumQueryGrams = 8
    static let postingsBudget = 6000

    /// How many entries hold `word` among their title and author words (0 for a word the catalogue lacks).
    func documents(word: String) -> Int { Int(wordDocuments[word] ?? 0) }

    /// The ids of up to `limit` entries sharing the most trigrams with the spine's words, each trigram weighted by
    /// its rarity (idf), best first. Only the `queryGrams` rarest trigrams the catalogue holds are looked up: that
    /// bounds the postings read per spine, and rare trigrams are the ones that tell entries apart. Trigrams are taken
    /// within the spine's words, since ones spanning two words are mostly chance ("badmemoria").
    func candidates(words: [String], useTags: Bool, limit: Int, queryGrams: Int) throws -> [Int64] {
        var seen = Set<UInt64>()
        var grams: [(key: UInt64, documents: Int32, tag: Bool)] = []
        for word in words {
            for gram in Self.trigrams(Normalisation.compact(word)) where seen.insert(gram).inserted {
                if let documents = textGramDocuments[gram] { grams.append((gram, documents, false)) }
                if useTags, let documents = tagGramDocuments[gram] { grams.append((gram, documents, true)) }
            }
        }
        guard !grams.isEmpty else { return [] }
        grams.sort { $0.documents < $1.documents || ($0.documents == $1.documents && $0.key < $1.key) }
        // Title and author trigrams get the whole budget and tag trigrams a small one of their own: tag trigrams are
        // rare ("mor", "796") and would otherwise crowd out the title's, losing books whose spine shows no tag.
        var asked = Array(grams.filter(\.tag).prefix(Self.tagQueryGrams))
        // Reading postings is most of a spine's cost, so title trigrams stop at a budget of postings read (the
        // rarest few always go): the common ones left out add little weight and many rows.
        var postings = 0
        for gram in grams.filter({ !$0.tag }).prefix(queryGrams) {
            if asked.count >= Self.minimumQueryGrams && postings + Int(gram.documents) > Self.postingsBudget { break }
            postings += Int(gram.documents)
            asked.append(gram)
        }
        let total = Double(max(entryCount, 1))
        return try database.read { db in
            let textStatement = try db.cachedStatement(sql: "SELECT rowid FROM entry_text WHERE entry_text MATCH ?")
            let tagStatement = try db.cachedStatement(sql: "SELECT rowid FROM entry_tag WHERE entry_tag MATCH ?")
            var weights: [Int64: Double] = [:]
            weights.reserveCapacity(min(entryCount, postings + asked.count * 64))
            for gram in asked {
                let weight = log(total / Double(gram.documents)) + 0.5
                let rows = try Int64.fetchCursor(
                    gram.tag ? tagStatement : textStatement, arguments: ["\"" + Self.trigramText(gram.key) + "\""])
                while let id = try rows.next() { weights[id, default: 0] += weight }
            }
            return Self.best(weights, limit: limit)
        }
    }

    /// Of the call number keys a spine may hold, those some entries carry, with how many carry each; and the ids of
    /// the entries whose key is carried by at most `maxHolders` (a key many books share, a fiction mark such as
    /// "N Mar", narrows too little to fetch them all: the title's trigrams find those).
    func callNumbers(keys: [String], maxHolders: Int) throws -> (holders: [String: Int], ids: [Int64]) {
        guard !keys.isEmpty else { return ([:], []) }
        return try database.read { db in
            let placeholders = Array(repeating: "?", count: keys.count).joined(separator: ",")
            var holders: [String: Int] = [:]
            let counts = try Row.fetchCursor(
                db, sql: "SELECT key, count(*) FROM call_number WHERE key IN (\(placeholders)) GROUP BY key",
                arguments: StatementArguments(keys))
            while let row = try counts.next() { holders[row[0]] = row[1] }
            let narrow = holders.filter { $0.value <= maxHolders }.keys.sorted()
            guard !narrow.isEmpty else { return (holders, []) }
            let ids = try Int64.fetchAll(
                db,
                sql:
                    "SELECT id FROM call_number WHERE key IN (\(Array(repeating: "?", count: narrow.count).joined(separator: ","))) ORDER BY id",
                arguments: StatementArguments(narrow))
            return (holders, ids)
        }
    }

    /// The `limit` ids of highest weight, best first (ties: lower id first). Kept in a short sorted list rather
    /// than by sorting every id: most of the thousands of ids a spine's trigrams reach fall below the list's last.
    static func best(_ weights: [Int64: Double], limit: Int) -> [Int64] {
        guard limit > 0 else { return [] }
        func before(_ a: (key: Int64, value: Double), _ b: (key: Int64, value: Double)) -> Bool {
            a.value > b.value || (a.value == b.value && a.key < b.key)
        }
        var top: [(key: Int64, value: Double)] = []
        top.reserveCapacity(limit + 1)
        for item in weights {
            if top.count == limit, !before(item, top[limit - 1]) { continue }
            var position = top.count
            while position > 0, before(item, top[position - 1]) { position -= 1 }
            top.insert(item, at: position)
            if top.count > limit { top.removeLast() }
        }
        return top.map(\.key)
    }

    /// The entries with these ids, each with its folded forms.
    func entries(_ ids: [Int64]) throws -> [Int64: (entry: CatalogueEntry, prepared: PreparedEntry)] {
        guard !ids.isEmpty else { return [:] }
        return try database.read { db in
            let placeholders = Array(repeating: "?", count: ids.count).joined(separator: ",")
            let rows = try Row.fetchCursor(
                db,
                sql: """
                    SELECT id, title, authors, isbn, tag, series,
                        main_words, subtitle_words, surnames, forenames, tag_folded
                    FROM entry WHERE id IN (\(placeholders))
                    """,
                arguments: StatementArguments(ids))
            var found: [Int64: (entry: CatalogueEntry, prepared: PreparedEntry)] = [:]
            found.reserveCapacity(ids.count)
            while let row = try rows.next() {
                let authors: String = row[2]
                let entry = CatalogueEntry(
                    title: row[1],
                    authors: authors.isEmpty
                        ? [] : authors.split(separator: "\n", omittingEmptySubsequences: false).map(String.init),
                    isbn: row[3], tag: row[4], series: row[5])
                let prepared = PreparedEntry(
                    PreparedEntry.Stored(
                        main: row[6], subtitle: row[7], surnames: row[8], forenames: row[9], tag: row[10]))
                found[row[0]] = (entry, prepared)
            }
            return found
        }
    }
}

extension String {
    init(scalars: [UInt32]) {
        var view = String.UnicodeScalarView()
        for value in scalars { if let scalar = Unicode.Scalar(value) { view.append(scalar) } }
        self = String(view)
    }
}
