import Foundation
import SwiftWingCore

/// A book a spine may be (docs/protocol.md §6 `candidates`), read tolerantly.
public struct TalariaCandidate: Hashable, Sendable {
    public var title: String
    public var authors: [String]
    /// Valid ISBN-13 (an ISBN-10 converted), or `nil`.
    public var isbn13: String?
    public var isbn10: String?
    /// 0–1 (a 0–100 value is scaled), `nil` when missing or nonsense.
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

extension TalariaCandidate {
    /// A `candidates` list (docs/protocol.md §6), of a spine or of an identified book (whose first is the book
    /// itself), read tolerantly: a candidate without a title is skipped, an ISBN is checked, a 0–100 confidence is
    /// scaled, and at most ``TalariaSpine/candidatesKept`` are kept. `owner` names whose list it is in warnings.
    public static func decodeList(_ list: JSONValue?, of owner: String) -> ([TalariaCandidate], [TalariaWarning]) {
        var warnings: [TalariaWarning] = []
        var candidates: [TalariaCandidate] = []
        for item in list?.arrayValue ?? [] {
            guard let title = item["title"]?.stringValue?.trimmingCharacters(in: .whitespacesAndNewlines),
                !title.isEmpty
            else {
                warnings.append(TalariaWarning("\(owner): a candidate without a title was skipped"))
                continue
            }
            var authors: [String] = []
            switch item.first("authors", "author") {
            case .array(let names)?: authors = names.compactMap(\.stringValue)
            case .string(let name)?: authors = [name]
            default: break
            }
            authors = authors.map {
                TalariaSpine.cut($0.trimmingCharacters(in: .whitespaces), what: "an author", &warnings)
            }
            .filter { !$0.isEmpty }
            let isbn = (item.first("isbn13", "isbn", "isbn10")?.stringValue).flatMap { ISBN($0) }
            var confidence = item["confidence"]?.doubleValue
            if let value = confidence {
                if value.isFinite, value >= 0, value <= 1 {
                } else if value.isFinite, value > 1, value <= 100 {
                    confidence = value / 100
                } else {
                    confidence = nil
                }
            }
            candidates.append(
                TalariaCandidate(
                    title: TalariaSpine.cut(title, what: "a candidate's title", &warnings), authors: authors,
                    isbn13: isbn?.isbn13, isbn10: isbn?.isbn10, confidence: confidence,
                    source: item["source"]?.stringValue))
        }
        if candidates.count > TalariaSpine.candidatesKept {
            warnings.append(
                TalariaWarning(
                    "\(owner): \(candidates.count) candidates, the first \(TalariaSpine.candidatesKept) kept"))
            candidates = Array(candidates.prefix(TalariaSpine.candidatesKept))
        }
        return (candidates, warnings)
    }
}

/// A spine the backend read but did not identify (docs/protocol.md §6): its text, where it stands on the photo and
/// the books it may be.
public struct TalariaSpine: Hashable, Sendable {
    /// At most this many candidates are kept per spine; the rest are dropped with a warning.
    public static let candidatesKept = 8
    /// The longest text, title or author kept; longer ones are cut (with a warning).
    public static let textLimit = 1000

    public var text: String
    public var boundingBox: BoundingBox?
    /// Best first, as the backend ordered them.
    public var candidates: [TalariaCandidate]
    /// The backend's JSON for this spine (compact, keys sorted).
    public var rawJSON: String

    public init(
        text: String, boundingBox: BoundingBox? = nil, candidates: [TalariaCandidate] = [], rawJSON: String = "{}"
    ) {
        self.text = text
        self.boundingBox = boundingBox
        self.candidates = candidates
        self.rawJSON = rawJSON
    }

    /// One spine, or `nil` (with a warning) for something that is not one: not an object, or no text. A box that
    /// is not four numbers in 0–1 is dropped (the spine is kept, without a crop); a candidate without a title is
    /// skipped.
    public static func decode(_ value: JSONValue) -> (spine: TalariaSpine?, warnings: [TalariaWarning]) {
        guard case .object = value else {
            return (
                nil, [TalariaWarning("a spine that is not a JSON object was skipped: \(value.jsonText.prefix(80))")]
            )
        }
        var warnings: [TalariaWarning] = []
        guard let read = value["text"]?.stringValue?.trimmingCharacters(in: .whitespacesAndNewlines), !read.isEmpty
        else {
            return (nil, [TalariaWarning("a spine without its text was skipped: \(value.jsonText.prefix(80))")])
        }
        let text = cut(read, what: "a spine's text", &warnings)
        var box = BoundingBox(json: value["boundingBox"])
        if let given = box, !given.isInsidePhoto {
            warnings.append(
                TalariaWarning("spine \"\(text.prefix(40))\": its box is not inside the photo; kept without"))
            box = nil
        }
        let (candidates, found) = TalariaCandidate.decodeList(value["candidates"], of: "spine \"\(text.prefix(40))\"")
        warnings += found
        return (TalariaSpine(text: text, boundingBox: box, candidates: candidates, rawJSON: value.jsonText), warnings)
    }

    /// The spines of a list; items that are not spines are skipped with a warning.
    public static func decodeList(_ list: JSONValue?) -> ([TalariaSpine], [TalariaWarning]) {
        guard let list, !list.isNull else { return ([], []) }
        guard let items = list.arrayValue else {
            return (
                [], [TalariaWarning("an unmatched list that is not an array was skipped: \(list.jsonText.prefix(80))")]
            )
        }
        var spines: [TalariaSpine] = []
        var warnings: [TalariaWarning] = []
        for item in items {
            let (spine, found) = decode(item)
            warnings += found
            if let spine { spines.append(spine) }
        }
        return (spines, warnings)
    }

    static func cut(_ text: String, what: String, _ warnings: inout [TalariaWarning]) -> String {
        guard text.count > textLimit else { return text }
        warnings.append(TalariaWarning("\(what) of \(text.count) characters was cut to \(textLimit)"))
        return String(text.prefix(textLimit))
    }

    /// Why `spines` cannot be one job's result, or `nil` when they can (the limits books have, ``TalariaLimits``).
    public static func violation(in spines: [TalariaSpine]) -> String? {
        if spines.count > TalariaLimits.booksPerJob {
            return "the backend's result holds \(spines.count) unidentified spines, more than the "
                + "\(TalariaLimits.booksPerJob) one photo may give; nothing was added and the photo is kept: check the "
                + "backend, then discard the scan (`swiftwing queue discard`)"
        }
        if let spine = spines.first(where: { $0.rawJSON.utf8.count > TalariaLimits.bookJSONBytes }) {
            return "the backend described spine \"\(spine.text.prefix(60))\" in \(spine.rawJSON.utf8.count) bytes of "
                + "JSON, more than \(TalariaLimits.bookJSONBytes) (64 KiB) a spine may take; nothing was added and the "
                + "photo is kept: check the backend, then discard the scan (`swiftwing queue discard`)"
        }
        return nil
    }
}

extension BoundingBox {
    /// Every edge within the photo (0–1) and a size above nothing: a box a crop can be cut from.
    var isInsidePhoto: Bool {
        [x, y, width, height].allSatisfy(\.isFinite) && x >= 0 && y >= 0 && width > 0 && height > 0
            && x + width <= 1.0001 && y + height <= 1.0001
    }
}
