import Foundation

/// How the matcher weighs the evidence a spine gives for an entry, and where it draws its lines. The defaults are
/// tuned on the development half of the Library Dataset's photos (Benchmarks/README.md).
public struct MatchingOptions: Sendable, Hashable {
    /// Use the catalogue's call number tags (a library's spine labels); off for a home owner's catalogue.
    public var useTags: Bool
    /// Entries fetched from the full-text index per spine, and rescored.
    public var candidatesPerSpine: Int
    /// Of those, the best few that enter the per-photo assignment.
    public var assignedPerSpine: Int
    /// Trigrams of the spine asked of the full-text index (the rarest ones the catalogue holds).
    public var queryGrams: Int
    /// Below this score a spine stays unmatched (nil).
    public var acceptScore: Double
    /// Entries found by a call number the spine holds whole join its candidates when at most this many carry it.
    public var callNumberHolders: Int
    public var weights: MatchingWeights
    public var calibration: ConfidenceCalibration

    public init(
        useTags: Bool = true, candidatesPerSpine: Int = 48, assignedPerSpine: Int = 8, queryGrams: Int = 32,
        acceptScore: Double = 0.45, callNumberHolders: Int = 32, weights: MatchingWeights = MatchingWeights(),
        calibration: ConfidenceCalibration = ConfidenceCalibration()
    ) {
        self.useTags = useTags
        self.candidatesPerSpine = candidatesPerSpine
        self.assignedPerSpine = assignedPerSpine
        self.queryGrams = queryGrams
        self.acceptScore = acceptScore
        self.callNumberHolders = callNumberHolders
        self.weights = weights
        self.calibration = calibration
    }
}

/// The weight of each kind of evidence in a candidate's score.
public struct MatchingWeights: Sendable, Hashable {
    public var title: Double = 1.0
    public var surname: Double = 0.5
    public var subtitle: Double = 0.4
    public var forename: Double = 0.1
    /// Heavy: a short title found whole on a long spine ("Catedral") must not beat the entry that accounts for the
    /// rest of the spine's words too ("Catedrals, monestirs i grans edificis religiosos").
    public var explained: Double = 2.0
    public var tag: Double = 0.75
    /// The spine holds the entry's whole call number as its own words ("796.42 Mor"): worth more the fewer entries
    /// share it, as `callNumber + callNumberRare / holders`, so a number that names one book outweighs a title read
    /// badly, and one that a shelf of books shares leaves the title to decide.
    public var callNumber: Double = 0.25
    public var callNumberRare: Double = 0.25
    /// The main title read as one run in its own word order: small, to part titles with the same words
    /// ("Diccionari català-anglès", "Diccionari anglès-català").
    public var titleRun: Double = 0.1
    /// The share of its score above the accept floor that a spine showing nothing but a call number
    /// (``PreparedSpine/labelOnly``) brings to the photo's assignment: such a text is mostly a label cut apart from
    /// its own spine, which shows the title too and should keep the entry when both want it; alone, the label still
    /// gets its book.
    public var labelOnlyInAssignment: Double = 0.3
    /// The spine's label shows the entry's author mark (``MatchFeatures/authorMark``). Counted only without the
    /// catalogue's call numbers: with them, the tag weights already hold the same evidence, more precisely.
    public var authorMark: Double = 0.75
    public init() {}
}

/// Confidence from the evidence behind a match: a logistic curve, so that a wrong match comes out below 0.8 (the
/// device's review line) and matches at 0.8 or above are right at least 95 times in 100.
///
/// The weights are fitted by `Benchmarks/RecognizerBench/calibrate.py` (logistic regression, Newton's method with a
/// 1e-3 ridge) on this recognizer's own output: its OCR (PP-OCRv6 small) and grouping on home-shelf photos (a
/// Goodreads catalogue, an owner's, and the open catalogue alone, which lacks most of their books) and on the Library
/// Dataset's shelf photos (its catalogue, and the open one), and its matching of the dataset's annotated spines with
/// and without call numbers; home and library matches weigh the same in all. Every figure reported for them is
/// cross-validated by photo (Benchmarks/README.md). None of the features depends on the catalogue's size, and
/// without call numbers `tag` is 0. They hold for the matcher's scoring as it is: a change to the features or
/// weights of the score needs a refit. Some weights are negative because the score already counts that evidence;
/// only the sum means anything.
public struct ConfidenceCalibration: Sendable, Hashable {
    public var bias: Double = -2.823
    public var score: Double = 0.733
    public var lead: Double = 2.339
    /// The assignment gave the spine its own best candidate.
    public var ownBest: Double = -1.053
    /// How far the spine falls short of 20 letters (0 at 20 or more, 1 for none).
    public var shortSpine: Double = -3.638
    public var title: Double = 1.204
    public var titleInformation: Double = -0.416
    public var surname: Double = 0.770
    public var explained: Double = 0.758
    public var tag: Double = -0.061
    public var authorMark: Double = -0.528
    public init() {}

