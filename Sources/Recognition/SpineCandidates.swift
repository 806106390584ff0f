import Foundation

/// One book a spine may be, with the confidence it would have had if the assignment had chosen it: what the owner
/// picks from when the recognizer is not sure (docs/protocol.md §6, issue 34).
public struct SpineCandidate: Sendable, Hashable, Codable {
    public var entry: CatalogueEntry
    /// 0–1, by the matcher's ``ConfidenceCalibration``.
    public var confidence: Double
    public init(entry: CatalogueEntry, confidence: Double) {
        self.entry = entry
        self.confidence = confidence
    }
}

/// One spine read on a photo: its text and box, the book the assignment gave it (nil for none) and the books it may
/// be, by confidence, best first (the assigned one among them).
public struct SpineReading: Sendable, Hashable, Codable {
    public var spine: SpineText
    public var match: SpineMatch?
    public var candidates: [SpineCandidate]
    public init(spine: SpineText, match: SpineMatch?, candidates: [SpineCandidate]) {
        self.spine = spine
        self.match = match
        self.candidates = candidates
    }
}

/// A matcher that also names, per spine, the few books it could be.
public protocol SpineCandidateMatching: SpineMatching {
    /// One element per spine, in order: the assignment's match (nil for none) and up to `keep` candidates.
    func assignWithCandidates(_ spines: [String], keep: Int) throws -> [(
        match: SpineMatch?, candidates: [SpineCandidate]
    )]
}

extension CatalogueMatcher: SpineCandidateMatching {
    /// The per-photo assignment as ``assign(_:)`` makes it, and each spine's candidates from the same ranking.
    ///
    /// A candidate's confidence is the calibrated one it would have had as the assignment's choice: its score, its
    /// lead over the best other book (negative below the top), its rank and the spine's length go through the same
    /// ``ConfidenceCalibration``. The calibration was fitted on chosen matches that include the assignment's
    /// second choices (rank > 0, negative leads), so the figures stay on the one scale the device's 0.8 line means.
    /// Copies of one book (same title and authors) appear once. A candidate the assignment gave to another spine
    /// keeps its own figure, which may be above this spine's match: the assignment, not the candidates, decides
    /// what is a book.
    public func assignWithCandidates(_ spines: [String], keep: Int) throws
        -> [(match: SpineMatch?, candidates: [SpineCandidate])]
    {
        let ranked = try spines.map { try rank($0) }
        let assigned = assignWithEvidence(ranked: ranked)
        return zip(ranked, assigned).map { candidates, assignment in
            (assignment?.match, Self.candidates(candidates, chosen: assignment?.match, keep: keep, options: options))
        }
    }

    static func candidates(
        _ ranked: [ScoredCandidate], chosen: SpineMatch?, keep: Int, options: MatchingOptions
    ) -> [SpineCandidate] {
        guard keep > 0 else { return [] }
        var result: [SpineCandidate] = []
        if let chosen { result.append(SpineCandidate(entry: chosen.entry, confidence: chosen.confidence)) }
        var others: [SpineCandidate] = []
        for (position, candidate) in ranked.enumerated() {
            if result.contains(where: { sameBook($0.entry, candidate.entry) })
                || others.contains(where: { sameBook($0.entry, candidate.entry) })
            {
                continue
            }
            let rival = ranked.first { !sameBook($0.entry, candidate.entry) }
            let evidence = MatchEvidence(
                score: candidate.score, lead: candidate.score - (rival?.score ?? 0), rank: position,
                spineLetters: candidate.features.spineLetters, features: candidate.features)
            others.append(SpineCandidate(entry: candidate.entry, confidence: options.calibration.confidence(evidence)))
            // Enough looked at: the ranking is by score, and confidence follows the score closely.
            if others.count >= keep * 2 { break }
        }
        result += others
        // Best first, the match among them: a book the assignment gave to another spine of the photo may stand
        // above this spine's own match (two spines both looking like it), and is the owner's likeliest tap.
        result.sort { $0.confidence > $1.confidence }
        return Array(result.prefix(keep))
    }

