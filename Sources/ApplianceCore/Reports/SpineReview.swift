import Foundation
import Store
import SwiftWingCore
import Talaria

/// `swiftwing review`: the spines read but not identified (docs/protocol.md §6), for an owner with SSH only. The
/// same Store calls the web page makes (``AppDatabase/pickBook(spineID:candidate:now:)``,
/// ``AppDatabase/dismissSpine(id:now:)``); works with or without the daemon, as `swiftwing library` does.
public enum SpineReview {
    /// The spines still to check, oldest first (every spine when `all`).
    public static func list(configuration: ApplianceConfiguration, all: Bool = false) throws(ApplianceError)
        -> SpineReviewReport
    {
        do {
            let database = try AppDatabase.openReadOnly(StateDirectory(path: configuration.stateDirectory))
            return SpineReviewReport(spines: try database.spinesToCheck(all: all))
        } catch {
            throw ApplianceError(error.description)
        }
    }

    /// Spine `id` is its candidate `number` (1 the first, as `list` numbers them): the book lands.
    public static func pick(id: Int64, candidate number: Int, configuration: ApplianceConfiguration, now: Date = Date())
        throws(ApplianceError) -> BookRecord
    {
        guard number >= 1 else {
            throw ApplianceError("candidates are numbered from 1, as `swiftwing review list` shows them")
        }
        let outcome = try change(configuration) { database throws(StoreError) in
            try database.pickBook(spineID: id, candidate: number - 1, now: now)
        }
        return try picked(outcome, id: id, number: number)
    }

    /// Spine `id` is a book the owner names (none of its candidates was it).
    public static func pick(
        id: Int64, title: String, authors: [String], isbn: String?, configuration: ApplianceConfiguration,
        now: Date = Date()
    ) throws(ApplianceError) -> BookRecord {
        let title = title.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !title.isEmpty else { throw ApplianceError("give the book's title with --title") }
        var checked: (isbn13: String, isbn10: String?)?
        if let isbn { checked = try LibraryManagement.checkedISBN(isbn) }
        let book = SpineCandidateRecord(
            title: title, authors: authors.filter { !$0.isEmpty }, isbn13: checked?.isbn13, isbn10: checked?.isbn10,
            source: "owner")
        let outcome = try change(configuration) { database throws(StoreError) in
            try database.pickBook(spineID: id, book: book, now: now)
        }
        return try picked(outcome, id: id, number: nil)
    }

    /// "Not a book": spine `id` leaves the list.
    public static func dismiss(id: Int64, configuration: ApplianceConfiguration, now: Date = Date())
        throws(ApplianceError)
    {
        let outcome = try change(configuration) { database throws(StoreError) in
            try database.dismissSpine(id: id, now: now)
        }
        switch outcome {
        case .dismissed: return
        default: throw refusal(outcome, id: id, number: nil)
        }
    }

    /// "Wrong book?": book `id` is its candidate `number` instead (1 the first of ``alternatives(of:)``).
    public static func replace(
        bookID id: Int64, candidate number: Int, configuration: ApplianceConfiguration, now: Date = Date()
    ) throws(ApplianceError) -> BookRecord {
        let book = try LibraryManagement.show(id: id, configuration: configuration)
        let alternatives = alternatives(of: book)
        guard alternatives.indices.contains(number - 1) else {
            throw ApplianceError(
                alternatives.isEmpty
                    ? "book \(id) came with no other candidates: correct it with `swiftwing library edit \(id)`"
                    : "book \(id) has \(alternatives.count) other candidate\(alternatives.count == 1 ? "" : "s"), "
                        + "not \(number): pick 1 to \(alternatives.count), or correct it with `swiftwing library edit`")
        }
        let chosen = alternatives[number - 1]
        let state = StateDirectory(path: configuration.stateDirectory)
        try LibraryManagement.refuseForeignOwner(state.databasePath)
        do {
            return try AppDatabase.openForChanges(state).library.replace(
                id: id, title: chosen.title, authors: chosen.authors, isbn13: chosen.isbn13, isbn10: chosen.isbn10,
                now: now)
        } catch {
            throw ApplianceError(error.description)
        }
    }

