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
    static func down(_ text: String, x: Double, from top: Double, to bottom: Double, thickness: Double = 40) -> TextLine {
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
        #expect(spines.map(\.text) == [
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
