import ApplianceCore
import Foundation
import Store

/// What the templates show. Every text here is escaped by mustache when rendered; none holds a path of the
/// device, a job token or a key (``WebApp/publicText(_:)`` takes paths out of error messages).
struct NavItem {
    let href: String
    let label: String
    let current: Bool

    static func all(current: String?) -> [NavItem] {
        [("/", "Now"), ("/library", "Library"), ("/review", "Review"), ("/queue", "Queue"), ("/export", "Export")].map {
            NavItem(href: $0.0, label: $0.1, current: $0.0 == current)
        }
    }
}

struct LayoutModel {
    let title: String
    let showNav: Bool
    let nav: [NavItem]
    let body: String
}

struct MessageModel {
    let heading: String
    let text: String
    var link: String? = nil
    var linkLabel: String? = nil
}

struct PairModel {
    var problem: String?
    /// The code to fill in (from the panel's QR code), already checked to be 6 digits.
    var code: String? = nil
}

struct BookTile {
    let id: Int64
    let title: String
    let authors: String
    let cover: String?
    /// The cover is the book's spine cut from its scan's photo (tall and narrow: shown whole, not filled).
    let spine: Bool
    let review: Bool

    /// `spinePhoto`: the scan's photo is in the spool and the book has a bounding box on it.
    init(_ book: BookRecord, spinePhoto: Bool = false) {
        id = book.id ?? 0
        title = book.title.isEmpty ? (book.isbn13 ?? "(no title yet)") : book.title
        authors = book.authors.joined(separator: ", ")
        let url = BookTile.safeCover(book.coverURL)
        spine = url == nil && spinePhoto
        cover = url ?? (spine ? "/books/\(id)/cover" : nil)
        review = book.needsReview
    }

    /// Only https covers (the page's policy loads no other images from elsewhere).
    static func safeCover(_ url: String?) -> String? {
        guard let url, url.hasPrefix("https://"), !url.contains(where: { $0.isWhitespace }) else { return nil }
        return url
    }
}

struct GridModel {
    let summary: String
    let books: [BookTile]
    let previous: String?
    let next: String?
}

struct SortOption {
    let value: String
    let label: String
    let selected: Bool
}

struct UndoOffer {
    let token: String
    let title: String
    let csrf: String
}

struct LibraryModel {
    let query: String
    let sorts: [SortOption]
    let grid: GridModel
    let undo: UndoOffer?
}

struct FieldRow {
    let name: String
    let value: String
    let mono: Bool
}

struct BookForm {
    var title: String
    var authors: String
    var isbn: String
}

struct BookModel {
    let id: Int64
    let heading: String
    let csrf: String
    let fields: [FieldRow]
    let review: String?
    let needsReview: Bool
    let raw: String
    var form: BookForm
    var problem: String?
    var notice: String?
    /// "Wrong book?": the other books the backend said it may be, as buttons.
    let alternatives: [CandidateButton]
    /// Stored, not computed: mustache sees stored properties only.
    let hasAlternatives: Bool

    init(_ book: BookRecord, csrf: String) {
        id = book.id ?? 0
        alternatives = zip(1..., SpineReview.alternatives(of: book)).map { CandidateButton(number: $0, candidate: $1) }
        hasAlternatives = !alternatives.isEmpty
        heading = book.title.isEmpty ? "(no title yet)" : book.title
        self.csrf = csrf
        let rows: [(String, String?, Bool)] = [
            ("Id", book.id.map(String.init), true), ("Title", book.title.isEmpty ? nil : book.title, false),
            ("Authors", book.authors.isEmpty ? nil : book.authors.joined(separator: "; "), false),
            ("ISBN-13", book.isbn13, true), ("ISBN-10", book.isbn10, true), ("Format", book.format, false),
            ("Publisher", book.publisher, false), ("Published", book.publishedDate, false),
            ("Pages", book.pageCount.map(String.init), false), ("Cover", book.coverURL, false),
            ("Confidence", book.confidence.map { String(format: "%.2f", $0) }, true),
            ("Enrichment", book.enrichmentStatus.rawValue, false), ("Found by", book.source.rawValue, false),
            ("Added", UTCDateParts(book.addedAt).iso8601, true),
            ("Updated", UTCDateParts(book.updatedAt).iso8601, true),
            ("Reviewed", book.reviewedAt.map { UTCDateParts($0).iso8601 }, true),
            ("Scan", book.scanID?.uuidString.lowercased(), true),
        ]
        fields = rows.map { FieldRow(name: $0.0, value: $0.1 ?? "–", mono: $0.2) }
        needsReview = book.needsReview
        review = book.needsReview ? (book.reviewReason ?? LibraryReport.lowConfidence(book)) : nil
        raw =
            LibraryEntry.indented(book.rawJSON).map { Self.unindented($0) }
            ?? "(none: the backend did not send this book)"
        form = BookForm(
            title: book.title, authors: book.authors.joined(separator: "\n"), isbn: book.isbn13 ?? book.isbn10 ?? "")
    }

    /// ``LibraryEntry/indented(_:)`` indents for the terminal; the page has its own margin.
    private static func unindented(_ text: String) -> String {
        text.split(separator: "\n", omittingEmptySubsequences: false).map { $0.hasPrefix("  ") ? $0.dropFirst(2) : $0 }
            .joined(separator: "\n")
    }
}

struct ReviewRow {
    let id: Int64
    let title: String
    let authors: String
    let isbn: String
    let reason: String
    let csrf: String
}

struct ReviewModel {
    let books: [ReviewRow]
    let booksSummary: String?
    let spines: SpineListModel
    let notice: String?
    let previousBooks: String?
    let nextBooks: String?
}

struct ScanRow: Equatable {
    let id: String
    let shortID: String
    let stateLabel: String
    let stateClass: String
    let when: String
    let reason: String?
    let thumbnail: String?
    let actionable: Bool
    let csrf: String
}

struct QueueModel {
    let scans: [ScanRow]
    let anyFailed: Bool
    let csrf: String
    let notice: String?
    let problem: String?
}

struct ExportModel {
    let books: Int
}

struct BookLine: Equatable {
    let id: Int64
    let title: String
    let authors: String?
}

struct CountsModel: Equatable {
    let active: Int
    let stuck: Int
    let books: Int
    let needsReview: Int
    let spinesToCheck: Int
}

/// The Now page's live part: what the panel shows.
struct StatusModel: Equatable {
    let state: String
    let stateClass: String
    let connectivity: String
    let countdown: String?
    let camera: String?
    let counts: CountsModel
    let scans: [ScanRow]
    let books: [BookLine]
}

struct NowModel {
    let status: StatusModel
    let shutter: Bool
    let csrf: String
    var notice: String?
    var problem: String?
}

extension ScanState {
    var label: String {
        switch self {
        case .queued: "queued"
        case .uploading: "uploading"
        case .analyzing: "analyzing"
        case .done: "done"
        case .failed: "failed"
        case .needsAttention: "needs a person"
        }
    }
}
