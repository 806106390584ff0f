import Foundation
import Recognition
import Testing

/// Synthetic lines as the OCR worker gives them: corners in reading order (top-left, top-right, bottom-right,
/// bottom-left of the text as read), in image pixels.
enum Layout {
    /// Text running up an upright spine (the common way on Spanish and Catalan spines), centred on `x`.
    static func up(_ text: String, x: Double, from bottom: Double, to top: Double, thickness: Double = 40) -> TextLine {
        let half = thickness / 2
        return TextLine(
            text: text,
            polygon: [
                ImagePoint(x: x - half, y: bottom), ImagePoint(x: x - half, y: top),
                ImagePoint(x: x + half, y: top), ImagePoint(x: x + half, y: bottom),
            ],
            score: 0.95)
    }

    /// Text running down an upright spine (the English way).
    static func down(_ text: String, x: Double, from top: Double, to bottom: Double, thickness: Double = 40) -> TextLine
    {
        let half = thickness / 2
        return TextLine(
            text: text,
            polygon: [
                ImagePoint(x: x + half, y: top), ImagePoint(x: x + half, y: bottom),
                ImagePoint(x: x - half, y: bottom), ImagePoint(x: x - half, y: top),
            ],
            score: 0.95)
    }

    /// Text across the photo, as on a book lying flat or facing out.
    static func across(_ text: String, x: Double, to right: Double, y top: Double, thickness: Double = 30) -> TextLine {
        TextLine(
            text: text,
            polygon: [
                ImagePoint(x: x, y: top), ImagePoint(x: right, y: top),
                ImagePoint(x: right, y: top + thickness), ImagePoint(x: x, y: top + thickness),
            ],
            score: 0.95)
    }

    static func photo(_ lines: [TextLine]) -> ReadPhoto { ReadPhoto(width: 2000, height: 1000, lines: lines) }
}

@Suite struct SpineGrouperTests {
    let grouper = SpineGrouper()

