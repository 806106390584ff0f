import Foundation
import Recognition
import Testing

/// A small catalogue in the Library Dataset's form, written to a fresh folder for each test.
struct SmallCatalogue {
    static let csv = """
        title,author,tag,series,isbn
        Correr per ser feliç ,"Morilla, Marc",796.42 Mor,,9788416139514
        Guía de la musculación : 200 ejercicios ,"Delavier, Frédéric",796.41 Del,,9788480196093
        Enciclopedia visual de los deportes ,"Varios autores",796 Enc,,9788434223189
        Memoria ,"Baddeley, Alan",153 Bad,,9788420669434
        Memoria histórica de la guerra ,"Pérez, Juan",946 Per,,9788420000001
        Mapas mentales : la guía definitiva ,"Buzan, Tony",153 Buz,,9788417568184
        El Arte de la guerra ,"Sunzi",355 Sun,,9788441421189
        El Arte de la guerra ,"Sunzi",355 Sun,,9788441421189
        Las Pseudociencias : ¡vaya timo! ,"Bunge, Mario, 1919-2020",001 Bun,,9788492422241
        La Actitud científica ,"MacIntyre, Lee",001 Mac,,9788437641317

        """

    let folder: URL
    let path: String

    init(csv: String = SmallCatalogue.csv) throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("recognition-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        path = folder.appendingPathComponent("catalogue.csv").path
        try Data(csv.utf8).write(to: URL(fileURLWithPath: path))
    }

    func remove() { try? FileManager.default.removeItem(at: folder) }
}

@Suite("Catalogue index")
struct CatalogueIndexTests {
    @Test func isBuiltOnceBesideTheCatalogueAndReused() throws {
        let catalogue = try SmallCatalogue()
        defer { catalogue.remove() }
        let first = try CatalogueIndex.open(catalogue: catalogue.path)
        #expect(first.built)
        #expect(first.entryCount == 10)
        #expect(first.path == catalogue.path + ".index.sqlite")
        let second = try CatalogueIndex.open(catalogue: catalogue.path)
        #expect(!second.built)
        #expect(second.entryCount == 10)
    }

    @Test func isRebuiltWhenTheCatalogueChanges() throws {
        let catalogue = try SmallCatalogue()
        defer { catalogue.remove() }
        _ = try CatalogueIndex.open(catalogue: catalogue.path)
        try Data((SmallCatalogue.csv + "Nuevo libro ,\"Nuevo, Autor\",000 Nue,,\n").utf8)
            .write(to: URL(fileURLWithPath: catalogue.path))
        let reopened = try CatalogueIndex.open(catalogue: catalogue.path)
        #expect(reopened.built)
        #expect(reopened.entryCount == 11)
    }

    @Test func aBadCatalogueLeavesNoIndex() throws {
        let catalogue = try SmallCatalogue(csv: "title,author,tag,series,isbn\nA,\"B, C\"\n")
        defer { catalogue.remove() }
        #expect(throws: CatalogueImportError.self) { try CatalogueIndex.open(catalogue: catalogue.path) }
        let left = try FileManager.default.contentsOfDirectory(atPath: catalogue.folder.path)
        #expect(left == ["catalogue.csv"])
    }
}

@Suite("Matching")
struct MatchingTests {
    func matcher(useTags: Bool = true) throws -> (CatalogueMatcher, SmallCatalogue) {
        let catalogue = try SmallCatalogue()
        let index = try CatalogueIndex.open(catalogue: catalogue.path)
        return (CatalogueMatcher(index: index, options: MatchingOptions(useTags: useTags)), catalogue)
    }

