import Foundation
import Recognition
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A matcher that answers from a table, counting the spines it was asked about: a stand-in for one catalogue.
private final class TableMatcher: SpineMatching, @unchecked Sendable {
    let table: [String: SpineMatch]
    private let lock = NSLock()
    private var askedAbout: [String] = []
    init(_ table: [String: (title: String, confidence: Double)]) {
        self.table = table.mapValues {
            SpineMatch(entry: CatalogueEntry(title: $0.title, authors: []), confidence: $0.confidence)
        }
    }
    var asked: [String] { lock.withLock { askedAbout } }
    func assign(_ spines: [String]) throws -> [SpineMatch?] {
        lock.withLock { askedAbout += spines }
        return spines.map { table[$0] }
    }
}

@Suite("Catalogues searched in tiers: the owner's first, the open one last")
struct CatalogueTiersTests {
    @Test func theOwnersSureMatchWinsAndTheOpenCatalogueFillsTheRest() throws {
        let owner = TableMatcher(["A": ("Owner's A", 0.95), "B": ("Owner's weak B", 0.4)])
        let open = TableMatcher([
            "A": ("Open A", 0.99), "B": ("Open B", 0.9), "C": ("Open C", 0.85), "D": ("Open D", 0.3),
        ])
        let matches = try TieredMatcher(tiers: [owner, open]).assign(["A", "B", "C", "D", "E"])
        #expect(matches.map { $0?.entry.title } == ["Owner's A", "Open B", "Open C", "Open D", nil])
        // A sure match is not asked of later tiers.
        #expect(open.asked == ["B", "C", "D", "E"])
    }

    @Test func aWeakOwnersMatchStaysWhenNoLaterTierIsSure() throws {
        let owner = TableMatcher(["B": ("Owner's B", 0.5)])
        let open = TableMatcher(["B": ("Open B", 0.7)])
        let matches = try TieredMatcher(tiers: [owner, open]).assign(["B"])
        #expect(matches.map { $0?.entry.title } == ["Owner's B"])
    }

    @Test func aCatalogueWithoutCallNumbersIsMatchedWithTheTaglessFeatures() throws {
        let library = try SmallCatalogue()
        defer { library.remove() }
        let goodreads = try SmallCatalogue(
            csv: """
                Book Id,Title,Author,Additional Authors,ISBN,ISBN13
                5470,1984,George Orwell,,,

                """)
        defer { goodreads.remove() }
        let libraryIndex = try CatalogueIndex.open(catalogue: library.path)
        let goodreadsIndex = try CatalogueIndex.open(catalogue: goodreads.path)
        #expect(libraryIndex.hasCallNumbers && !goodreadsIndex.hasCallNumbers)
        #expect(CatalogueMatcher(index: libraryIndex, options: MatchingOptions(useTags: true)).options.useTags)
        #expect(!CatalogueMatcher(index: goodreadsIndex, options: MatchingOptions(useTags: true)).options.useTags)
    }

    @Test func theOpenCatalogueIsFoundInACheckoutAndNamedWhenMissing() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().path
        let found = try OpenCatalogue.locate(root: root, environment: [:])
        #expect(found.hasSuffix(OpenCatalogue.checkoutPath) && FileManager.default.fileExists(atPath: found))
        #expect {
            try OpenCatalogue.locate(environment: ["SWIFTWING_OPEN_CATALOGUE": "/nonexistent/open.csv"])
        } throws: { error in
            "\(error)".contains("/nonexistent/open.csv") && "\(error)".contains("--catalogue")
        }
    }
}

/// The device's library as a catalogue: it may not exist yet, and it changes while the service runs.
@Suite("The library read again as it changes")
struct LibraryCatalogueTests {
    static let header =
        "ISBN-13,ISBN-10,Title,Authors,Format,Publisher,Published Date,Pages,Confidence,Needs Review,"
        + "Added Date,Cover URL,Scan ID\r\n"

    static func row(_ title: String, _ author: String, needsReview: Bool = false) -> String {
        ",,\"\(title)\",\"\(author)\",,,,,0.5,\(needsReview),2026-12-02T10:00:00Z,,\r\n"
    }

    @Test func aMissingFileMatchesNothingUntilItAppearsAndAChangeIsSeenAtTheNextPhoto() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("library-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("library.csv")
        let matcher = LibraryCatalogueMatcher(path: file.path)
        let spines = ["PALE FIRE NABOKOV", "WHITE TEETH ZADIE SMITH"]
        #expect(try matcher.assign(spines).map { $0?.entry.title } == [nil, nil])

        try Data((Self.header + Self.row("Pale Fire", "Vladimir Nabokov")).utf8).write(to: file)
        #expect(try matcher.assign(spines).map { $0?.entry.title } == ["Pale Fire", nil])

        // Rewritten as the device does (replaced whole): a confirmed book joins, one awaiting review does not.
        let next = folder.appendingPathComponent("library.csv.new")
        let rows =
            Self.row("Pale Fire", "Vladimir Nabokov") + Self.row("White Teeth", "Zadie Smith")
            + Self.row("Bluebeard", "Kurt Vonnegut", needsReview: true)
        try Data((Self.header + rows).utf8).write(to: next)
        #expect(rename(next.path, file.path) == 0)
        #expect(
            try matcher.assign(spines + ["BLUEBEARD VONNEGUT"]).map { $0?.entry.title } == [
                "Pale Fire", "White Teeth", nil,
            ])
    }

    @Test func aDamagedFileIsSaidAndMatchesNothingInsteadOfFailingEveryPhoto() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("library-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("library.csv")
        try Data("not,a,catalogue\r\n1,2,3\r\n".utf8).write(to: file)
        let reports = Mutex<[String?]>([])
        let matcher = LibraryCatalogueMatcher(path: file.path) { problem in reports.withLock { $0.append(problem) } }
        #expect(try matcher.assign(["PALE FIRE"]).map { $0?.entry.title } == [nil])
        #expect(matcher.problem?.contains("library.csv") == true, "\(matcher.problem ?? "nil")")
        // Said once for the service's log, not at every photo; and said again when the file is usable.
        _ = try matcher.assign(["PALE FIRE"])
        #expect(reports.withLock { $0.count } == 1)
        #expect(reports.withLock { $0.first??.contains("library.csv") } == true)
        try Data((Self.header + Self.row("Pale Fire", "Vladimir Nabokov")).utf8).write(to: file)
        #expect(try matcher.assign(["PALE FIRE NABOKOV"]).map { $0?.entry.title } == ["Pale Fire"])
        #expect(reports.withLock { $0.count } == 2 && reports.withLock { $0.last! } == nil)
    }
}