    @Test func uprightSpinesKeepTheirLabelsAndSideBySideLines() {
        let photo = Layout.photo([
            Layout.up("796.42 Mor", x: 100, from: 900, to: 800, thickness: 26),
            Layout.up("GUIA DE LA MUSCULACION", x: 100, from: 700, to: 200, thickness: 50),
            Layout.up("Arcadi Alibes", x: 245, from: 650, to: 400, thickness: 30),
            Layout.up("Correr per ser felic", x: 205, from: 700, to: 250, thickness: 40),
            Layout.up("796.42 Ali", x: 220, from: 900, to: 810, thickness: 26),
            Layout.down("GUIA COMPLETA RUNNING Y MARATON", x: 340, from: 150, to: 700, thickness: 50),
            Layout.up("796.422 Pul", x: 340, from: 900, to: 790, thickness: 26),
        ])
        let spines = grouper.group(photo)
        #expect(
            spines.map(\.text) == [
                "GUIA DE LA MUSCULACION 796.42 Mor",
                "Correr per ser felic Arcadi Alibes 796.42 Ali",
                "GUIA COMPLETA RUNNING Y MARATON 796.422 Pul",
            ])
        // The first spine's box: its title's and label's extent, in fractions of the photo.
        let box = spines[0].box
        #expect(abs(box.x - 75.0 / 2000) < 1e-9 && abs(box.width - 50.0 / 2000) < 1e-9)
        #expect(abs(box.y - 200.0 / 1000) < 1e-9 && abs(box.height - 700.0 / 1000) < 1e-9)
        #expect(spines[1].lines.count == 3)
    }

    @Test func aBookLyingFlatIsOneBookAndStaysApartFromTheUprightOneBeside() {
        let photo = Layout.photo([
            Layout.across("HISTORIA DEL", x: 1000, to: 1400, y: 500),
            Layout.across("DEPORTE OLIMPICO", x: 1020, to: 1380, y: 540),
            Layout.up("Deportes de aventura", x: 1500, from: 900, to: 300),
        ])
        let spines = grouper.group(photo)
        #expect(spines.map(\.text) == ["HISTORIA DEL DEPORTE OLIMPICO", "Deportes de aventura"])
    }

    @Test func aLabelReadAcrossTheSpineJoinsItButAWideLineDoesNot() {
        let photo = Layout.photo([
            Layout.up("FUTBOL SALA", x: 600, from: 750, to: 300, thickness: 50),
            Layout.across("796.33 Tom", x: 585, to: 640, y: 820, thickness: 20),
            // Wider than the spine: a shelf sign, not part of it.
            Layout.across("ESPORTS", x: 450, to: 900, y: 950, thickness: 40),
        ])
        let spines = grouper.group(photo)
        #expect(spines.map(\.text).sorted() == ["ESPORTS", "FUTBOL SALA 796.33 Tom"])
    }

    @Test func twoLabelsSideBySideSplitSpinesWhoseTitlesTouch() {
        // Two thin spines whose titles are so close they would pass for one spine's two lines.
        let photo = Layout.photo([
            Layout.up("Manual de aerobic", x: 800, from: 700, to: 300, thickness: 40),
            Layout.up("Step training", x: 845, from: 720, to: 320, thickness: 40),
            Layout.up("796.4 Fer", x: 800, from: 900, to: 800, thickness: 26),
            Layout.up("796.4 Sal", x: 847, from: 900, to: 800, thickness: 26),
        ])
        let spines = grouper.group(photo)
        #expect(spines.map(\.text) == ["Manual de aerobic 796.4 Fer", "Step training 796.4 Sal"])
    }

    @Test func theShelfAboveAndStrayMarksStayOut() {
        let photo = Layout.photo([
            // The foot of a book on the shelf above, straight above this spine but far off.
            Layout.up("793.9 Jue", x: 100, from: 80, to: 0, thickness: 26),
            Layout.up("Enciclopedia visual", x: 100, from: 900, to: 450, thickness: 50),
            Layout.across("?", x: 700, to: 720, y: 400),
        ])
        let spines = grouper.group(photo)
        #expect(spines.map(\.text) == ["Enciclopedia visual", "793.9 Jue"])
        #expect(grouper.group(Layout.photo([])).isEmpty)
    }

    @Test func aLineWhoseLabelWasNotReadStaysOffItsNeighboursSpine() {
        let photo = Layout.photo([
            Layout.up("796.1 Abc", x: 100, from: 900, to: 800, thickness: 26),
            Layout.up("796.2 Def", x: 220, from: 900, to: 800, thickness: 26),
            Layout.up("796.3 Ghi", x: 340, from: 900, to: 800, thickness: 26),
            Layout.up("Historia del atletismo", x: 105, from: 700, to: 300, thickness: 40),
            // Near enough to the first title to be its second line, but straight above neither label.
            Layout.up("Correr con cabeza", x: 152, from: 700, to: 300, thickness: 30),
        ])
        #expect(
            grouper.group(photo).map(\.text) == [
                "Historia del atletismo 796.1 Abc", "Correr con cabeza", "796.2 Def", "796.3 Ghi",
            ])
    }

    @Test func capitalsAndAWordAreALabelOnlyInARowOfLabels() {
        // "UN Mar" has the shape of a novel's label ("N Pam") but stands alone above a title: it is the title's first
        // line, and the title below it joins it (a label would end its spine there).
        let alone = Layout.photo([
            Layout.up("UN Mar", x: 100, from: 400, to: 300, thickness: 40),
            Layout.up("de historias", x: 100, from: 850, to: 450, thickness: 40),
        ])
        #expect(grouper.group(alone).count == 1)
        // Three such labels along the shelf's foot are labels: each takes the title above it.
        let row = Layout.photo([
            Layout.up("N Pam", x: 100, from: 900, to: 820, thickness: 26),
            Layout.up("N Par", x: 150, from: 900, to: 820, thickness: 26),
            Layout.up("N Pas", x: 200, from: 900, to: 820, thickness: 26),
            Layout.up("La bicicleta estatica", x: 100, from: 780, to: 300, thickness: 30),
            Layout.up("Gener de sang", x: 150, from: 780, to: 300, thickness: 30),
            Layout.up("La mala dona", x: 200, from: 780, to: 300, thickness: 30),
        ])
        #expect(
            grouper.group(row).map(\.text) == [
                "La bicicleta estatica N Pam", "Gener de sang N Par", "La mala dona N Pas",
            ])
    }

    @Test func callNumbersAreRecognisedByTheirLeadingDigits() {
        let photo = Layout.photo([
            Layout.up("Atlas", x: 100, from: 700, to: 300, thickness: 50),
            Layout.up("Deportes", x: 147, from: 700, to: 300, thickness: 40),
            Layout.up("796(03) Dic", x: 100, from: 900, to: 780, thickness: 26),
        ])
        // One label: the side-by-side lines stay one spine, with the label last.
        #expect(grouper.group(photo).map(\.text) == ["Atlas Deportes 796(03) Dic"])
    }
}

