import Foundation
import GRDB

/// How far the backend got in enriching a book (docs/protocol.md §3). Unknown values read as `pending`.
public enum EnrichmentStatus: String, CaseIterable, Codable, Sendable, Hashable, DatabaseValueConvertible {
    case success
    case notFound = "not_found"
    case error
    case circuitOpen = "circuit_open"
    case pending
    case reviewNeeded = "review_needed"

    /// A tolerant reading of the backend's value: `nil` or unknown → `.pending`.
    public init(tolerating raw: String?) {
        self = raw.flatMap { EnrichmentStatus(rawValue: $0.lowercased()) } ?? .pending
    }
}

/// One row of the `book` table: a book in the library.
///
/// `authors` is stored as a JSON array of names (text), so names with commas survive and FTS5
/// still sees plain words. `needsReview` is a generated column in SQLite; ``needsReview`` here
/// computes the same rule for records not yet saved: a low confidence, the backend's
/// `review_needed`, or a ``reviewReason`` of our own, until a person reviews it (``reviewedAt``).
public struct BookRecord: Identifiable, Hashable, Sendable, Codable, FetchableRecord, MutablePersistableRecord {
    public static let databaseTableName = "book"

    /// Books below this confidence need a person's review.
    public static let reviewThreshold = 0.8

    /// The row id (`nil` until inserted).
    public var id: Int64?
    /// 13 digits, no hyphens (normalise before storing; the schema refuses anything else).
    public var isbn13: String?
    /// 9 digits then a digit or `X`.
    public var isbn10: String?
    public var title: String
    public var authors: [String]
    public var format: String?
    public var publisher: String?
    /// As the backend gave it: "YYYY-MM-DD", "YYYY-MM" or "YYYY".
    public var publishedDate: String?
    public var pageCount: Int?
    public var coverURL: String?
    /// 0…1, `nil` when the backend gave none.
    public var confidence: Double?
    public var enrichmentStatus: EnrichmentStatus
    public var addedAt: Date
    public var updatedAt: Date
    /// The scan that found it (set to `nil` if that scan row is ever deleted).
    public var scanID: UUID?
    /// The backend's JSON for this book, kept for later re-reading. Must be valid JSON.
    public var rawJSON: String?
    /// Who found it: the backend, or a barcode read on the device.
    public var source: BookSource = .backend
    /// Why the device does not trust this record by itself (fields of the wrong type, no
    /// confidence…), in words for a person; `nil` when nothing was wrong.
    public var reviewReason: String?
    /// When a person approved or edited the book; from then on it no longer needs review.
    public var reviewedAt: Date?
    /// When a person last corrected its title, authors or ISBN; later sightings no longer overwrite them.
    public var editedAt: Date?

    public init(
        id: Int64? = nil, isbn13: String? = nil, isbn10: String? = nil, title: String, authors: [String] = [],
        format: String? = nil, publisher: String? = nil, publishedDate: String? = nil, pageCount: Int? = nil,
        coverURL: String? = nil, confidence: Double? = nil, enrichmentStatus: EnrichmentStatus = .pending,
        addedAt: Date = Date(), updatedAt: Date? = nil, scanID: UUID? = nil, rawJSON: String? = nil,
        reviewReason: String? = nil, reviewedAt: Date? = nil, editedAt: Date? = nil
    ) {
        self.id = id
        self.isbn13 = isbn13
        self.isbn10 = isbn10
        self.title = title
        self.authors = authors
        self.format = format
        self.publisher = publisher
        self.publishedDate = publishedDate
        self.pageCount = pageCount
        self.coverURL = coverURL
        self.confidence = confidence
        self.enrichmentStatus = enrichmentStatus
        self.addedAt = addedAt
        self.updatedAt = updatedAt ?? addedAt
        self.scanID = scanID
        self.rawJSON = rawJSON
        self.reviewReason = reviewReason
        self.reviewedAt = reviewedAt
        self.editedAt = editedAt
    }