    @Test func matchesSpinesThroughOCRNoise() throws {
        let (matcher, catalogue) = try matcher(useTags: false)
        defer { catalogue.remove() }
        // Lost accents, merged words, a confused letter, the author's surname and a publisher among the title.
        let spines = [
            "GUIA DE LA MUSCULACI0N DELAVIER HISPANO EUROPEA",
            "CORRERPERSER FELIC Marc Morilla",
            "LAS PSEUDOCIENCIAS Mario Bunge Laetoli",
        ]
        let matches = try matcher.assign(spines)
        #expect(
            matches.map { $0?.entry.title } == [
                "Guía de la musculación : 200 ejercicios", "Correr per ser feliç", "Las Pseudociencias : ¡vaya timo!",
            ])
        #expect(matches[0]?.entry.isbn == "9788480196093")
    }

    @Test func aSpineThatMatchesNothingIsNil() throws {
        let (matcher, catalogue) = try matcher()
        defer { catalogue.remove() }
        let matches = try matcher.assign(["ZXQW PLORK 7", "", "Memoria Alan Baddeley"])
        #expect(matches[0] == nil)
        #expect(matches[1] == nil)
        #expect(matches[2]?.entry.title == "Memoria")
    }

    @Test func anEntryGoesToOneSpineOnly() throws {
        let (matcher, catalogue) = try matcher()
        defer { catalogue.remove() }
        // Both spines look most like "Memoria" by Baddeley; the second says more of the other "Memoria" entry,
        // so the assignment gives each its own book rather than one book twice.
        let matches = try matcher.assign(["MEMORIA Baddeley 153 Bad", "MEMORIA HISTORICA"])
        #expect(matches[0]?.entry.authors == ["Baddeley, Alan"])
        #expect(matches[1]?.entry.title == "Memoria histórica de la guerra")
        // Two copies of one book are two entries: two spines of it each get one.
        let copies = try matcher.assign(["EL ARTE DE LA GUERRA SUN TZU", "EL ARTE DE LA GUERRA SUNZI"])
        #expect(copies.allSatisfy { $0?.entry.title == "El Arte de la guerra" })
        // A third spine of the same book finds no copy left: only two of three get the book.
        let three = try matcher.assign(["EL ARTE DE LA GUERRA", "EL ARTE DE LA GUERRA", "EL ARTE DE LA GUERRA"])
        #expect(three.filter { $0?.entry.title == "El Arte de la guerra" }.count == 2)
    }

    @Test func theEntryThatExplainsTheSpineBeatsAShortTitleFoundWhole() throws {
        // "Catedral" is spelt whole inside the spine's first title word; the other entry accounts for the rest of it.
        let catalogue = try SmallCatalogue(
            csv: SmallCatalogue.csv + "Catedral ,\"Carver, Raymond\",N Car,,\n"
                + "\"Catedrals, monestirs i grans edificis religiosos \",\"Ramos, Maria Lluïsa\",726.6 Ram,,\n")
        defer { catalogue.remove() }
        let matcher = CatalogueMatcher(
            index: try CatalogueIndex.open(catalogue: catalogue.path), options: MatchingOptions(useTags: false))
        let ranked = try matcher.rank("726.6 Ram 1 Catedrals, monestirs...")
        #expect(ranked.first?.entry.title == "Catedrals, monestirs i grans edificis religiosos")
    }

    @Test func tagsCountOnlyWhenAsked() throws {
        let (withTags, first) = try matcher(useTags: true)
        defer { first.remove() }
        let (withoutTags, second) = try matcher(useTags: false)
        defer { second.remove() }
        let tagged = try withTags.rank("MEMORIA 946 Per")
        #expect(tagged.first?.entry.authors == ["Pérez, Juan"])
        #expect(tagged.first!.features.tag == 1)
        let untagged = try withoutTags.rank("MEMORIA 946 Per")
        #expect(untagged.allSatisfy { $0.features.tag == 0 && $0.features.callNumber == 0 })
    }

    @Test func aLabelReadWholeBringsItsBookAmongTheCandidates() throws {
        let catalogue = try SmallCatalogue()
        defer { catalogue.remove() }
        // One candidate from the trigrams: the title's words pick the war book; the label names another.
        let matcher = CatalogueMatcher(
            index: try CatalogueIndex.open(catalogue: catalogue.path),
            options: MatchingOptions(useTags: true, candidatesPerSpine: 1))
        let ranked = try matcher.rank("EL ARTE DE LA GUERRA 796.42 Mor")
        let labelled = ranked.first { $0.entry.title == "Correr per ser feliç" }
        #expect(labelled?.features.callNumber == 1)
        #expect(labelled?.features.callNumberHolders == 1)
        // A spine that shows only its label, misread ("M0R", a comma for the point), finds its book.
        let labelOnly = try matcher.assign(["1 796,42 M0R"])
        #expect(labelOnly[0]?.entry.title == "Correr per ser feliç")
    }

    @Test func aLabelManyBooksShareLeavesTheTitleToDecide() throws {
        // Four books share "N Pam"; the spine's label reads it whole, its title is another's: the title decides,
        // and the shared label is not enough on its own to fetch them all.
        let catalogue = try SmallCatalogue(
            csv: SmallCatalogue.csv + "La Bicicleta estàtica ,\"Pàmies, Sergi\",N Pam,,\n"
                + "Memòria dels morts ,\"Pàmies, Teresa\",N Pam,,\n"
                + "Quan érem refugiats ,\"Pàmies, Teresa\",N Pam,,\n"
                + "Cançons d'amor i de pluja ,\"Pàmies, Sergi\",N Pam,,\n")
        defer { catalogue.remove() }
        let matcher = CatalogueMatcher(
            index: try CatalogueIndex.open(catalogue: catalogue.path),
            options: MatchingOptions(useTags: true, callNumberHolders: 3))
        let ranked = try matcher.rank("SERGI PÀMIES LA BICICLETA ESTÀTICA N Pam")
        #expect(ranked.first?.entry.title == "La Bicicleta estàtica")
        #expect(ranked.first?.features.callNumberHolders == 4)
        let tight = CatalogueMatcher(
            index: matcher.index, options: MatchingOptions(useTags: true, candidatesPerSpine: 1, callNumberHolders: 3))
        #expect(try tight.rank("N Pam").count <= 1)
    }

    @Test func aTitledSpineKeepsItsBookFromItsOwnLabelCutApart() throws {
        // The label at a spine's foot read as a text of its own, beside the spine's title: both want the book, and
        // the title's spine keeps it; the label alone still finds it.
        let catalogue = try SmallCatalogue(csv: SmallCatalogue.csv + "Atlas de gramática , ,434.6 Atl,,\n")
        defer { catalogue.remove() }
        let matcher = CatalogueMatcher(
            index: try CatalogueIndex.open(catalogue: catalogue.path), options: MatchingOptions(useTags: true))
        let photo = ["verticales ATLAS DE GRAMÁTICA", "434.6 Atl"]
        let matches = try matcher.assign(photo)
        #expect(matches[0]?.entry.title == "Atlas de gramática")
        #expect(try matcher.assign(["434.6 Atl"])[0]?.entry.title == "Atlas de gramática")
        // Weighed whole, the label's exact call number outbids the title read without one.
        var weights = MatchingWeights()
        weights.labelOnlyInAssignment = 1
        let whole = CatalogueMatcher(index: matcher.index, options: MatchingOptions(useTags: true, weights: weights))
        #expect(try whole.assign(photo)[1]?.entry.title == "Atlas de gramática")
    }
}