    public func confidence(_ evidence: MatchEvidence) -> Double {
        let features = evidence.features
        var z = bias + score * evidence.score + lead * evidence.lead
        z += ownBest * (evidence.rank == 0 ? 1 : 0) + shortSpine * max(0, 1 - Double(evidence.spineLetters) / 20)
        z += title * features.title + titleInformation * features.titleInformation + surname * features.surname
        z += explained * features.explained + tag * features.tag + authorMark * features.authorMark
        return 1 / (1 + exp(-z))
    }
}

/// What a chosen match's confidence is computed from; `match --explain` writes it, and the benchmark fits the
/// calibration on it.
public struct MatchEvidence: Sendable, Hashable, Codable {
    public var score: Double
    /// The score's lead over the spine's best candidate that is a different book (copies of one book score alike).
    public var lead: Double
    /// Where the assignment's choice stood among the spine's own candidates (0: its best).
    public var rank: Int
    /// The spine's letters and digits.
    public var spineLetters: Int
    public var features: MatchFeatures
}

/// One catalogue entry scored against one spine, with the evidence behind the score (for tuning and `--explain`).
public struct ScoredCandidate: Sendable, Hashable {
    public var id: Int64
    public var entry: CatalogueEntry
    public var score: Double
    public var features: MatchFeatures
}

/// The evidence a spine gives for an entry, each 0–1.
public struct MatchFeatures: Sendable, Hashable, Codable {
    /// How much of the main title (before " : ") the spine holds: idf-weighted words, or the title as one run.
    public var title: Double = 0
    /// How informative the found title is: its found words' idf sum over 12, capped at 1.
    public var titleInformation: Double = 0
    public var subtitle: Double = 0
    public var surname: Double = 0
    public var forename: Double = 0
    /// The share of the spine's words (by letters) that the entry accounts for.
    public var explained: Double = 0
    public var tag: Double = 0
    /// 1 when the spine holds the entry's whole call number key (``Normalisation/callNumberKeys(words:)``).
    public var callNumber: Double = 0
    /// How many catalogue entries carry that key (0 when the spine does not hold it).
    public var callNumberHolders: Int = 0
    /// How closely some stretch of the spine spells the main title as one run, words in order.
    public var titleRun: Double = 0
    /// The spine's letters and digits (the same for every candidate of one spine).
    public var spineLetters: Int = 0
    /// The spine shows nothing but a call number (``PreparedSpine/labelOnly``; the same for every candidate).
    public var spineLabelOnly: Bool = false
    /// 1 when the spine's label ends in the entry's author mark: the first three letters of its first author's
    /// surname, or of its title's first word after an article when it has no author ("796.42 Mor", "JN Fom").
    /// Libraries file by it, so it tells apart books whose spines show the same words, even when the owner's
    /// catalogue holds no call numbers.
    public var authorMark: Double = 0
}

/// Matches spine texts against a ``CatalogueIndex``: trigram retrieval, a fuzzy rescoring that survives OCR noise,
/// then one optimal assignment per photo.
public final class CatalogueMatcher: SpineMatching {
    public let index: CatalogueIndex
    public let options: MatchingOptions

    /// A catalogue without call numbers (a Goodreads or SwiftWing export) is matched with the tagless features
    /// (the author mark among them) whatever `options.useTags` says: there are no tags to weigh.
    public init(index: CatalogueIndex, options: MatchingOptions = MatchingOptions()) {
        self.index = index
        var options = options
        if !index.hasCallNumbers { options.useTags = false }
        self.options = options
    }

    /// The candidates for one spine, best first.
    public func rank(_ spine: String) throws -> [ScoredCandidate] {
        var prepared = PreparedSpine(spine)
        guard !prepared.compact.isEmpty else { return [] }
        var ids = try index.candidates(
            words: prepared.words, useTags: options.useTags, limit: options.candidatesPerSpine,
            queryGrams: options.queryGrams)
        if options.useTags {
            // A label read whole names its book, or a few: those entries are candidates whatever the trigrams of
            // the rest of the spine found (a spine that shows only "431.2 Mau" has few title trigrams to find).
            let found = try index.callNumbers(
                keys: Normalisation.callNumberKeys(words: prepared.words), maxHolders: options.callNumberHolders)
            prepared.callNumberHolders = found.holders
            var known = Set(ids)
            for id in found.ids where known.insert(id).inserted { ids.append(id) }
        }
        let entries = try index.entries(ids)
        var scored: [ScoredCandidate] = []
        scored.reserveCapacity(ids.count)
        for id in ids {
            guard let (entry, preparedEntry) = entries[id] else { continue }
            let features = self.features(of: preparedEntry, against: prepared)
            scored.append(ScoredCandidate(id: id, entry: entry, score: score(features), features: features))
        }
        scored.sort { $0.score > $1.score || ($0.score == $1.score && $0.id < $1.id) }
        return scored
    }