    /// Not yet reviewed by a person, and: confidence below ``reviewThreshold``, the backend asked for
    /// review, or the device found something wrong (``reviewReason``). The same rule as the generated
    /// `needsReview` column.
    public var needsReview: Bool {
        guard reviewedAt == nil else { return false }
        return (confidence.map { $0 < Self.reviewThreshold } ?? false) || enrichmentStatus == .reviewNeeded
            || reviewReason != nil
    }

    private enum CodingKeys: String, CodingKey {
        case id, isbn13, isbn10, title, authors, format, publisher, publishedDate, pageCount
        case coverURL = "coverUrl"
        case confidence, enrichmentStatus, addedAt, updatedAt
        case scanID = "scanId"
        case rawJSON, source, reviewReason, reviewedAt, editedAt
    }

    public enum Columns {
        public static let id = Column("id")
        public static let isbn13 = Column("isbn13")
        public static let isbn10 = Column("isbn10")
        public static let title = Column("title")
        public static let authors = Column("authors")
        public static let confidence = Column("confidence")
        public static let needsReview = Column("needsReview")
        public static let enrichmentStatus = Column("enrichmentStatus")
        public static let addedAt = Column("addedAt")
        public static let scanID = Column("scanId")
        public static let source = Column("source")
        public static let reviewReason = Column("reviewReason")
        public static let reviewedAt = Column("reviewedAt")
    }

    /// Scan ids are stored as lowercase strings, like `scan.id`.
    public static func databaseUUIDEncodingStrategy(for column: String) -> DatabaseUUIDEncodingStrategy {
        .lowercaseString
    }

    /// Dates as GRDB stores them, written and read without ICU (``StorageTimestamp``).
    public static func databaseDateEncodingStrategy(for column: String) -> DatabaseDateEncodingStrategy {
        StorageTimestamp.encodingStrategy
    }

    public static func databaseDateDecodingStrategy(for column: String) -> DatabaseDateDecodingStrategy {
        StorageTimestamp.decodingStrategy
    }

    public mutating func didInsert(_ inserted: InsertionSuccess) {
        id = inserted.rowID
    }

    /// The row, column by column: the values the `Codable` encoding of a record stores (dates as
    /// ``StorageTimestamp``, the scan id lower-case, the authors a JSON array), without its encoder per value and
    /// JSON encoder per record, which cost more than the insert itself when a job brings many books. With them,
    /// the title + first author key the dedupe finds books by (``matchKey``; "" for a title without one).
    public func encode(to container: inout PersistenceContainer) throws {
        for (column, value) in zip(Self.storedColumns, try storedValues()) { container[column] = value }
    }

    /// A column a record writes (`needsReview` is SQLite's to compute), in the order of ``storedColumns`` and
    /// ``storedValues(matchKey:timestamps:)``: the one list of them, which the insert, the encoding and a merge's
    /// update all read. Each case has its name, its value and its comparison in the switches below, which the
    /// compiler checks are complete; they are switches rather than a table of closures because a commit reads every
    /// column of every book it writes (the closures' indirect calls cost a commit measurably more).
    enum StoredColumn: Int, CaseIterable {
        case id, isbn13, isbn10, title, authors, format, publisher, publishedDate, pageCount, coverURL, confidence
        case enrichmentStatus, addedAt, updatedAt, scanID, rawJSON, source, reviewReason, reviewedAt, editedAt
        case matchTitle, matchAuthor

        var name: String {
            switch self {
            case .coverURL: "coverUrl"
            case .scanID: "scanId"
            default: "\(self)"
            }
        }