@Suite("Author marks")
struct AuthorMarkTests {
    @Test func theLabelsAuthorMarkPartsBooksOfOneTitleWithoutCallNumbers() throws {
        // Two guides to Portugal by two authors, in an owner's catalogue without call numbers. The spine's words fit
        // the second a little better (it also explains "Madeira" and "Luis"), but its label "91(026) (469) Glo" ends
        // in the first's author mark, the first three letters of its author's surname: the mark decides.
        let catalogue = try SmallCatalogue(
            csv: SmallCatalogue.csv + "Portugal : guía ,\"Gloaguen, Philippe\",91 Glo,,\n"
                + "Portugal : Madeira ,\"Andrade, Luis\",91 And,,\n")
        defer { catalogue.remove() }
        let index = try CatalogueIndex.open(catalogue: catalogue.path)
        let spine = "PORTUGAL guía Madeira Luis 91(026) (469) Glo"
        let matcher = CatalogueMatcher(index: index, options: MatchingOptions(useTags: false))
        let ranked = try matcher.rank(spine)
        #expect(ranked.first?.entry.authors == ["Gloaguen, Philippe"])
        #expect(ranked.first?.features.authorMark == 1)
        #expect(try matcher.assign([spine])[0]?.entry.authors == ["Gloaguen, Philippe"])
        var weights = MatchingWeights()
        weights.authorMark = 0
        let unmarked = CatalogueMatcher(index: index, options: MatchingOptions(useTags: false, weights: weights))
        #expect(try unmarked.rank(spine).first?.entry.authors == ["Andrade, Luis"])
        // A title without an author is filed by its first word after the article.
        let titled = try SmallCatalogue(csv: SmallCatalogue.csv + "El Meu país : racons , ,91 Meu,,\n")
        defer { titled.remove() }
        let byTitle = CatalogueMatcher(
            index: try CatalogueIndex.open(catalogue: titled.path), options: MatchingOptions(useTags: false))
        #expect(try byTitle.rank("EL MEU PAÍS 91(46.71) Meu").first?.features.authorMark == 1)
    }
}

@Suite("Assignment")
struct AssignmentTests {
    @Test func maximisesTheTotalRatherThanEachRowsBest() {
        // Row 0's best is column 0, but giving column 0 to row 1 and column 1 to row 0 scores more in total.
        let scores = [[0.9, 0.8], [0.85, 0.1]]
        #expect(Assignment.maximise(scores) == [1, 0])
    }

