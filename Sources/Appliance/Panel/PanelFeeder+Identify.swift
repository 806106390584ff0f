import Panel
import Store
import SwiftWingCore
import Synchronization

extension PanelFeeder: ScanOutcomeDisplay {
    /// Long enough to read an ISBN, short enough not to hide the next press's result.
    static let outcomeNoticeTime: Duration = .seconds(4)

    func showIdentified(isbns: [String]) {
        identified.record(isbns, showUntil: clock.now + Self.outcomeNoticeTime)
        refreshSoon()
    }

    func showPoorFrame(_ quality: ScanQuality) {
        show(Self.poorFrameNotice(quality), for: Self.outcomeNoticeTime)
    }

    /// A catalogue lookup was recorded. A title for a book of the most recent scan shows at once
    /// (its notice again, and as the latest book); the latest book shown gets its title wherever
    /// it came from.
    func bookEnriched(_ book: BookRecord) {
        guard !book.title.isEmpty else { return }
        let ofLatestScan = identified.titleArrived(for: book, showUntil: clock.now + Self.outcomeNoticeTime)
        let latest = Self.latestBook(book)
        panel.update { model in
            if ofLatestScan || (model.latestBook?.isbn != nil && model.latestBook?.isbn == latest.isbn) {
                model.latestBook = latest
            }
        }
        refreshSoon()
    }

    /// The ISBNs of the most recent scan's barcodes, each with its title once the library has one.
    func identifiedNotice() -> PanelNotice? {
        guard let isbns = identified.isbnsToShow(at: clock.now) else { return nil }
        let lines = isbns.map { isbn -> String in
            guard let book = try? database.library.book(isbn13: isbn), !book.title.isEmpty else { return isbn }
            return "\(isbn)  \(book.title)"
        }
        return .message(title: "ISBN", detail: lines.joined(separator: "  ·  "))
    }

    /// A library book as the panel's latest book; a barcode's book says where its title is.
    static func latestBook(_ book: BookRecord) -> LatestBook {
        var title = book.title
        if title.isEmpty {
            title = book.enrichmentStatus == .notFound ? "Not in the catalogue" : "Looking up the title…"
        }
        return LatestBook(
            title: title, authors: book.authors, isbn: book.isbn13 ?? book.isbn10, confidence: book.confidence)
    }

    static func poorFrameNotice(_ quality: ScanQuality) -> PanelNotice {
        switch quality.verdict {
        case .dark: .message(title: "TOO DARK", detail: "Too dark")
        case .bright: .message(title: "TOO BRIGHT", detail: "Too bright — shade the shelf")
        case .blurry, .good: .message(title: "BLURRY", detail: "Blurry — hold still and press again")
        }
    }
}

/// The books read from the barcodes of the most recent scan, for as long as no other press came:
/// the panel shows their ISBNs at once and their titles once the catalogue answers.
final class IdentifiedBooks: Sendable {
    private struct Latest {
        var isbns: [String] = []
        var showUntil: ErasedClock.Instant?
    }

    private let latest = Mutex(Latest())

    func record(_ isbns: [String], showUntil: ErasedClock.Instant) {
        latest.withLock { $0 = Latest(isbns: isbns, showUntil: showUntil) }
    }

    /// A new press: what came before is no longer the most recent scan.
    func forget() {
        latest.withLock { $0 = Latest() }
    }

    /// Whether `book` is one of the most recent scan's; if so its notice shows again until `showUntil`.
    func titleArrived(for book: BookRecord, showUntil: ErasedClock.Instant) -> Bool {
        latest.withLock { latest in
            guard let isbn = book.isbn13, latest.isbns.contains(isbn) else { return false }
            latest.showUntil = showUntil
            return true
        }
    }

    /// The ISBNs while their notice is up, else `nil`.
    func isbnsToShow(at now: ErasedClock.Instant) -> [String]? {
        latest.withLock { latest in
            guard let until = latest.showUntil, now < until, !latest.isbns.isEmpty else { return nil }
            return latest.isbns
        }
    }
}
