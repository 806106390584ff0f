import Foundation
import GRDB

/// A book a spine to check may be, as the backend named it (docs/protocol.md §6 `candidates`).
public struct SpineCandidateRecord: Hashable, Sendable, Codable {
    public var title: String
    public var authors: [String]
    public var isbn13: String?
    public var isbn10: String?
    /// 0–1, `nil` when the backend gave none.
    public var confidence: Double?
    public var source: String?

    public init(
        title: String, authors: [String] = [], isbn13: String? = nil, isbn10: String? = nil,
        confidence: Double? = nil, source: String? = nil
    ) {
        self.title = title
        self.authors = authors
        self.isbn13 = isbn13
        self.isbn10 = isbn10
        self.confidence = confidence
        self.source = source
    }
}

/// Where a spine stands on its photo, in fractions (0–1) of the photo's width and height.
public struct SpineBox: Hashable, Sendable {
    public var x: Double
    public var y: Double
    public var width: Double
    public var height: Double
    public init(x: Double, y: Double, width: Double, height: Double) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }
}

/// A spine the backend read but did not identify, as it lands with its scan's books.
public struct NewSpineToCheck: Hashable, Sendable {
    public var text: String
    public var box: SpineBox?
    public var candidates: [SpineCandidateRecord]
    public init(text: String, box: SpineBox?, candidates: [SpineCandidateRecord]) {
        self.text = text
        self.box = box
        self.candidates = candidates
    }
}

/// One row of `spineToCheck`: a spine read and not identified, until the owner picks its book or dismisses it.
public struct SpineToCheck: Hashable, Sendable, Identifiable {
    public enum State: String, Sendable, Hashable, CaseIterable {
        case toCheck, picked, dismissed
    }
    /// Whether the spine's picture was cut from the photo: `pending` until the uplink cuts it (the photo is kept
    /// until then), `kept`, or `none` (no box, or the box gave no picture).
    public enum CropState: String, Sendable, Hashable, CaseIterable {
        case pending, kept, none
    }

    public var id: Int64
    public var scanID: UUID
    public var jobID: String?
    public var text: String
    public var box: SpineBox?
    public var candidates: [SpineCandidateRecord]
    public var cropState: CropState
    public var state: State
    /// The book the owner picked (nil until then, or when that book was deleted since).
    public var bookID: Int64?
    public var createdAt: Date
    public var resolvedAt: Date?
}

/// The spine's picture, cut from the scan's photo (the same limits as ``BookCover``).
public struct SpinePicture: Hashable, Sendable {
    public var spineID: Int64
    public var jpeg: [UInt8]
    public var width: Int
    public var height: Int
    public init(spineID: Int64, jpeg: [UInt8], width: Int, height: Int) {
        self.spineID = spineID
        self.jpeg = jpeg
        self.width = width
        self.height = height
    }
}

/// What became of a review step (``AppDatabase/pickBook(spineID:candidate:now:)``,
/// ``AppDatabase/dismissSpine(id:now:)``): said as data, so the web page and the CLI word it their way.
public enum SpineReviewOutcome: Hashable, Sendable {
    /// The book landed (or a book already in the library took the spine), with the spine's picture when it had none.
    case picked(BookRecord)
    case dismissed
    /// No spine has that id.
    case notFound
    /// The spine was picked or dismissed already.
    case alreadyResolved(SpineToCheck.State)
    /// The spine has `count` candidates; the one asked for is not among them.
    case noSuchCandidate(count: Int)
}

extension AppDatabase {
    /// The largest number of candidates kept per spine (the schema refuses more).
    public static let spineCandidatesKept = 8