        /// The value for `record`, whose match key is `key`; `timestamps`, when given, remembers dates' text.
        @inline(__always)
        func value(of record: BookRecord, key: BookMatchKey?, timestamps: StorageTimestampMemo?) throws
            -> DatabaseValue
        {
            func timestamp(_ date: Date) -> DatabaseValue {
                timestamps?.databaseValue(date) ?? StorageTimestamp.databaseValue(date)
            }
            return switch self {
            case .id: record.id.databaseValue
            case .isbn13: record.isbn13.databaseValue
            case .isbn10: record.isbn10.databaseValue
            case .title: record.title.databaseValue
            case .authors: try BookRecord.authorsJSON(record.authors).databaseValue
            case .format: record.format.databaseValue
            case .publisher: record.publisher.databaseValue
            case .publishedDate: record.publishedDate.databaseValue
            case .pageCount: record.pageCount.databaseValue
            case .coverURL: record.coverURL.databaseValue
            case .confidence: record.confidence.databaseValue
            case .enrichmentStatus: record.enrichmentStatus.databaseValue
            case .addedAt: timestamp(record.addedAt)
            case .updatedAt: timestamp(record.updatedAt)
            case .scanID: record.scanID.map { timestamps?.scanIDText($0) ?? $0.uuidString.lowercased() }.databaseValue
            case .rawJSON: record.rawJSON.databaseValue
            case .source: record.source.databaseValue
            case .reviewReason: record.reviewReason.databaseValue
            case .reviewedAt: record.reviewedAt.map(timestamp) ?? .null
            case .editedAt: record.editedAt.map(timestamp) ?? .null
            case .matchTitle: (key?.title ?? "").databaseValue
            case .matchAuthor: (key?.author ?? "").databaseValue
            }
        }

        /// Whether ``value(of:key:timestamps:)`` would differ for `record` and `old`, told without making either
        /// value (a merge changes a few of a row's columns).
        @inline(__always)
        func differs(
            _ record: BookRecord, _ old: BookRecord, key: BookMatchKey?, oldKey: BookMatchKey?,
            timestamps: StorageTimestampMemo
        ) -> Bool {
            /// Dates are compared as the text they are stored as (two instants within a millisecond are one value).
            func differ(_ date: Date?, _ oldDate: Date?) -> Bool {
                guard let date, let oldDate else { return (date == nil) != (oldDate == nil) }
                return date != oldDate && timestamps.databaseValue(date) != timestamps.databaseValue(oldDate)
            }
            return switch self {
            case .id: record.id != old.id
            case .isbn13: record.isbn13 != old.isbn13
            case .isbn10: record.isbn10 != old.isbn10
            case .title: record.title != old.title
            case .authors: record.authors != old.authors
            case .format: record.format != old.format
            case .publisher: record.publisher != old.publisher
            case .publishedDate: record.publishedDate != old.publishedDate
            case .pageCount: record.pageCount != old.pageCount
            case .coverURL: record.coverURL != old.coverURL
            case .confidence: record.confidence != old.confidence
            case .enrichmentStatus: record.enrichmentStatus != old.enrichmentStatus
            case .addedAt: differ(record.addedAt, old.addedAt)
            case .updatedAt: differ(record.updatedAt, old.updatedAt)
            case .scanID: record.scanID != old.scanID
            case .rawJSON: record.rawJSON != old.rawJSON
            case .source: record.source != old.source
            case .reviewReason: record.reviewReason != old.reviewReason
            case .reviewedAt: differ(record.reviewedAt, old.reviewedAt)
            case .editedAt: differ(record.editedAt, old.editedAt)
            case .matchTitle: (key?.title ?? "") != (oldKey?.title ?? "")
            case .matchAuthor: (key?.author ?? "") != (oldKey?.author ?? "")
            }
        }
    }

    /// The names of the columns a record writes (``StoredColumn``), in order.
    static let storedColumns = StoredColumn.allCases.map(\.name)

    /// The values of ``storedColumns``; `key` is this book's ``matchKey``, when the caller has it already;
    /// `timestamps` remembers the text of dates already written (a job's books share theirs).
    func storedValues(
        matchKey key: BookMatchKey?? = nil, timestamps: StorageTimestampMemo? = nil
    ) throws -> [DatabaseValue] {
        var values: [DatabaseValue] = []
        values.reserveCapacity(StoredColumn.allCases.count)
        try appendStoredValues(to: &values, matchKey: key, timestamps: timestamps)
        return values
    }