/// The grouper on the lines the OCR worker read on the repository's two shelf photos at 1920 px (fixtures saved with
/// `swiftwing-recognizer read --save-ocr`): the rules as they meet real spines, which lean, and real labels, which
/// are read in fragments or not at all.
@Suite struct SpineGrouperOnShelfPhotoTests {
    let grouper = SpineGrouper()

    static func savedLines(_ name: String) throws -> ReadPhoto {
        let data = try Data(contentsOf: URL(fileURLWithPath: "\(recognitionFixtures)/\(name)-1920-lines.json"))
        return try JSONDecoder().decode(ReadPhoto.self, from: data)
    }

    /// The spine holding the line read as `text`, as its lines' texts.
    func spine(with text: String, in spines: [SpineText]) -> [String] {
        spines.first { $0.lines.contains { $0.text == text } }?.lines.map(\.text) ?? []
    }

    @Test func leaningSpinesFollowTheirOwnAxisToTheirLabel() throws {
        // Right of the photo's middle the spines lean by a tenth: straight down, "GUIA DE LA MUSCULACION" would
        // meet the label of the spine to its left and "correr" the label of the spine to its right.
        let spines = grouper.group(try Self.savedLines("one_shelf"))
        #expect(spine(with: "GUIA DE LA MUSCULACION", in: spines).contains("796.41 Tru"))
        #expect(spine(with: "itness", in: spines).contains("796.41Lib"))
        #expect(spine(with: "correr", in: spines).contains("796.42Cow"))
        #expect(spine(with: "John Mora", in: spines).contains("796.42 Mor"))
        #expect(spine(with: "n de Entrenamiento para Triation", in: spines).contains("796.42 Mor"))
        #expect(spine(with: "BARCA INEDIT", in: spines).contains("796.332Tom"))
        #expect(spine(with: "EBALONCESTParenenarninsd6a1ao", in: spines).contains("796.323 Man"))
    }

    @Test func everyLabelOfTheShelfIsItsOwnSpine() throws {
        // Thin neighbours whose titles touch were joined into one spine with two or three labels.
        let spines = grouper.group(try Self.savedLines("one_shelf"))
        // The shelf's row of labels: lines starting with the class "796" between 850 and 1060 px down (the shelf's
        // signs below it, "796ESPORTS", are not labels).
        let labelsPerSpine = spines.map { spine in
            spine.lines.filter { line in
                line.text.hasPrefix("796") && line.polygon.allSatisfy { (850...1060).contains($0.y) }
            }.count
        }
        #expect(labelsPerSpine.allSatisfy { $0 <= 1 })
        #expect(labelsPerSpine.reduce(0, +) == 29)
    }