    /// The table (migration `v8-spine-to-check`). The checks hold what every reader relies on: text present, a box
    /// all there or all absent and inside the photo, candidates a JSON array of at most 8, a crop only when `kept`
    /// and then a small JPEG, `resolvedAt` exactly when no longer to check, a picked book only on a picked spine.
    /// A spine belongs to its scan (scans are never deleted); a picked book deleted later leaves the spine picked.
    static func createSpineToCheck(_ db: Database) throws {
        try db.execute(
            sql: """
                CREATE TABLE spineToCheck (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    scanId TEXT NOT NULL REFERENCES scan(id) ON DELETE RESTRICT,
                    jobId TEXT CHECK (jobId IS NULL OR length(jobId) > 0),
                    text TEXT NOT NULL CHECK (length(trim(text)) BETWEEN 1 AND 4000),
                    boxX REAL, boxY REAL, boxWidth REAL, boxHeight REAL,
                    candidates TEXT NOT NULL DEFAULT '[]' CHECK (
                        json_valid(candidates) AND json_type(candidates) = 'array'
                        AND json_array_length(candidates) <= \(spineCandidatesKept)),
                    cropState TEXT NOT NULL CHECK (cropState IN ('pending', 'kept', 'none')),
                    crop BLOB CHECK (crop IS NULL OR (typeof(crop) = 'blob' AND length(crop) BETWEEN 4 AND 131072
                        AND substr(crop, 1, 3) = x'FFD8FF')),
                    cropWidth INTEGER CHECK (cropWidth IS NULL OR cropWidth BETWEEN 1 AND 640),
                    cropHeight INTEGER CHECK (cropHeight IS NULL OR cropHeight BETWEEN 1 AND 640),
                    state TEXT NOT NULL DEFAULT 'toCheck' CHECK (state IN ('toCheck', 'picked', 'dismissed')),
                    bookId INTEGER REFERENCES book(id) ON DELETE SET NULL,
                    createdAt DATETIME NOT NULL,
                    resolvedAt DATETIME,
                    CHECK ((boxX IS NULL) = (boxY IS NULL) AND (boxX IS NULL) = (boxWidth IS NULL)
                        AND (boxX IS NULL) = (boxHeight IS NULL)),
                    CHECK (boxX IS NULL OR (boxX >= 0 AND boxY >= 0 AND boxWidth > 0 AND boxHeight > 0
                        AND boxX + boxWidth <= 1.001 AND boxY + boxHeight <= 1.001)),
                    CHECK ((cropState = 'kept') = (crop IS NOT NULL)),
                    CHECK ((crop IS NULL) = (cropWidth IS NULL) AND (crop IS NULL) = (cropHeight IS NULL)),
                    CHECK (cropState <> 'pending' OR boxX IS NOT NULL),
                    CHECK ((state = 'toCheck') = (resolvedAt IS NULL)),
                    CHECK (state = 'picked' OR bookId IS NULL)
                )
                """)
        try db.create(index: "spineToCheck_on_state", on: "spineToCheck", columns: ["state", "id"])
        try db.execute(
            sql: "CREATE INDEX spineToCheck_pending_crop ON spineToCheck (scanId) WHERE cropState = 'pending'")
    }

    /// Lands a scan's books and its spines to check with its `done`, in one transaction: either all of them are in
    /// or none is, so a crash after it loses nothing read (the crops are cut afterwards, from the photo kept until
    /// then). A scan found done already returns its first landing and adds nothing.
    public func completeScanMatchingTitles(
        _ id: UUID, books: [BookRecord], spines: [NewSpineToCheck], jobID: String?, now: Date = Date()
    ) throws(StoreError) -> (scan: ScanRecord, books: [BookRecord], spines: [SpineToCheck]) {
        try write("the scan's results were not saved (it stays analyzing and is fetched again)") { db in
            var landed: [SpineToCheck] = []
            let (scan, saved) = try Self.completeScan(id, books: books, now: now, db) { books, db in
                var batch = MatchingBatch(now: now)
                let saved = try batch.save(books, db)
                landed = try Self.insertSpines(spines, scanID: id, jobID: jobID, now: now, db)
                return saved
            }
            return (scan, saved, landed)
        }
    }

