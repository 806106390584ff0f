import Foundation
import SwiftWingCore

/// The spines read but not identified (docs/protocol.md §6), as their own CSV file beside the library's: every one
/// of them, to check, picked or dismissed, so an export holds everything the device read. The same writer and the
/// same neutralising of formula cells as ``LibraryCSV``. The file's name: ``fileName(day:)``.
public enum SpinesCSV {
    public static let columns = [
        "Spine Id", "State", "Text Read", "Candidates", "Best Candidate", "Best Candidate Authors",
        "Best Candidate ISBN", "Best Candidate Confidence", "Picked Book Id", "Has Picture", "Scan Id", "Job Id",
        "Read At", "Resolved At",
    ]

    public static func fileName(day: String) -> String { "SwiftWing_Spines_To_Check_\(day).csv" }

    /// The whole file for `spines`, header first, every record ended by CRLF.
    public static func encode(_ spines: [SpineToCheck]) -> [UInt8] {
        var writer = CSVRecordWriter()
        writer.append(columns)
        for spine in spines {
            writer.append(row(for: spine).map(LibraryCSV.neutralised))
        }
        return writer.bytes
    }

    /// One spine's fields; the candidates as `title — authors [ISBN] (62 %)`, separated by ` | `.
    public static func row(for spine: SpineToCheck) -> [String] {
        let best = spine.candidates.first
        return [
            String(spine.id), spine.state.csvWord, spine.text,
            spine.candidates.map(describe).joined(separator: " | "),
            best?.title ?? "", best?.authors.joined(separator: "; ") ?? "", best?.isbn13 ?? best?.isbn10 ?? "",
            best?.confidence.map { String(format: "%.2f", $0) } ?? "",
            spine.bookID.map(String.init) ?? "", spine.cropState == .kept ? "yes" : "no",
            spine.scanID.uuidString.lowercased(), spine.jobID ?? "", UTCDateParts(spine.createdAt).iso8601,
            spine.resolvedAt.map { UTCDateParts($0).iso8601 } ?? "",
        ]
    }

    public static func describe(_ candidate: SpineCandidateRecord) -> String {
        var text = candidate.title
        if !candidate.authors.isEmpty { text += " — " + candidate.authors.joined(separator: ", ") }
        if let isbn = candidate.isbn13 ?? candidate.isbn10 { text += " [\(isbn)]" }
        if let confidence = candidate.confidence { text += " (\(Int((confidence * 100).rounded())) %)" }
        return text
    }
}

extension SpineToCheck.State {
    /// As the CSV and `swiftwing review` say it.
    public var csvWord: String {
        switch self {
        case .toCheck: "to check"
        case .picked: "picked"
        case .dismissed: "dismissed"
        }
    }
}

extension LibraryExport {
    /// The spines' CSV into `path`, as durably as the library's (temporary file, fsync, rename).
    public static func writeSpines(_ bytes: [UInt8], to path: String) throws(ExportError) {
        do {
            try writeDurably(bytes, to: path)
        } catch {
            throw .file(error)
        }
    }
}