    @Test func leavesRowsUnassignedBelowTheFloorAndWhenColumnsRunOut() {
        #expect(Assignment.maximise([[0.3, 0.2]], floor: 0.5) == [nil])
        #expect(Assignment.maximise([[0.9], [0.8], [0.7]], floor: 0.1) == [0, nil, nil])
        #expect(Assignment.maximise([[Double]]([[], []])) == [nil, nil])
        #expect(Assignment.maximise([]) == [])
    }

    @Test func assignsEachColumnOnce() {
        var generator = SeededGenerator(seed: 7)
        for _ in 0..<50 {
            let rows = Int.random(in: 1...8, using: &generator)
            let columns = Int.random(in: 1...8, using: &generator)
            let scores = (0..<rows).map { _ in (0..<columns).map { _ in Double.random(in: 0...1, using: &generator) } }
            let chosen = Assignment.maximise(scores, floor: 0.2)
            let used = chosen.compactMap { $0 }
            #expect(Set(used).count == used.count)
            // No better total exists than the brute-force optimum on these small cases.
            #expect(abs(total(scores, chosen, floor: 0.2) - bruteForce(scores, floor: 0.2)) < 1e-9)
        }
    }

    func total(_ scores: [[Double]], _ chosen: [Int?], floor: Double) -> Double {
        zip(scores, chosen).reduce(0) { sum, pair in sum + (pair.1.map { pair.0[$0] } ?? floor) }
    }

    func bruteForce(_ scores: [[Double]], floor: Double, row: Int = 0, used: Set<Int> = []) -> Double {
        guard row < scores.count else { return 0 }
        var best = floor + bruteForce(scores, floor: floor, row: row + 1, used: used)
        for column in scores[row].indices where !used.contains(column) && scores[row][column] > floor {
            best = max(
                best, scores[row][column] + bruteForce(scores, floor: floor, row: row + 1, used: used.union([column])))
        }
        return best
    }
}

struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

@Suite("Match confidence")
struct MatchConfidenceTests {
    /// The Library Dataset's language shelf (call numbers 4…): 396 real catalogue rows, enough for word rarities
    /// like the whole catalogue's, a fraction of its index build. Its "Portugués" phrasebook is left out, so a spine
    /// of it can only match wrongly.
    static func languageShelf() throws -> SmallCatalogue {
        let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let whole = try CatalogueImport.entries(
            csv: try String(
                contentsOf: repository.appendingPathComponent("Fixtures/library-dataset/catalogue.csv"),
                encoding: .utf8),
            file: "catalogue.csv")
        var csv = "title,author,tag,series,isbn\n"
        for entry in whole where entry.tag?.hasPrefix("4") == true {
            if entry.title.hasPrefix("Portugués") && entry.authors == ["Caetano Gallego, Ana María"] { continue }
            let cells = [
                entry.title, entry.authors.joined(separator: "; "), entry.tag ?? "", entry.series ?? "",
                entry.isbn ?? "",
            ]
            csv += cells.map { "\"" + $0.replacingOccurrences(of: "\"", with: "\"\"") + "\"" }.joined(separator: ",")
            csv += "\n"
        }
        return try SmallCatalogue(csv: csv)
    }

    @Test func aWrongMatchFallsBelowTheReviewLineAndARightOneReachesIt() throws {
        let catalogue = try Self.languageShelf()
        defer { catalogue.remove() }
        let matcher = CatalogueMatcher(
            index: try CatalogueIndex.open(catalogue: catalogue.path), options: MatchingOptions(useTags: false))
        #expect(matcher.index.entryCount == 396)
        // Spine texts as the dataset's OCR read them.
        let matches = try matcher.assign([
            "Mecanoscrit del segon origen Manuel de Pedrolo 433.2 Ped",
            // The phrasebook left out: the series title matches other Espasa guides, none of them this book.
            "Guias Espasa de conversación GUÉS 435 Cae",
            // Only the author is legible: one of his books, but which one the spine does not say.
            "H.S Wells 441.2 Wel",
        ])
        #expect(matches[0]?.entry.title == "Mecanoscrit del segon origen")
        #expect((matches[0]?.confidence ?? 0) >= 0.8)
        #expect(matches[1]?.entry.title.hasPrefix("Portugués") != true)
        #expect((matches[1]?.confidence ?? 0) < 0.8)
        #expect(matches[2] == nil || matches[2]!.confidence < 0.8)
    }
}
