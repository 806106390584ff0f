/// Candidates across catalogue tiers: each tier that looks at a spine adds its own, so a spine the owner's few books
/// match weakly still offers the open catalogue's books, and the other way round.
extension TieredMatcher: SpineCandidateMatching {
    /// The matches exactly as ``assign(_:)`` chooses them; the candidates of every tier that looked at the spine
    /// and the match, best first, each book once. A tier that names no candidates adds its match.
    public func assignWithCandidates(_ spines: [String], keep: Int) throws
        -> [(match: SpineMatch?, candidates: [SpineCandidate])]
    {
        var matches = [SpineMatch?](repeating: nil, count: spines.count)
        var offered = [[SpineCandidate]](repeating: [], count: spines.count)
        for tier in tiers {
            let open = spines.indices.filter { (matches[$0]?.confidence ?? 0) < sure }
            guard !open.isEmpty else { break }
            let texts = open.map { spines[$0] }
            let found: [(match: SpineMatch?, candidates: [SpineCandidate])]
            if let tier = tier as? any SpineCandidateMatching {
                found = try tier.assignWithCandidates(texts, keep: keep)
            } else {
                found = try tier.assign(texts).map { match in
                    (match, match.map { [SpineCandidate(entry: $0.entry, confidence: $0.confidence)] } ?? [])
                }
            }
            guard found.count == open.count else {
                throw MatcherContractError(spines: open.count, matches: found.count)
            }
            for (spine, result) in zip(open, found) {
                offered[spine] += result.candidates
                guard let match = result.match else { continue }
                if let earlier = matches[spine], !(earlier.confidence < sure && match.confidence >= sure) { continue }
                matches[spine] = match
            }
        }
        return zip(matches, offered).map { match, candidates in
            var merged: [SpineCandidate] = []
            var offeredFirst = candidates
            if let match { offeredFirst.append(SpineCandidate(entry: match.entry, confidence: match.confidence)) }
            for candidate in offeredFirst.sorted(by: { $0.confidence > $1.confidence })
            where !merged.contains(where: { CatalogueMatcher.sameBook($0.entry, candidate.entry) }) {
                merged.append(candidate)
            }
            return (match, Array(merged.prefix(keep)))
        }
    }
}