    @Test func fictionLabelsOfLettersAnchorTheirSpines() throws {
        // Novels carry "N" and the author's mark ("N Par", read "NPar"; "N837 Pas"; the mark alone, "Pas", where the
        // class was not read): labels as much as "796.42 Mor".
        let spines = grouper.group(try Self.savedLines("two_shelves"))
        #expect(spine(with: "Gener de Sang Alan Parks", in: spines).contains("NPar"))
        #expect(spine(with: "ESCRITOS CORSARIOS Pasolini", in: spines).contains("N837 Pas"))
        #expect(spine(with: "EldoctorZhiv", in: spines).contains("Pas"))
        #expect(spine(with: "ardoPadura/LANEBLINADELAYER", in: spines).contains("N Pad"))
        // "Viure perillosament" stands beside Pasolini's spine, close enough to pass for its second line, but its axis
        // meets the row of labels well clear of "N837 Pas": its own label was not read, and it stays a book apart.
        #expect(spine(with: "Viure perillosament", in: spines) == ["Viure perillosament"])
    }

    @Test func aRowOfLabelsSeparatesTheShelves() throws {
        // The upper shelf's labels run across the photo at 44-48 % of its height; the lower shelf's books stand below.
        // A line of the upper shelf ("N Oye", "ZON") was joined to the lower shelf's titles straight below it.
        let photo = try Self.savedLines("two_shelves")
        let spines = grouper.group(photo)
        let row = 0.5 * Double(photo.height)
        for spine in spines {
            let centres = spine.lines.map { $0.polygon.map(\.y).reduce(0, +) / 4 }
            #expect(
                centres.allSatisfy { $0 < row } || centres.allSatisfy { $0 > row },
                "one spine on both shelves: \(spine.text)")
        }
    }
}

/// Home shelves have no labels: the edges between books seen on the picture bound the spines.
@Suite struct SpineSeparatorTests {
    /// Four look-alike paperbacks of one series side by side (George R. R. Martin's, as on a home shelf): without
    /// the edges between them their lines chain into one "spine"; with the edges the worker saw, four spines, each
    /// with its title and author, and an edge that runs through a title (a stripe of that spine's design) splits
    /// nothing.
    @Test func aRowOfFourLookAlikeSpinesGivesFourSpines() {
        let titles = ["A GAME OF THRONES", "A CLASH OF KINGS", "A STORM OF SWORDS", "A FEAST FOR CROWS"]
        var lines: [TextLine] = []
        for (index, title) in titles.enumerated() {
            let x = 400 + Double(index) * 60
            // Title and author side by side, read downwards: the title's letters face right, so it reads first.
            lines.append(Layout.down(title, x: x + 14, from: 150, to: 700, thickness: 30))
            lines.append(Layout.down("GEORGE R. R. MARTIN", x: x - 8, from: 250, to: 650, thickness: 22))
        }
        let edges = (0...4).map { index in
            let x = 370 + Double(index) * 60
            return SpineSeparator(top: ImagePoint(x: x, y: 100), bottom: ImagePoint(x: x + 4, y: 950))
        }
        let stripe = SpineSeparator(top: ImagePoint(x: 414, y: 200), bottom: ImagePoint(x: 414, y: 550))
        let grouper = SpineGrouper()
        #expect(grouper.group(Layout.photo(lines)).count == 1)
        let photo = ReadPhoto(width: 2000, height: 1000, lines: lines, separators: edges + [stripe])
        let spines = grouper.group(photo)
        #expect(spines.map(\.text) == titles.map { "\($0) GEORGE R. R. MARTIN" })
    }

    /// Lines saved before the worker sent separators still decode (with none).
    @Test func linesSavedWithoutSeparatorsDecode() throws {
        let json = #"{"width": 10, "height": 20, "lines": []}"#
        let photo = try JSONDecoder().decode(ReadPhoto.self, from: Data(json.utf8))
        #expect(photo.separators.isEmpty && photo.width == 10)
    }
}