    static func sameBook(_ a: CatalogueEntry, _ b: CatalogueEntry) -> Bool {
        a.title == b.title && a.authors == b.authors
    }
}

/// What the recognizer read on one photo, spine by spine, with candidates.
public struct ShelfReading: Sendable, Hashable, Codable {
    public var spines: [SpineReading]
    public init(spines: [SpineReading]) { self.spines = spines }
}

/// A whole-photo recognizer that reports every spine with its candidates.
public protocol CandidateShelfRecognizing: ShelfRecognizing {
    func read(
        jpeg: [UInt8], candidates keep: Int, progress: @escaping @Sendable (Double, String) async -> Void
    ) async throws -> ShelfReading

    /// The books a text typed or read may be, best first, up to `keep`: what "none of these" searches (issue 34).
    /// Scored as a spine alone on its photo, so the confidences are on the same calibrated scale.
    func search(text: String, keep: Int) async throws -> [SpineCandidate]
}

extension ShelfRecognizer: CandidateShelfRecognizing {
    /// As ``recognize(jpeg:progress:)``, each spine with up to `keep` candidates. A matcher that names none (not a
    /// ``SpineCandidateMatching``) gives each matched spine its match as its one candidate.
    public func read(
        jpeg: [UInt8], candidates keep: Int, progress: @escaping @Sendable (Double, String) async -> Void
    ) async throws -> ShelfReading {
        await progress(0, "reading")
        let photo = try await reader.read(jpeg: jpeg)
        await progress(0.8, "grouping")
        let spines = grouper.group(photo)
        await progress(0.85, "matching")
        let matcher = self.matcher
        let texts = spines.map(\.text)
        // The matcher may query SQLite: blocking work, kept off the cooperative pool.
        let results = try await onOwnThread(named: "spine-matching") {
            () throws -> [(match: SpineMatch?, candidates: [SpineCandidate])] in
            if let candidateMatcher = matcher as? any SpineCandidateMatching {
                return try candidateMatcher.assignWithCandidates(texts, keep: keep)
            }
            return try matcher.assign(texts).map { match in
                (match, match.map { [SpineCandidate(entry: $0.entry, confidence: $0.confidence)] } ?? [])
            }
        }
        guard results.count == spines.count else {
            throw MatcherContractError(spines: spines.count, matches: results.count)
        }
        await progress(1, "matching")
        return ShelfReading(
            spines: zip(spines, results).map { SpineReading(spine: $0, match: $1.match, candidates: $1.candidates) })
    }
}

extension ShelfRecognizer {
    public func search(text: String, keep: Int) async throws -> [SpineCandidate] {
        let matcher = self.matcher
        let results = try await onOwnThread(named: "book-search") {
            () throws -> [(match: SpineMatch?, candidates: [SpineCandidate])] in
            if let candidateMatcher = matcher as? any SpineCandidateMatching {
                return try candidateMatcher.assignWithCandidates([text], keep: keep)
            }
            return try matcher.assign([text]).map { match in
                (match, match.map { [SpineCandidate(entry: $0.entry, confidence: $0.confidence)] } ?? [])
            }
        }
        return results.first?.candidates ?? []
    }
}

private struct Matched: @unchecked Sendable {
    // The tuple array is made of Sendable values; the wrapper only carries it across the thread hop.
    var value: [(match: SpineMatch?, candidates: [SpineCandidate])]
}

/// Runs blocking `work` on a thread of its own and waits for it without holding a cooperative thread.
private func onOwnThread(
    named name: String, _ work: @escaping @Sendable () throws -> [(match: SpineMatch?, candidates: [SpineCandidate])]
) async throws -> [(match: SpineMatch?, candidates: [SpineCandidate])] {
    let matched = try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Matched, any Error>) in
        let thread = Thread {
            continuation.resume(with: Result { Matched(value: try work()) })
        }
        thread.name = name
        thread.start()
    }
    return matched.value
}
