/// The values that pass between the recognizer's stages: OCR lines → spines → catalogue matches.
/// Each stage sits behind a protocol so the service and the tests can swap a real stage for a double.

/// A point in image pixels.
public struct ImagePoint: Sendable, Hashable, Codable {
    public var x: Double
    public var y: Double
    public init(x: Double, y: Double) {
        self.x = x
        self.y = y
    }
}

/// A box in fractions (0–1) of the image's width and height, as `boundingBox` is in the protocol.
public struct NormalizedBox: Sendable, Hashable, Codable {
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

/// One line of text the OCR engine read: the text, the quadrilateral it sits in (image pixels, in the order the
/// engine gives: top-left, top-right, bottom-right, bottom-left of the text as read) and the engine's score 0–1.
public struct TextLine: Sendable, Hashable, Codable {
    public var text: String
    public var polygon: [ImagePoint]
    public var score: Double
    public init(text: String, polygon: [ImagePoint], score: Double) {
        self.text = text
        self.polygon = polygon
        self.score = score
    }
}

/// A boundary between two books seen on the picture: a straight, near-vertical edge (image pixels), top to bottom.
public struct SpineSeparator: Sendable, Hashable, Codable {
    public var top: ImagePoint
    public var bottom: ImagePoint
    public init(top: ImagePoint, bottom: ImagePoint) {
        self.top = top
        self.bottom = bottom
    }
}

/// What the OCR step read on one photo: its lines, and the edges between books it saw (empty when it looked for
/// none; lines saved before separators existed decode with none).
public struct ReadPhoto: Sendable, Hashable, Codable {
    public var width: Int
    public var height: Int
    public var lines: [TextLine]
    public var separators: [SpineSeparator]
    public init(width: Int, height: Int, lines: [TextLine], separators: [SpineSeparator] = []) {
        self.width = width
        self.height = height
        self.lines = lines
        self.separators = separators
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        width = try container.decode(Int.self, forKey: .width)
        height = try container.decode(Int.self, forKey: .height)
        lines = try container.decode([TextLine].self, forKey: .lines)
        separators = try container.decodeIfPresent([SpineSeparator].self, forKey: .separators) ?? []
    }

    private enum CodingKeys: String, CodingKey { case width, height, lines, separators }
}

/// A book of the owner's catalogue (closed set) or of an open-set lookup.
public struct CatalogueEntry: Sendable, Hashable, Codable {
    public var title: String
    public var authors: [String]
    public var isbn: String?
    /// The call number on a library's spine label (e.g. "796.42 Mor"); nil in a home owner's catalogue.
    public var tag: String?
    public var series: String?
    public init(title: String, authors: [String], isbn: String? = nil, tag: String? = nil, series: String? = nil) {
        self.title = title
        self.authors = authors
        self.isbn = isbn
        self.tag = tag
        self.series = series
    }
}

/// The text of one spine (or of one book lying flat or facing out), grouped from the photo's lines.
public struct SpineText: Sendable, Hashable, Codable {
    /// The spine's lines joined in reading order.
    public var text: String
    public var box: NormalizedBox
    public var lines: [TextLine]
    public init(text: String, box: NormalizedBox, lines: [TextLine]) {
        self.text = text
        self.box = box
        self.lines = lines
    }
}

/// The catalogue entry assigned to one spine, with a calibrated confidence: a wrong match must come out below 0.8.
public struct SpineMatch: Sendable, Hashable, Codable {
    public var entry: CatalogueEntry
    public var confidence: Double
    /// What the confidence was computed from (nil from a matcher that keeps none): `read --explain` writes it and
    /// the calibration is fitted on it.
    public var evidence: MatchEvidence?
    public init(entry: CatalogueEntry, confidence: Double, evidence: MatchEvidence? = nil) {
        self.entry = entry
        self.confidence = confidence
        self.evidence = evidence
    }
}

/// Reads the text lines on a photo (the OCR step; the real one is a supervised worker process).
public protocol TextReading: Sendable {
    func read(jpeg: [UInt8]) async throws -> ReadPhoto
}

/// Assigns spines to catalogue entries, one assignment per photo: an entry goes to at most one spine and a spine to
/// at most one entry. The result has one element per spine, in order; nil where nothing matched well enough.
public protocol SpineMatching: Sendable {
    func assign(_ spines: [String]) throws -> [SpineMatch?]
}

/// A catalogue entry found on a photo, with the spine it was read from.
public struct RecognizedBook: Sendable, Hashable, Codable {
    public var match: SpineMatch
    public var spine: SpineText
    public init(match: SpineMatch, spine: SpineText) {
        self.match = match
        self.spine = spine
    }
}

/// What the recognizer found on one photo: the books it matched and the spines it read but could not match (kept
/// with their text and box, so a later lookup can still resolve them).
public struct ShelfRecognition: Sendable, Hashable, Codable {
    public var books: [RecognizedBook]
    public var unmatched: [SpineText]
    public init(books: [RecognizedBook], unmatched: [SpineText]) {
        self.books = books
        self.unmatched = unmatched
    }
}

/// The whole recognizer on one photo: read, group into spines, assign. `progress` gets a fraction 0–1 and a short
/// stage name ("reading", "grouping", "matching") as the work goes on.
public protocol ShelfRecognizing: Sendable {
    func recognize(
        jpeg: [UInt8],
        progress: @escaping @Sendable (Double, String) async -> Void
    ) async throws -> ShelfRecognition
}