    /// ``storedValues(matchKey:timestamps:)`` appended to `values`: a multi-row insert's arguments without an
    /// array per row.
    func appendStoredValues(
        to values: inout [DatabaseValue], matchKey key: BookMatchKey?? = nil, timestamps: StorageTimestampMemo? = nil
    ) throws {
        let key = key ?? matchKey
        for column in StoredColumn.allCases {
            values.append(try column.value(of: self, key: key, timestamps: timestamps))
        }
    }

    /// The columns (indices into ``storedColumns``) whose values ``storedValues(matchKey:timestamps:)`` would give
    /// differently for this record and `old`, with this record's values of them: compared field by field, a
    /// value made only for a column that changed (a merge changes a few of a row's columns).
    func storedChanges(
        from old: BookRecord, matchKey key: BookMatchKey?, oldMatchKey oldKey: BookMatchKey?,
        timestamps: StorageTimestampMemo
    ) throws -> (columns: [Int], values: [DatabaseValue]) {
        var columns: [Int] = []
        var values: [DatabaseValue] = []
        for column in StoredColumn.allCases
        where column.differs(self, old, key: key, oldKey: oldKey, timestamps: timestamps) {
            columns.append(column.rawValue)
            values.append(try column.value(of: self, key: key, timestamps: timestamps))
        }
        return (columns, values)
    }

    /// The names as the JSON text GRDB's `Codable` encoding gives an array column (its default JSON encoder).
    /// Names with nothing that encoder escapes are written directly, the same text at a small part of its cost.
    static func authorsJSON(_ authors: [String]) throws -> String {
        guard authors.allSatisfy(isVerbatimJSON) else {
            return String(decoding: try authorsEncoder.encode(authors), as: UTF8.self)
        }
        var json = "["
        for (index, name) in authors.enumerated() {
            if index > 0 { json += "," }
            json += "\"" + name + "\""
        }
        return json + "]"
    }

    /// True when `text` goes into a JSON string as it is: no quote, backslash or slash (escaped without
    /// `.withoutEscapingSlashes`), no control character; DEL, U+2028 and U+2029 are left to the encoder too.
    static func isVerbatimJSON(_ text: String) -> Bool {
        text.unicodeScalars.allSatisfy { scalar in
            switch scalar.value {
            case 0..<0x20, 0x22, 0x2F, 0x5C, 0x7F, 0x2028, 0x2029: false
            default: true
            }
        }
    }

    private static let authorsEncoder = BookRecord.databaseJSONEncoder(for: "authors")
}

/// The ``StorageTimestamp`` text of dates already written, for writes of many rows with the same dates, and the
/// text of the scan id they share (a job's books all link to its scan).
final class StorageTimestampMemo {
    private var values: [Date: DatabaseValue] = [:]
    private var scanID: (id: UUID, text: String)?

    /// The stored text of a scan id: lower-case, as `scan.id` holds it.
    func scanIDText(_ id: UUID) -> String {
        if let scanID, scanID.id == id { return scanID.text }
        let text = id.uuidString.lowercased()
        scanID = (id, text)
        return text
    }

    func databaseValue(_ date: Date) -> DatabaseValue {
        if let value = values[date] { return value }
        let value = StorageTimestamp.databaseValue(date)
        values[date] = value
        return value
    }
}

