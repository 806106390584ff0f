import ArgumentParser
import Foundation
import Recognition
import SwiftWingCore

/// `match`: spine texts in (JSON lines `{"image", "text"}` on stdin), catalogue matches out, one line per input line
/// in order. Spines are assigned per image: an entry goes to at most one spine of the same image.
struct MatchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "match",
        abstract: "Match spine texts read from stdin (JSON lines {\"image\", \"text\"}) against a catalogue.")

    @Option(help: "The catalogue CSV: the Library Dataset's, a Goodreads export or a SwiftWing export.")
    var catalogue: String

    @Flag(
        help:
            "Write JSON lines {\"image\", \"text\", \"title\", \"authors\", \"isbn\", \"score\"} (the only output form)."
    )
    var json = false

    @Flag(help: "Ignore the catalogue's call number tags (a home owner's catalogue has none on its spines).")
    var ignoreTags = false

    @Option(help: "Where the catalogue's index is kept (default: FILE.index.sqlite beside it, or the user's cache).")
    var index: String?

    @Flag(help: "Add each spine's best candidates with their evidence to the output line (for tuning).")
    var explain = false

    @Flag(help: "Report on stderr how long the index took to open and the matching per spine.")
    var timing = false

    func validate() throws {
        guard json else { throw ValidationError("match writes JSON lines only: pass --json") }
    }

    func run() throws {
        let opened = ContinuousClock.now
        let catalogueIndex: CatalogueIndex
        do {
            catalogueIndex = try CatalogueIndex.open(catalogue: catalogue, indexPath: index)
        } catch let error as CatalogueImportError {
            throw ValidationError(error.description)
        }
        let openTime = ContinuousClock.now - opened
        let matcher = CatalogueMatcher(index: catalogueIndex, options: MatchingOptions(useTags: !ignoreTags))

        var inputs: [SpineInput] = []
        var lineNumber = 0
        while let line = readLine(strippingNewline: true) {
            lineNumber += 1
            if line.allSatisfy(\.isWhitespace) { continue }
            do {
                inputs.append(try JSONDecoder().decode(SpineInput.self, from: Data(line.utf8)))
            } catch {
                throw ValidationError(
                    "stdin line \(lineNumber): not a JSON object {\"image\": \"…\", \"text\": \"…\"} (\(error))")
            }
        }

        let started = ContinuousClock.now
        var rowsByImage: [String: [Int]] = [:]
        var imageOrder: [String] = []
        for (row, input) in inputs.enumerated() {
            if rowsByImage[input.image] == nil { imageOrder.append(input.image) }
            rowsByImage[input.image, default: []].append(row)
        }
        var matches = [SpineMatch?](repeating: nil, count: inputs.count)
        var evidence = [MatchEvidence?](repeating: nil, count: inputs.count)
        var explanations = [[ScoredCandidate]](repeating: [], count: inputs.count)
        // Each spine's own ranking time, plus an equal share of its photo's assignment.
        var spineSeconds = [Double](repeating: 0, count: inputs.count)
        for image in imageOrder {
            let rows = rowsByImage[image]!
            var ranked: [[ScoredCandidate]] = []
            for row in rows {
                let rankStarted = ContinuousClock.now
                ranked.append(try matcher.rank(inputs[row].text))
                spineSeconds[row] = (ContinuousClock.now - rankStarted).inSeconds
            }
            let assignStarted = ContinuousClock.now
            let assigned = matcher.assignWithEvidence(ranked: ranked)
            let assignShare = (ContinuousClock.now - assignStarted).inSeconds / Double(rows.count)
            for (row, match) in zip(rows, assigned) {
                matches[row] = match?.match
                evidence[row] = match?.evidence
                spineSeconds[row] += assignShare
            }
            if explain { for (row, candidates) in zip(rows, ranked) { explanations[row] = candidates } }
        }
        let matchTime = ContinuousClock.now - started

        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let output = FileHandle.standardOutput
        for (row, input) in inputs.enumerated() {
            let result = SpineOutput(
                input: input, match: matches[row], candidates: explain ? explanations[row].map(Explained.init) : nil,
                evidence: explain ? evidence[row] : nil)
            output.write(try encoder.encode(result))
            output.write(Data("\n".utf8))
        }
        if timing {
            let perSpine = inputs.isEmpty ? 0 : matchTime.inSeconds / Double(inputs.count)
            let sorted = spineSeconds.sorted()
            func percentile(_ share: Double) -> Double {
                sorted.isEmpty ? 0 : sorted[min(sorted.count - 1, Int(share * Double(sorted.count)))]
            }
            let source = catalogueIndex.built ? "built" : "reused"
            let report =
                "entries \(catalogueIndex.entryCount), index \(catalogueIndex.path) (\(source)), "
                + "open \(String(format: "%.3f", openTime.inSeconds)) s, \(inputs.count) spines, "
                + "\(String(format: "%.3f", perSpine * 1000)) ms per spine, "
                + "median \(String(format: "%.3f", percentile(0.5) * 1000)) ms, "
                + "p95 \(String(format: "%.3f", percentile(0.95) * 1000)) ms\n"
            FileHandle.standardError.write(Data(report.utf8))
        }
    }
}

private struct SpineInput: Decodable {
    var image: String
    var text: String
}

private struct Explained: Encodable {
    var id: Int64
    var title: String
    var authors: [String]
    var tag: String?
    var score: Double
    var features: MatchFeatures

    init(_ candidate: ScoredCandidate) {
        id = candidate.id
        title = candidate.entry.title
        authors = candidate.entry.authors
        tag = candidate.entry.tag
        score = candidate.score
        features = candidate.features
    }
}

/// One output line; the match's fields are null (not absent) when the spine matched nothing.
private struct SpineOutput: Encodable {
    var input: SpineInput
    var match: SpineMatch?
    var candidates: [Explained]?
    var evidence: MatchEvidence?

    enum CodingKeys: String, CodingKey { case image, text, title, authors, isbn, score, candidates, evidence }

    func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(input.image, forKey: .image)
        try container.encode(input.text, forKey: .text)
        try container.encode(match?.entry.title, forKey: .title)
        try container.encode(match?.entry.authors, forKey: .authors)
        try container.encode(match?.entry.isbn, forKey: .isbn)
        try container.encode(match.map { ($0.confidence * 1000).rounded() / 1000 }, forKey: .score)
        try container.encodeIfPresent(candidates, forKey: .candidates)
        try container.encodeIfPresent(evidence, forKey: .evidence)
    }
}
