import Foundation
import Recognition
import Testing

/// Candidates across catalogue tiers (the owner's catalogue, then the open one).
@Suite struct TieredCandidatesTests {
    @Test func tiersOfferTheCandidatesOfEveryCatalogueTheyLookedIn() throws {
        let language = try MatchConfidenceTests.languageShelf()
        let small = try SmallCatalogue()
        defer {
            language.remove()
            small.remove()
        }
        let tiers = TieredMatcher(tiers: [
            CatalogueMatcher(
                index: try CatalogueIndex.open(catalogue: small.path), options: MatchingOptions(useTags: false)),
            CatalogueMatcher(
                index: try CatalogueIndex.open(catalogue: language.path), options: MatchingOptions(useTags: false)),
        ])
        let read = try tiers.assignWithCandidates(SpineCandidatesTests.spines, keep: 5)
        #expect(read.map(\.match) == (try tiers.assign(SpineCandidatesTests.spines)))
        #expect(read[0].candidates.first?.entry.title == "Mecanoscrit del segon origen")
        #expect(read[1].candidates.contains { $0.entry.authors.contains { $0.contains("Wells") } })
    }

}
