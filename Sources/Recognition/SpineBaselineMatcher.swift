import CSV
import Foundation

/// A plain matcher for the pipeline's own tests and for `read` until the catalogue index is in: the share of an
/// entry's title (and author's surname, and call number when the catalogue has one) found in the spine's text, by
/// character trigrams weighted by rarity, then one greedy assignment per photo (best pairs first, each entry and
/// each spine used once). Its score is not a calibrated confidence.
public struct SpineBaselineMatcher: SpineMatching {
    public let entries: [CatalogueEntry]
    /// Pairs scoring below this are left unmatched.
    public var minimumScore = 0.55
    private let keys: [[String: Double]]
    private let index: [String: [Int]]
    private let weights: [String: Double]

    public init(entries: [CatalogueEntry]) {
        self.entries = entries
        var keys: [[String: Double]] = []
        var index: [String: [Int]] = [:]
        for (position, entry) in entries.enumerated() {
            let title = entry.title.split(separator: ":").first.map(String.init) ?? entry.title
            var key: [String: Double] = [:]
            for gram in trigrams(title) { key[gram] = 0.75 }
            if let surname = entry.authors.first?.split(separator: ",").first {
                for gram in trigrams(String(surname)) where key[gram] == nil { key[gram] = 0.25 }
            }
            if let tag = entry.tag {
                for gram in trigrams(tag) where key[gram] == nil { key[gram] = 0.25 }
            }
            keys.append(key)
            for gram in key.keys { index[gram, default: []].append(position) }
        }
        let total = Double(max(entries.count, 1))
        self.weights = index.mapValues { log(total / Double($0.count)) + 1 }
        self.keys = keys
        self.index = index
    }

    /// Reads a catalogue CSV with the Library Dataset's header (`title,author,tag,series,isbn`; `tag` and `series`
    /// may be absent).
    public init(catalogue path: String) throws {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let reader = try CSVReader(string: text, hasHeaderRow: true)
        guard let header = reader.headerRow, header.contains("title"), header.contains("author") else {
            throw CatalogueError(path: path, detail: "its header has no title and author columns")
        }
        var entries: [CatalogueEntry] = []
        while reader.next() != nil {
            let tag = reader["tag"].flatMap { $0.isEmpty ? nil : $0 }
            let isbn = reader["isbn"].flatMap { $0.isEmpty ? nil : $0 }
            let series = reader["series"].flatMap { $0.isEmpty ? nil : $0 }
            // The dataset's cells carry trailing spaces; an empty author is no author.
            let author = (reader["author"] ?? "").trimmingCharacters(in: .whitespaces)
            entries.append(
                CatalogueEntry(
                    title: (reader["title"] ?? "").trimmingCharacters(in: .whitespaces),
                    authors: author.isEmpty ? [] : [author], isbn: isbn, tag: tag, series: series))
        }
        self.init(entries: entries)
    }

    /// A catalogue file that cannot be read as one.
    public struct CatalogueError: Error, CustomStringConvertible {
        public let path: String
        public let detail: String
        public var description: String { "the catalogue \(path) cannot be read: \(detail)" }
    }

    public func assign(_ spines: [String]) throws -> [SpineMatch?] {
        var pairs: [(spine: Int, entry: Int, score: Double)] = []
        for (spineIndex, spine) in spines.enumerated() {
            let grams = trigrams(spine)
            var found: [Int: Double] = [:]
            for gram in grams {
                guard let positions = index[gram], let weight = weights[gram] else { continue }
                for position in positions { found[position, default: 0] += weight * keys[position][gram]! }
            }
            for (position, shared) in found {
                let whole = keys[position].reduce(0) { $0 + weights[$1.key]! * $1.value }
                let score = shared / whole
                if score >= minimumScore { pairs.append((spineIndex, position, score)) }
            }
        }
        pairs.sort { $0.score > $1.score }
        var result = [SpineMatch?](repeating: nil, count: spines.count)
        var usedEntries = Set<Int>()
        for pair in pairs where result[pair.spine] == nil && !usedEntries.contains(pair.entry) {
            result[pair.spine] = SpineMatch(entry: entries[pair.entry], confidence: min(1, pair.score))
            usedEntries.insert(pair.entry)
        }
        return result
    }
}

/// The character trigrams of a text folded to lower-case letters and digits without accents or spaces (OCR often
/// drops or adds spaces, so words run together either way).
private func trigrams(_ text: String) -> Set<String> {
    let folded = text.folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil)
    let characters = Array(folded.unicodeScalars.filter { CharacterSet.alphanumerics.contains($0) }.map(Character.init))
    guard characters.count >= 3 else { return characters.isEmpty ? [] : [String(characters)] }
    return Set((0...(characters.count - 3)).map { String(characters[$0..<($0 + 3)]) })
}
