import ArgumentParser
import Recognition

/// The catalogues `read` and `serve` match against: the owner's own (`--catalogue`, any number, searched in the
/// order given and winning over the open one), then the shipped open catalogue (goodbooks-10k) unless
/// `--no-open-catalogue`. With none given, the open catalogue alone: a new owner needs none to start.
struct CatalogueOptions: ParsableArguments {
    @Option(
        name: .customLong("catalogue"),
        help: ArgumentHelp(
            "A catalogue CSV of your own (a Goodreads export, a SwiftWing export, the Library Dataset's catalogue.csv); "
                + "repeat for several. Searched before the shipped open catalogue, and wins over it.",
            valueName: "FILE"))
    var catalogues: [String] = []

    @Flag(help: "Match only the catalogues given with --catalogue, not the shipped open catalogue (goodbooks-10k).")
    var noOpenCatalogue = false

    @Option(
        help: ArgumentHelp(
            "The device's library as a SwiftWing export, rewritten as books land and are confirmed (it may not exist "
                + "yet): searched first, re-read when it changes, books awaiting review left out.",
            valueName: "FILE"))
    var library: String?

    func validate() throws {
        guard !(noOpenCatalogue && catalogues.isEmpty && library == nil) else {
            throw ValidationError("--no-open-catalogue needs at least one --catalogue FILE or --library FILE")
        }
    }

    /// The catalogue files in the order they are searched.
    func paths() throws -> [String] {
        guard !noOpenCatalogue else { return catalogues }
        do {
            return catalogues + [try OpenCatalogue.locate()]
        } catch {
            throw ValidationError(error.description)
        }
    }

    /// The matcher over these options' catalogues: the library first, then ``paths()``.
    func matcher(useTags: Bool) throws -> any SpineMatching {
        try Self.matcher(paths: paths(), library: library, useTags: useTags)
    }

    /// One matcher per catalogue, searched in order (the library's first). A catalogue without call numbers is
    /// matched without them.
    /// `report` hears when the library's file cannot be used and when it can again.
    static func matcher(
        paths: [String], library: String? = nil, useTags: Bool, report: (@Sendable (String?) -> Void)? = nil
    ) throws -> any SpineMatching {
        let libraryMatcher = library.map {
            LibraryCatalogueMatcher(path: $0, options: MatchingOptions(useTags: useTags), report: report)
                as any SpineMatching
        }
        let matchers = try paths.map { path -> any SpineMatching in
            do {
                return CatalogueMatcher(
                    index: try CatalogueIndex.open(catalogue: path), options: MatchingOptions(useTags: useTags))
            } catch let error as CatalogueImportError {
                throw ValidationError(error.description)
            }
        }
        let tiers = (libraryMatcher.map { [$0] } ?? []) + matchers
        return tiers.count == 1 ? tiers[0] : TieredMatcher(tiers: tiers)
    }
}
