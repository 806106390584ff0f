import Foundation
import Store
import SwiftWingCore

/// One book as `swiftwing library --json` prints it: the stored fields and `needsReview`, which
/// SQLite computes (so it is not a stored field of ``BookRecord``).
public struct LibraryEntry: Encodable, Sendable {
    public var book: BookRecord

    public init(_ book: BookRecord) {
        self.book = book
    }

    private enum ComputedKeys: String, CodingKey {
        case needsReview
    }

    public func encode(to encoder: any Encoder) throws {
        try book.encode(to: encoder)
        var container = encoder.container(keyedBy: ComputedKeys.self)
        try container.encode(book.needsReview, forKey: .needsReview)
    }
}

/// `swiftwing library show|edit|delete|review`: a person's changes to the library.
///
/// They work whether the daemon runs or not, and never race it: each one opens the daemon's own
/// database as a second WAL connection (``AppDatabase/openForChanges(_:)``) and makes its change in
/// one transaction, which waits for the daemon's transaction in progress (the busy timeout) and is
/// then seen by the daemon's next read.
public enum LibraryManagement {
    /// The book `id`, read as any reader does.
    public static func show(id: Int64, configuration: ApplianceConfiguration) throws(ApplianceError) -> BookRecord {
        do {
            let database = try AppDatabase.openReadOnly(StateDirectory(path: configuration.stateDirectory))
            return try database.library.existingBook(id: id)
        } catch {
            throw ApplianceError(error.description)
        }
    }

    /// Corrects the book `id`. `isbn` is what a person typed (ISBN-10 or -13, hyphens allowed) and
    /// must pass its checksum. The book then counts as reviewed unless `keepForReview`.
    public static func edit(
        id: Int64, title: String?, authors: [String]?, isbn: String?, keepForReview: Bool,
        configuration: ApplianceConfiguration
    ) throws(ApplianceError) -> BookRecord {
        var correction = BookCorrection(title: title, authors: authors, keepForReview: keepForReview)
        if let title, title.trimmingCharacters(in: .whitespaces).isEmpty {
            throw ApplianceError("--title is empty: give the book's title, or leave --title out to keep it")
        }
        if let authors, authors.contains(where: { $0.trimmingCharacters(in: .whitespaces).isEmpty }) {
            throw ApplianceError("an --author is empty: give each author's name (repeat --author for several)")
        }
        if let isbn {
            let checked = try checkedISBN(isbn)
            correction.isbn13 = checked.isbn13
            correction.isbn10 = checked.isbn10
        }
        return try change(configuration) { library throws(StoreError) in try library.correct(id: id, correction) }
    }

    /// Marks the book `id` as checked by a person.
    public static func approve(id: Int64, configuration: ApplianceConfiguration) throws(ApplianceError) -> BookRecord {
        try change(configuration) { library throws(StoreError) in try library.approve(id: id) }
    }

    /// Removes the book `id` and returns what it was.
    public static func delete(id: Int64, configuration: ApplianceConfiguration) throws(ApplianceError) -> BookRecord {
        try change(configuration) { library throws(StoreError) in try library.delete(id: id) }
    }

    /// Puts back a book ``delete(id:configuration:)`` removed, with its id and every field (the browser's undo).
    /// Refused when another book has taken its ISBN-13 meanwhile.
    public static func restore(_ book: BookRecord, configuration: ApplianceConfiguration) throws(ApplianceError)
        -> BookRecord
    {
        try change(configuration) { library throws(StoreError) in try library.insert(book) }
    }

    /// Removes the book `id` with its picture, in one transaction, and returns both (the browser's delete, which it
    /// can undo).
    public static func deleteKeepingCover(id: Int64, configuration: ApplianceConfiguration) throws(ApplianceError)
        -> DeletedBook
    {
        try changeDatabase(configuration) { database throws(StoreError) in
            try database.deleteBookKeepingCover(id: id)
        }
    }

    /// Puts back a book ``deleteKeepingCover(id:configuration:)`` removed, with its id, every field and its picture.
    /// Both come back in one transaction, or neither: refused when another book has taken its ISBN-13 meanwhile.
    public static func restore(_ deleted: DeletedBook, configuration: ApplianceConfiguration) throws(ApplianceError)
        -> BookRecord
    {
        try changeDatabase(configuration) { database throws(StoreError) in
            try database.restoreBook(deleted)
        }
    }

    /// The books a person should check: below 0.8 confidence, or flagged, and not yet reviewed.
    public static func reviewList(configuration: ApplianceConfiguration) throws(ApplianceError) -> LibraryReport {
        do {
            let database = try AppDatabase.openReadOnly(StateDirectory(path: configuration.stateDirectory))
            return LibraryReport(books: try database.library.books(needingReviewOnly: true))
        } catch {
            throw ApplianceError(error.description)
        }
    }