    private static func insertSpines(
        _ spines: [NewSpineToCheck], scanID: UUID, jobID: String?, now: Date, _ db: Database
    ) throws -> [SpineToCheck] {
        guard !spines.isEmpty else { return [] }
        let insert = try db.cachedStatement(
            sql: """
                INSERT INTO spineToCheck (scanId, jobId, text, boxX, boxY, boxWidth, boxHeight, candidates, cropState,
                    createdAt)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var landed: [SpineToCheck] = []
        for spine in spines {
            let candidates = Array(spine.candidates.prefix(spineCandidatesKept))
            let json = String(decoding: try encoder.encode(candidates), as: UTF8.self)
            let cropState: SpineToCheck.CropState = spine.box == nil ? .none : .pending
            try insert.execute(arguments: [
                scanID.uuidString.lowercased(), jobID, spine.text, spine.box?.x, spine.box?.y, spine.box?.width,
                spine.box?.height, json, cropState.rawValue, StorageTimestamp.databaseValue(now),
            ])
            landed.append(
                SpineToCheck(
                    id: db.lastInsertedRowID, scanID: scanID, jobID: jobID, text: spine.text, box: spine.box,
                    candidates: candidates, cropState: cropState, state: .toCheck, bookID: nil, createdAt: now,
                    resolvedAt: nil))
        }
        return landed
    }

    // MARK: Crops

    /// The spines of `scanID` whose picture is still to be cut, with their boxes.
    public func spinesAwaitingCrop(scanID: UUID) throws(StoreError) -> [(id: Int64, box: SpineBox)] {
        try read("the spines waiting for their pictures were not read") { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT id, boxX, boxY, boxWidth, boxHeight FROM spineToCheck
                    WHERE scanId = ? AND cropState = 'pending' ORDER BY id
                    """, arguments: [scanID.uuidString.lowercased()]
            ).map { row in
                (
                    id: row["id"],
                    box: SpineBox(x: row["boxX"], y: row["boxY"], width: row["boxWidth"], height: row["boxHeight"])
                )
            }
        }
    }

    /// Settles the pictures of spines still `pending`, in one transaction: each in `crops` is kept, each of
    /// `without` (its box gave no picture) becomes `none`. A spine settled already is left as it is, so cutting
    /// twice (a restart between the cut and the commit) changes nothing. Returns how many pictures were kept.
    @discardableResult
    public func saveSpineCrops(_ crops: [SpinePicture], without: [Int64] = []) throws(StoreError) -> Int {
        guard !crops.isEmpty || !without.isEmpty else { return 0 }
        return try write("the spines' pictures were not kept (the spines are kept without them)") { db in
            var kept = 0
            for crop in crops {
                try db.execute(
                    sql: """
                        UPDATE spineToCheck SET crop = ?, cropWidth = ?, cropHeight = ?, cropState = 'kept'
                        WHERE id = ? AND cropState = 'pending'
                        """, arguments: [Data(crop.jpeg), crop.width, crop.height, crop.spineID])
                kept += db.changesCount
            }
            for id in without {
                try db.execute(
                    sql: "UPDATE spineToCheck SET cropState = 'none' WHERE id = ? AND cropState = 'pending'",
                    arguments: [id])
            }
            return kept
        }
    }

    /// The picture of spine `id`, or `nil` when it has none.
    public func spineCrop(id: Int64) throws(StoreError) -> SpinePicture? {
        try read("the spine's picture was not read") { db in
            guard
                let row = try Row.fetchOne(
                    db, sql: "SELECT crop, cropWidth, cropHeight FROM spineToCheck WHERE id = ? AND crop IS NOT NULL",
                    arguments: [id])
            else { return nil }
            let jpeg: Data = row["crop"]
            return SpinePicture(spineID: id, jpeg: Array(jpeg), width: row["cropWidth"], height: row["cropHeight"])
        }
    }

    // MARK: Reading

    /// How many spines wait for the owner.
    public func spinesToCheckCount() throws(StoreError) -> Int {
        try read("the spines to check were not counted") { db in
            try Int.fetchOne(db, sql: "SELECT count(*) FROM spineToCheck WHERE state = 'toCheck'") ?? 0
        }
    }

    /// Spines to check, oldest first, `limit` from `offset`; every spine (picked and dismissed too) when `all`.
    public func spinesToCheck(all: Bool = false, limit: Int = .max, offset: Int = 0) throws(StoreError)
        -> [SpineToCheck]
    {
        try read("the spines to check were not read") { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT \(Self.spineColumns) FROM spineToCheck \(all ? "" : "WHERE state = 'toCheck'")
                    ORDER BY id LIMIT ? OFFSET ?
                    """, arguments: [min(limit, Int(Int64.max)), offset]
            ).map(Self.spine)
        }
    }

    /// Spine `id`, in any state, or `nil`.
    public func spineToCheck(id: Int64) throws(StoreError) -> SpineToCheck? {
        try read("the spine was not read") { db in try Self.spine(id: id, db) }
    }

    private static let spineColumns = """
        id, scanId, jobId, text, boxX, boxY, boxWidth, boxHeight, candidates, cropState, state, bookId, createdAt,
        resolvedAt
        """

    private static func spine(id: Int64, _ db: Database) throws -> SpineToCheck? {
        try Row.fetchOne(db, sql: "SELECT \(spineColumns) FROM spineToCheck WHERE id = ?", arguments: [id])
            .map(spine)
    }

    private static func spine(_ row: Row) throws -> SpineToCheck {
        let boxX: Double? = row["boxX"]
        let box = boxX.map { x in
            SpineBox(x: x, y: row["boxY"], width: row["boxWidth"], height: row["boxHeight"])
        }
        let json: String = row["candidates"]
        let candidates = (try? JSONDecoder().decode([SpineCandidateRecord].self, from: Data(json.utf8))) ?? []
        let scanID: String = row["scanId"]
        return SpineToCheck(
            id: row["id"], scanID: UUID(uuidString: scanID) ?? UUID(), jobID: row["jobId"], text: row["text"], box: box,
            candidates: candidates,
            cropState: SpineToCheck.CropState(rawValue: row["cropState"]) ?? .none,
            state: SpineToCheck.State(rawValue: row["state"]) ?? .toCheck, bookID: row["bookId"],
            createdAt: try StorageTimestamp.date(in: row, Column("createdAt")),
            resolvedAt: try StorageTimestamp.optionalDate(in: row, Column("resolvedAt")))
    }

    // MARK: Review

    /// The owner says spine `spineID` is its candidate number `candidate` (0 the first). The book lands as the
    /// owner's choice (reviewed), into the book already in the library when it is one (same ISBN or title and
    /// author), with the spine's picture when the book has none; the spine leaves the list. One transaction.
    public func pickBook(spineID: Int64, candidate: Int, now: Date = Date()) throws(StoreError) -> SpineReviewOutcome {
        try write("the book was not added and the spine stays to check") { db in
            guard let spine = try Self.spine(id: spineID, db) else { return .notFound }
            guard spine.state == .toCheck else { return .alreadyResolved(spine.state) }
            guard spine.candidates.indices.contains(candidate) else {
                return .noSuchCandidate(count: spine.candidates.count)
            }
            return .picked(try Self.land(spine, as: spine.candidates[candidate], now: now, db))
        }
    }

    /// The owner names the book themselves (a search over a catalogue, or typed): as ``pickBook(spineID:candidate:now:)``.
    public func pickBook(spineID: Int64, book: SpineCandidateRecord, now: Date = Date()) throws(StoreError)
        -> SpineReviewOutcome
    {
        try write("the book was not added and the spine stays to check") { db in
            guard let spine = try Self.spine(id: spineID, db) else { return .notFound }
            guard spine.state == .toCheck else { return .alreadyResolved(spine.state) }
            return .picked(try Self.land(spine, as: book, now: now, db))
        }
    }

    /// "Not a book": the spine leaves the list, kept as dismissed (its text and picture stay for the export).
    public func dismissSpine(id: Int64, now: Date = Date()) throws(StoreError) -> SpineReviewOutcome {
        try write("the spine was not dismissed") { db in
            guard let spine = try Self.spine(id: id, db) else { return .notFound }
            guard spine.state == .toCheck else { return .alreadyResolved(spine.state) }
            try db.execute(
                sql: "UPDATE spineToCheck SET state = 'dismissed', resolvedAt = ? WHERE id = ?",
                arguments: [StorageTimestamp.databaseValue(now), id])
            return .dismissed
        }
    }

    private static func land(
        _ spine: SpineToCheck, as chosen: SpineCandidateRecord, now: Date, _ db: Database
    ) throws -> BookRecord {
        // The choice's JSON with the text it was read from, as a backend's book carries it (no box: the picture
        // comes from the spine's own crop, below, not from a photo that is gone).
        var object: [String: Any] = [
            "title": chosen.title, "authors": chosen.authors, "text": spine.text, "source": "review",
        ]
        if let isbn = chosen.isbn13 ?? chosen.isbn10 { object["isbn"] = isbn }
        if let confidence = chosen.confidence { object["confidence"] = confidence }
        if let source = chosen.source { object["candidateSource"] = source }
        let raw = String(
            decoding: try JSONSerialization.data(
                withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]),
            as: UTF8.self)
        let book = BookRecord(
            isbn13: chosen.isbn13, isbn10: chosen.isbn10, title: chosen.title, authors: chosen.authors,
            confidence: chosen.confidence, enrichmentStatus: .success, addedAt: now, updatedAt: now,
            scanID: spine.scanID, rawJSON: raw, reviewedAt: now)
        var batch = MatchingBatch(now: now)
        guard let saved = try batch.save([book], db).first, let bookID = saved.id else {
            throw DatabaseError(message: "the picked book was not saved")
        }
        try db.execute(
            sql: """
                INSERT INTO bookCover (bookId, jpeg, width, height, createdAt)
                SELECT ?, crop, cropWidth, cropHeight, ? FROM spineToCheck WHERE id = ? AND crop IS NOT NULL
                ON CONFLICT (bookId) DO NOTHING
                """, arguments: [bookID, StorageTimestamp.databaseValue(now), spine.id])
        try db.execute(
            sql: "UPDATE spineToCheck SET state = 'picked', bookId = ?, resolvedAt = ? WHERE id = ?",
            arguments: [bookID, StorageTimestamp.databaseValue(now), spine.id])
        return saved
    }
}