extension BookRecord {
    /// The record in `row` (a `SELECT *` of `book`) read column by column, or `nil` when a value is not the plain
    /// form this reads (another storage class, a date it cannot read, authors' JSON with an escape or a space):
    /// then `init(row:)`, the `Codable` decoding, reads it and fails as it does. Where this reads a row, it gives
    /// the record that decoding gives, at a small part of its cost (a job's merges read tens of rows).
    static func quicklyDecoded(_ row: Row, columns: [String: Int]) -> BookRecord? {
        func value(_ name: String) -> DatabaseValue.Storage? {
            guard let index = columns[name] else { return nil }
            return (row[index] as DatabaseValue).storage
        }
        /// `.some(nil)` for NULL, `nil` for a value that is not text.
        func optionalText(_ name: String) -> String?? {
            switch value(name) {
            case .null: .some(nil)
            case .string(let text): .some(text)
            default: nil
            }
        }
        func optionalDate(_ name: String) -> Date?? {
            switch value(name) {
            case .null: .some(nil)
            case .string(let text): StorageTimestamp.date(from: text.databaseValue).map { .some($0) }
            default: nil
            }
        }
        guard case .int64(let id) = value("id"), case .string(let title) = value("title"),
            case .string(let authorsJSON) = value("authors"), let authors = plainAuthors(authorsJSON),
            case .string(let status) = value("enrichmentStatus"),
            let enrichmentStatus = EnrichmentStatus(rawValue: status),
            case .string(let sourceText) = value("source"), let source = BookSource(rawValue: sourceText),
            let addedAt = optionalDate("addedAt") ?? nil, let updatedAt = optionalDate("updatedAt") ?? nil,
            let reviewedAt = optionalDate("reviewedAt"), let editedAt = optionalDate("editedAt"),
            let isbn13 = optionalText("isbn13"), let isbn10 = optionalText("isbn10"),
            let format = optionalText("format"),
            let publisher = optionalText("publisher"), let publishedDate = optionalText("publishedDate"),
            let coverURL = optionalText("coverUrl"), let rawJSON = optionalText("rawJSON"),
            let reviewReason = optionalText("reviewReason"), let scanText = optionalText("scanId")
        else { return nil }
        let pageCount: Int?
        switch value("pageCount") {
        case .null: pageCount = nil
        case .int64(let count): pageCount = Int(count)
        default: return nil
        }
        let confidence: Double?
        switch value("confidence") {
        case .null: confidence = nil
        case .double(let number): confidence = number
        default: return nil
        }
        var scanID: UUID?
        if let scanText {
            guard let uuid = UUID(uuidString: scanText) else { return nil }
            scanID = uuid
        }
        var record = BookRecord(
            id: id, isbn13: isbn13, isbn10: isbn10, title: title, authors: authors, format: format,
            publisher: publisher, publishedDate: publishedDate, pageCount: pageCount, coverURL: coverURL,
            confidence: confidence, enrichmentStatus: enrichmentStatus, addedAt: addedAt, updatedAt: updatedAt,
            scanID: scanID, rawJSON: rawJSON, reviewReason: reviewReason, reviewedAt: reviewedAt, editedAt: editedAt)
        record.source = source
        return record
    }

    /// The names of `["a","b"]` written without spaces, escapes or control characters (as ``authorsJSON(_:)``
    /// writes them); `nil` for any other JSON.
    static func plainAuthors(_ json: String) -> [String]? {
        // On the UTF-8 bytes: `"` and `,` are ASCII, so they never occur inside another character's bytes.
        let bytes = Array(json.utf8)
        if bytes == Array("[]".utf8) { return [] }
        let quote = UInt8(ascii: "\"")
        guard bytes.count >= 4, bytes[0] == UInt8(ascii: "["), bytes[1] == quote, bytes[bytes.count - 2] == quote,
            bytes[bytes.count - 1] == UInt8(ascii: "]"),
            !bytes.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\\") })
        else { return nil }
        // The names sit between `["`, `","` and `"]`; any other quote is JSON this does not read.
        var names: [String] = []
        var start = 2
        var index = 2
        let end = bytes.count - 2
        while index < end {
            if bytes[index] == quote {
                guard index + 2 < end, bytes[index + 1] == UInt8(ascii: ","), bytes[index + 2] == quote else {
                    return nil
                }
                names.append(String(decoding: bytes[start..<index], as: UTF8.self))
                index += 3
                start = index
            } else {
                index += 1
            }
        }
        names.append(String(decoding: bytes[start..<end], as: UTF8.self))
        return names
    }
}