    /// The ISBN-13 and ISBN-10 of what a person typed, or advice naming the right check digit.
    public static func checkedISBN(_ typed: String) throws(ApplianceError) -> (isbn13: String, isbn10: String?) {
        do {
            let isbn = try ISBN(parsing: typed)
            return (isbn.isbn13, isbn.isbn10)
        } catch {
            switch error {
            case .wrongCheckDigit(_, let right):
                throw ApplianceError(
                    "ISBN \(typed) fails its checksum (the last character should be \(right)): "
                        + "copy it again from the back cover or the copyright page")
            case .notAnISBN:
                throw ApplianceError(
                    "\"\(typed)\" is not an ISBN: give the 13 digits starting with 978 or 979 (or the 10 of an old "
                        + "ISBN, the last may be X); hyphens and spaces are fine")
            }
        }
    }

    /// Runs one change on the daemon's database (see the type's documentation).
    private static func change(
        _ configuration: ApplianceConfiguration, _ body: (Store.Library) throws(StoreError) -> BookRecord
    ) throws(ApplianceError) -> BookRecord {
        try changeDatabase(configuration) { database throws(StoreError) in try body(database.library) }
    }

    /// Runs changes on the daemon's database, each in a transaction of its own.
    private static func changeDatabase<Result>(
        _ configuration: ApplianceConfiguration, _ body: (AppDatabase) throws(StoreError) -> Result
    ) throws(ApplianceError) -> Result {
        let state = StateDirectory(path: configuration.stateDirectory)
        try refuseForeignOwner(state.databasePath)
        do {
            return try body(try AppDatabase.openForChanges(state))
        } catch {
            throw ApplianceError(error.description)
        }
    }

    /// Root writing to the daemon's database would leave files (`-wal`, `-shm`) the daemon's user
    /// cannot open; refuse and name the user to run as.
    package static func refuseForeignOwner(_ path: String) throws(ApplianceError) {
        var info = stat()
        guard geteuid() == 0, stat(path, &info) == 0, info.st_uid != 0 else { return }
        let owner = getpwuid(info.st_uid).flatMap { String(validatingCString: $0.pointee.pw_name) } ?? "\(info.st_uid)"
        throw ApplianceError(
            "\(path) belongs to \(owner): run the command as that user (`sudo -u \(owner) swiftwing library …`) "
                + "so the database's files stay the daemon's")
    }
}

extension LibraryEntry {
    public func json() -> String { stableJSON(self) }

    /// Every field, one per line, then the backend's JSON as it came (indented).
    public func text() -> String {
        var review = book.needsReview ? "yes — " + (book.reviewReason ?? LibraryReport.lowConfidence(book)) : "no"
        if let reviewed = book.reviewedAt { review += " (reviewed \(UTCDateParts(reviewed).iso8601))" }
        let fields: [(String, String?)] = [
            ("id", book.id.map(String.init)), ("title", book.title.isEmpty ? "(none yet)" : book.title),
            ("authors", book.authors.isEmpty ? nil : book.authors.joined(separator: "; ")),
            ("ISBN-13", book.isbn13), ("ISBN-10", book.isbn10), ("format", book.format), ("publisher", book.publisher),
            ("published", book.publishedDate), ("pages", book.pageCount.map(String.init)), ("cover", book.coverURL),
            ("confidence", book.confidence.map { String($0) }), ("needs review", review),
            ("enrichment", book.enrichmentStatus.rawValue), ("source", book.source.rawValue),
            ("added", UTCDateParts(book.addedAt).iso8601), ("updated", UTCDateParts(book.updatedAt).iso8601),
            ("scan", book.scanID?.uuidString.lowercased()),
        ]
        var lines = fields.map { name, value in
            (name + ":").padding(toLength: 14, withPad: " ", startingAt: 0) + (value ?? "-")
        }
        lines.append("raw JSON:")
        lines.append(Self.indented(book.rawJSON) ?? "  (none: the book was not sent by the backend)")
        return lines.joined(separator: "\n")
    }

    /// The JSON pretty-printed and indented by two spaces; the text as it is when it is not JSON.
    public static func indented(_ raw: String?) -> String? {
        guard let raw else { return nil }
        var text = raw
        if let object = try? JSONSerialization.jsonObject(with: Data(raw.utf8), options: [.fragmentsAllowed]),
            let data = try? JSONSerialization.data(
                withJSONObject: object,
                options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes, .fragmentsAllowed])
        {
            text = String(decoding: data, as: UTF8.self)
        }
        return text.split(separator: "\n", omittingEmptySubsequences: false).map { "  " + $0 }.joined(separator: "\n")
    }
}