    public func assign(_ spines: [String]) throws -> [SpineMatch?] {
        let ranked = try spines.map { try rank($0) }
        return assign(ranked: ranked)
    }

    /// The per-photo assignment over already ranked candidates.
    public func assign(ranked: [[ScoredCandidate]]) -> [SpineMatch?] {
        assignWithEvidence(ranked: ranked).map { $0?.match }
    }

    /// The per-photo assignment, with the evidence each match's confidence came from.
    public func assignWithEvidence(ranked: [[ScoredCandidate]]) -> [(match: SpineMatch, evidence: MatchEvidence)?] {
        var columns: [Int64: Int] = [:]
        var columnIDs: [Int64] = []
        for candidates in ranked {
            for candidate in candidates.prefix(options.assignedPerSpine) where columns[candidate.id] == nil {
                columns[candidate.id] = columnIDs.count
                columnIDs.append(candidate.id)
            }
        }
        var scores = [[Double]](repeating: [Double](repeating: 0, count: columnIDs.count), count: ranked.count)
        for (row, candidates) in ranked.enumerated() {
            for candidate in candidates.prefix(options.assignedPerSpine) {
                // Only what lies above the floor is shared, so a label alone still gets the book it names.
                let share = candidate.features.spineLabelOnly ? options.weights.labelOnlyInAssignment : 1
                let floor = options.acceptScore
                scores[row][columns[candidate.id]!] = floor + (candidate.score - floor) * share
            }
        }
        let chosen = Assignment.maximise(scores, floor: options.acceptScore)
        return zip(ranked, chosen).map { (candidates, column) -> (match: SpineMatch, evidence: MatchEvidence)? in
            guard let column else { return nil }
            let id = columnIDs[column]
            guard let position = candidates.firstIndex(where: { $0.id == id }) else { return nil }
            let match = candidates[position]
            let rival = candidates.first { $0.id != id && !sameBook($0.entry, match.entry) }
            let evidence = MatchEvidence(
                score: match.score, lead: match.score - (rival?.score ?? 0), rank: position,
                spineLetters: match.features.spineLetters, features: match.features)
            let confidence = options.calibration.confidence(evidence)
            return (SpineMatch(entry: match.entry, confidence: confidence, evidence: evidence), evidence)
        }
    }

    func score(_ features: MatchFeatures) -> Double {
        let weights = options.weights
        var total = weights.title * features.title * (0.5 + 0.5 * features.titleInformation)
        total += weights.surname * features.surname + weights.subtitle * features.subtitle
        total += weights.forename * features.forename + weights.explained * features.explained
        total += weights.titleRun * features.titleRun
        if options.useTags {
            total += weights.tag * features.tag
            if features.callNumberHolders > 0 {
                total +=
                    features.callNumber
                    * (weights.callNumber + weights.callNumberRare / Double(features.callNumberHolders))
            }
        } else {
            total += weights.authorMark * features.authorMark
        }
        return total
    }

    func features(of entry: PreparedEntry, against spine: PreparedSpine) -> MatchFeatures {
        entry.letters.withUnsafeBufferPointer { letters in
            spine.compact.withUnsafeBufferPointer { spineLetters in
                features(of: entry, letters: letters, against: spine, spineLetters: spineLetters)
            }
        }
    }

