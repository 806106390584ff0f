import Foundation
import GRDB
import SwiftWingCore

/// How good a scan's frame was, as the device measured it before queueing (the `Identify` module's
/// figures, stored). Shown as `quality` in `swiftwing queue --json`.
public struct ScanQuality: Sendable, Hashable, Codable {
    /// The outcome of the quality check. Stored as the raw value.
    public enum Verdict: String, CaseIterable, Codable, Sendable, Hashable, DatabaseValueConvertible {
        case good
        case blurry
        case dark
        case bright
    }

    /// The grey levels of the frame.
    public struct Exposure: Sendable, Hashable, Codable {
        public var mean: Double  // luma 0-255
        public var shadows: Double  // share crushed to black, 0-1
        public var highlights: Double  // share blown to white, 0-1

        public init(mean: Double, shadows: Double, highlights: Double) {
            (self.mean, self.shadows, self.highlights) = (mean, shadows, highlights)
        }
    }

    public var verdict: Verdict
    /// Variance of the Laplacian of the Y plane; higher is sharper.
    public var sharpness: Double
    public var exposure: Exposure

    public init(verdict: Verdict, sharpness: Double, exposure: Exposure) {
        (self.verdict, self.sharpness, self.exposure) = (verdict, sharpness, exposure)
    }

    /// A frame no one could read: it is not uploaded unless a person (or the configuration) says so.
    public var isPoor: Bool { verdict != .good }

    /// What the operator should do about a poor frame; `nil` for a good one.
    public var advice: String? {
        switch verdict {
        case .good: nil
        case .blurry: "blurry — hold still and press again"
        case .dark: "too dark"
        case .bright: "too bright — shade the shelf or turn the camera away from the light"
        }
    }
}

/// A code read in a scan's frame.
public struct ScanBarcode: Sendable, Hashable, Codable {
    /// "EAN-13", "UPC-A", "EAN-8", …
    public var format: String
    /// The digits, checksum included.
    public var text: String

    public init(format: String, text: String) {
        self.format = format
        self.text = text
    }
}

/// Who put a book in the library. Stored as the raw value.
public enum BookSource: String, CaseIterable, Codable, Sendable, Hashable, DatabaseValueConvertible {
    /// The recognition backend's result.
    case backend
    /// An ISBN barcode read on the device (title and authors come later, from enrichment).
    case barcode
}

extension BookRecord {
    /// A book known only by the ISBN-13 read from its barcode: no title yet, enrichment pending.
    public init(barcodeISBN13 isbn13: String, now: Date = Date()) {
        self.init(
            isbn13: isbn13, isbn10: ISBN(isbn13: isbn13)?.isbn10, title: "", enrichmentStatus: .pending,
            addedAt: now)
        source = .barcode
    }
}

extension AppDatabase {
    /// A scan whose frame carried ISBN barcodes, in one transaction: the scan row is written, its
    /// books land in the library (deduplicated by ISBN-13; a book already there is left as it is,
    /// so a barcode never undoes the backend's or enrichment's title) and the scan becomes `done`.
    /// The caller then deletes the photo, as for any done scan.
    @discardableResult
    public func completeIdentifiedScan(
        _ newScan: NewScan, isbns: [String], now: Date = Date()
    ) throws(StoreError) -> (scan: ScanRecord, books: [BookRecord]) {
        let record = ScanQueue.record(for: newScan, now: now)
        let books = isbns.map { BookRecord(barcodeISBN13: $0, now: now) }
        return try write("the scan and its books were not saved (its photo stays in the spool)") { db in
            try record.insert(db)
            return try Self.completeScan(newScan.id, books: books, now: now, upsert: Self.keepExisting, db)
        }
    }

    private static func keepExisting(_ book: BookRecord, now: Date, _ db: Database) throws -> BookRecord {
        if let isbn13 = book.isbn13, let existing = try Library.book(isbn13: isbn13, db) {
            return existing
        }
        return try book.inserted(db)
    }
}