    /// The books an identified book may be instead: the candidates the backend sent with it (docs/protocol.md §6),
    /// without the book itself.
    public static func alternatives(of book: BookRecord) -> [SpineCandidateRecord] {
        guard let raw = book.rawJSON, let json = try? JSONValue.parse(raw, what: "a book's JSON") else { return [] }
        let (candidates, _) = TalariaCandidate.decodeList(json["candidates"], of: "book \(book.id ?? 0)")
        let own = Set([book.isbn13, book.isbn10].compactMap { $0 })
        return
            candidates
            .filter { candidate in
                let sameISBN = [candidate.isbn13, candidate.isbn10].compactMap { $0 }.contains(where: own.contains)
                let sameTitle = candidate.title == book.title && candidate.authors == book.authors
                return !(sameISBN || sameTitle)
            }
            .map {
                SpineCandidateRecord(
                    title: $0.title, authors: $0.authors, isbn13: $0.isbn13, isbn10: $0.isbn10,
                    confidence: $0.confidence, source: $0.source)
            }
    }

    private static func picked(_ outcome: SpineReviewOutcome, id: Int64, number: Int?) throws(ApplianceError)
        -> BookRecord
    {
        if case .picked(let book) = outcome { return book }
        throw refusal(outcome, id: id, number: number)
    }

    private static func refusal(_ outcome: SpineReviewOutcome, id: Int64, number: Int?) -> ApplianceError {
        switch outcome {
        case .notFound:
            ApplianceError("no spine has id \(id): `swiftwing review list` shows the ids of the spines to check")
        case .alreadyResolved(let state):
            ApplianceError(
                "spine \(id) was \(state.csvWord) already; `swiftwing review list --all` shows what became of it")
        case .noSuchCandidate(let count):
            ApplianceError(
                count == 0
                    ? "spine \(id) has no candidates: name the book with `swiftwing review pick \(id) --title …`"
                    : "spine \(id) has \(count) candidate\(count == 1 ? "" : "s"), not \(number ?? 0): "
                        + "pick 1 to \(count), or name the book with --title")
        case .picked, .dismissed:
            ApplianceError("spine \(id): unexpected outcome")
        }
    }

    private static func change(
        _ configuration: ApplianceConfiguration, _ body: (AppDatabase) throws(StoreError) -> SpineReviewOutcome
    ) throws(ApplianceError) -> SpineReviewOutcome {
        let state = StateDirectory(path: configuration.stateDirectory)
        try LibraryManagement.refuseForeignOwner(state.databasePath)
        do {
            return try body(try AppDatabase.openForChanges(state))
        } catch {
            throw ApplianceError(error.description)
        }
    }
}

/// The spines `swiftwing review list` prints.
public struct SpineReviewReport: Encodable, Sendable {
    public struct Entry: Encodable, Sendable {
        public var id: Int64
        public var state: String
        public var text: String
        public var candidates: [SpineCandidateRecord]
        public var hasPicture: Bool
        public var scanId: String
        public var readAt: Date
        public var bookId: Int64?
    }
    public var spines: [Entry]

    public init(spines: [SpineToCheck]) {
        self.spines = spines.map { spine in
            Entry(
                id: spine.id, state: spine.state.csvWord, text: spine.text, candidates: spine.candidates,
                hasPicture: spine.cropState == .kept, scanId: spine.scanID.uuidString.lowercased(),
                readAt: spine.createdAt, bookId: spine.bookID)
        }
    }

    public func json() -> String { stableJSON(self) }

    /// Each spine: its id and the text read, then its candidates numbered from 1 (what `review pick ID N` takes).
    public func text() -> String {
        guard !spines.isEmpty else { return "no spines to check" }
        var lines: [String] = []
        for spine in spines {
            var head = "\(spine.id)  \"\(spine.text)\""
            if spine.state != SpineToCheck.State.toCheck.csvWord { head += "  [\(spine.state)]" }
            if !spine.hasPicture { head += "  (no picture)" }
            lines.append(head)
            if spine.candidates.isEmpty { lines.append("    no candidates: name it with --title") }
            for (number, candidate) in zip(1..., spine.candidates) {
                lines.append("    \(number). \(SpinesCSV.describe(candidate))")
            }
        }
        lines.append("")
        lines.append("pick one: swiftwing review pick ID N   ·   not a book: swiftwing review dismiss ID")
        return lines.joined(separator: "\n")
    }
}