    private func features(
        of entry: PreparedEntry, letters: UnsafeBufferPointer<UInt32>, against spine: PreparedSpine,
        spineLetters: UnsafeBufferPointer<UInt32>
    ) -> MatchFeatures {
        var features = MatchFeatures()
        features.spineLetters = spineLetters.count
        features.spineLabelOnly = spine.labelOnly
        let (mainCoverage, mainInformation) = coverage(entry, entry.mainWords, letters, spine, spineLetters)
        let mainCompact = UnsafeBufferPointer(rebasing: letters[entry.mainLetters])
        let runDistance = substringDistance(mainCompact, in: spineLetters)
        // A short title read as one run counts only spelt exactly: one edit in five letters is mostly chance.
        let runSimilarity =
            mainCompact.count < 6 && runDistance > 0
            ? 0 : similarity(distance: runDistance, length: mainCompact.count)
        features.title = max(mainCoverage, runSimilarity)
        features.titleRun = runSimilarity
        features.titleInformation = min(1, mainInformation / 12)
        features.subtitle = coverage(entry, entry.subtitleWords, letters, spine, spineLetters).coverage
        features.surname = coverage(entry, entry.surnames, letters, spine, spineLetters).coverage
        features.forename = coverage(entry, entry.forenames, letters, spine, spineLetters).coverage
        var explained = 0
        var total = 0
        for word in spine.wordLetters where word.count >= 3 {
            total += word.count
            let distance = word.withUnsafeBufferPointer { substringDistance($0, in: letters) }
            if distance <= word.count / 4 { explained += word.count }
        }
        features.explained = total == 0 ? 0 : Double(explained) / Double(total)
        if !spine.authorMarks.isEmpty, spine.authorMarks.contains(entry.authorMark) {
            features.authorMark = 1
        }
        if options.useTags {
            let tag = entry.tagCompact
            let distance = tag.withUnsafeBufferPointer { substringDistance($0, in: spineLetters) }
            features.tag = similarity(distance: distance, length: tag.count)
            if let holders = spine.callNumberHolders[entry.callNumberKey] {
                features.callNumber = 1
                features.callNumberHolders = holders
            }
        }
        return features
    }

    /// The idf-weighted share of the entry's `words` found on the spine, and the idf found.
    private func coverage(
        _ entry: PreparedEntry, _ words: Range<Int>, _ letters: UnsafeBufferPointer<UInt32>, _ spine: PreparedSpine,
        _ spineLetters: UnsafeBufferPointer<UInt32>
    ) -> (coverage: Double, information: Double) {
        var found = 0.0
        var total = 0.0
        for word in entry.words[words] {
            let weight = idf(word.text)
            total += weight
            found +=
                weight
                * wordSimilarity(word.text, UnsafeBufferPointer(rebasing: letters[word.letters]), spine, spineLetters)
        }
        return total == 0 ? (0, 0) : (found / total, found)
    }

    private func idf(_ word: String) -> Double {
        log(Double(index.entryCount + 1) / Double(index.documents(word: word) + 1)) + 0.1
    }

    /// 1 for a word the spine holds as it is; for a longer word, how closely some stretch of the spine's letters
    /// spells it (merged or split words included); short words count only when read whole.
    private func wordSimilarity(
        _ word: String, _ letters: UnsafeBufferPointer<UInt32>, _ spine: PreparedSpine,
        _ spineLetters: UnsafeBufferPointer<UInt32>
    ) -> Double {
        if spine.wordSet.contains(word) { return 1 }
        if letters.count <= 3 { return 0 }
        let distance = substringDistance(letters, in: spineLetters)
        // A four-letter word counts only spelt out (inside a merged word); a longer one also misread.
        if letters.count == 4 { return distance == 0 ? 0.8 : 0 }
        return similarity(distance: distance, length: letters.count)
    }

    private func similarity(distance: Int, length: Int) -> Double {
        guard length > 0 else { return 0 }
        return max(0, 1 - 2 * Double(distance) / Double(length))
    }

    private func sameBook(_ a: CatalogueEntry, _ b: CatalogueEntry) -> Bool {
        a.title == b.title && a.authors == b.authors
    }
}

/// A spine's text in the forms the scoring compares against.
struct PreparedSpine {
    let words: [String]
    let wordSet: Set<String>
    /// Each word's letters as scalars.
    let wordLetters: [[UInt32]]
    let compact: [UInt32]
    /// The call number keys the spine holds that some entries carry, with how many carry each (set by the matcher
    /// from the index when tags are used).
    var callNumberHolders: [String: Int] = [:]
    /// Every word is a number or at most three letters ("434.6 Atl", "JN Gai", "N Ham"): the text of a call number
    /// label, with no title or name to tell its book by.
    let labelOnly: Bool
    /// The folded author marks the spine's labels show: a capitalised three-letter word ("Mor", "Fom") right after a
    /// class number ("796.42", "91(026)") or a section's capitals ("JN", "N", "I**"), as a label prints them.
    let authorMarks: Set<String>

    init(_ text: String) {
        let folded = Normalisation.fold(text)
        words = folded.split(separator: " ").map(String.init)
        labelOnly =
            !words.isEmpty
            && words.allSatisfy { word in
                word.unicodeScalars.count <= 3 || word.unicodeScalars.allSatisfy { (0x30...0x39).contains($0.value) }
            }
        wordSet = Set(words)
        wordLetters = words.map { $0.unicodeScalars.map(\.value) }
        compact = Normalisation.compact(folded)
        authorMarks = Self.authorMarks(text)
    }

    static func authorMarks(_ text: String) -> Set<String> {
        let tokens = text.split(whereSeparator: \.isWhitespace)
        var marks: Set<String> = []
        for (previous, token) in zip(tokens, tokens.dropFirst()) {
            guard token.count == 3, token.allSatisfy(\.isLetter), token.first?.isUppercase == true else { continue }
            // A section's capitals may carry stars ("I**"), the library's marks for a reader's age.
            let letters = previous.filter { $0 != "*" }
            let sectionLetters = !letters.isEmpty && letters.count <= 3 && letters.allSatisfy(\.isUppercase)
            if previous.contains(where: \.isNumber) || sectionLetters {
                marks.insert(Normalisation.fold(String(token)))
            }
        }
        return marks
    }
}

/// The fewest edits (insert, delete, substitute) turning `pattern` into some substring of `text`. Patterns of up
/// to 64 letters (every word and nearly every title) take Myers' bit-parallel form, one step per letter of `text`;
/// longer ones the dynamic programme it computes.
func substringDistance(_ pattern: [UInt32], in text: [UInt32]) -> Int {
    pattern.withUnsafeBufferPointer { pattern in
        text.withUnsafeBufferPointer { text in substringDistance(pattern, in: text) }
    }
}

func substringDistance(_ pattern: UnsafeBufferPointer<UInt32>, in text: UnsafeBufferPointer<UInt32>) -> Int {
    let length = pattern.count
    guard length > 0 else { return 0 }
    guard !text.isEmpty else { return length }
    guard length <= 64 else { return substringDistanceByTable(Array(pattern), in: Array(text)) }
    return withUnsafeTemporaryAllocation(of: UInt64.self, capacity: 128) { asciiPositions in
        // Where each letter stands in the pattern, one bit per position: a table for ASCII, a short list for the
        // rest (folded text has few other letters).
        asciiPositions.initialize(repeating: 0)
        var otherLetters: [UInt32] = []
        var otherPositions: [UInt64] = []
        for position in 0..<length {
            let letter = pattern[position]
            let bit: UInt64 = 1 << UInt64(position)
            if letter < 128 {
                asciiPositions[Int(letter)] |= bit
            } else if let known = otherLetters.firstIndex(of: letter) {
                otherPositions[known] |= bit
            } else {
                otherLetters.append(letter)
                otherPositions.append(bit)
            }
        }
        let last: UInt64 = 1 << UInt64(length - 1)
        var plus = UInt64.max
        var minus: UInt64 = 0
        var score = length
        var best = length
        for letter in text {
            let equal: UInt64
            if letter < 128 {
                equal = asciiPositions[Int(letter)]
            } else if let known = otherLetters.firstIndex(of: letter) {
                equal = otherPositions[known]
            } else {
                equal = 0
            }
            let vertical = equal | minus
            let horizontal = (((equal & plus) &+ plus) ^ plus) | equal
            var horizontalPlus = minus | ~(horizontal | plus)
            var horizontalMinus = plus & horizontal
            if horizontalPlus & last != 0 { score += 1 }
            if horizontalMinus & last != 0 { score -= 1 }
            // Shifted in as 0: the match may start anywhere in the text, so the top row stays 0.
            horizontalPlus <<= 1
            horizontalMinus <<= 1
            plus = horizontalMinus | ~(vertical | horizontalPlus)
            minus = horizontalPlus & vertical
            if score < best { best = score }
        }
        return best
    }
}

/// ``substringDistance(_:in:)`` by the full table, one column of it at a time.
func substringDistanceByTable(_ pattern: [UInt32], in text: [UInt32]) -> Int {
    let length = pattern.count
    guard length > 0 else { return 0 }
    guard !text.isEmpty else { return length }
    var column = [Int](0...length)
    var best = length
    pattern.withUnsafeBufferPointer { pattern in
        column.withUnsafeMutableBufferPointer { column in
            for character in text {
                var diagonal = column[0]
                column[0] = 0
                for index in 1...length {
                    let above = column[index]
                    let substitution = diagonal + (pattern[index - 1] == character ? 0 : 1)
                    column[index] = min(substitution, above + 1, column[index - 1] + 1)
                    diagonal = above
                }
                if column[length] < best { best = column[length] }
            }
        }
    }
    return best
}
