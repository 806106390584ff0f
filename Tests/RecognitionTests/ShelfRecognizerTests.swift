import Recognition
import Synchronization
import Testing

/// A reader that returns one fixed photo: the pipeline's logic without the OCR worker.
struct FixedTextReader: TextReading {
    let photo: ReadPhoto
    func read(jpeg: [UInt8]) async throws -> ReadPhoto { photo }
}

/// A matcher that answers the wrong number of results: a contract the pipeline checks.
struct ShortMatcher: SpineMatching {
    func assign(_ spines: [String]) throws -> [SpineMatch?] { [] }
}

@Suite struct ShelfRecognizerTests {
    let catalogue = SpineBaselineMatcher(entries: [
        CatalogueEntry(
            title: "Guía de la musculación", authors: ["Delavier, Frédéric"], isbn: "9788480199001",
            tag: "796.42 Del"),
        CatalogueEntry(
            title: "Correr per ser feliç", authors: ["Alibés, Arcadi"], isbn: "9788497917070",
            tag: "796.42 Ali"),
        CatalogueEntry(
            title: "Historia del fútbol", authors: ["Pérez, Juan"], isbn: "9788400000001", tag: "796.33 Per"),
    ])

    @Test func readsGroupsAndMatchesAPhotoReportingProgress() async throws {
        let photo = Layout.photo([
            Layout.up("GUIA DE LA MUSCULACION", x: 100, from: 700, to: 200, thickness: 50),
            Layout.up("796.42 Del", x: 100, from: 900, to: 800, thickness: 26),
            Layout.up("Correr per ser felic", x: 205, from: 700, to: 250, thickness: 40),
            Layout.up("Arcadi Alibes", x: 245, from: 650, to: 400, thickness: 30),
            Layout.up("Termodinamica avanzada", x: 400, from: 700, to: 250, thickness: 40),
        ])
        let stages = Mutex<[String]>([])
        let recognizer = ShelfRecognizer(reader: FixedTextReader(photo: photo), matcher: catalogue)
        let result = try await recognizer.recognize(jpeg: [0xff, 0xd8]) { fraction, stage in
            stages.withLock { $0.append("\(stage) \(fraction)") }
        }
        #expect(result.books.map(\.match.entry.isbn) == ["9788480199001", "9788497917070"])
        #expect(result.books[1].spine.text == "Correr per ser felic Arcadi Alibes")
        #expect(result.unmatched.map(\.text) == ["Termodinamica avanzada"])
        #expect(stages.withLock { $0 } == ["reading 0.0", "grouping 0.8", "matching 0.85", "matching 1.0"])
    }

    @Test func aMatcherThatBreaksItsContractIsAnError() async throws {
        let photo = Layout.photo([Layout.up("GUIA DE LA MUSCULACION", x: 100, from: 700, to: 200)])
        let recognizer = ShelfRecognizer(reader: FixedTextReader(photo: photo), matcher: ShortMatcher())
        await #expect(throws: MatcherContractError.self) {
            _ = try await recognizer.recognize(jpeg: []) { _, _ in }
        }
    }

    @Test func aPhotoWithNoTextGivesNoBooks() async throws {
        let recognizer = ShelfRecognizer(reader: FixedTextReader(photo: Layout.photo([])), matcher: catalogue)
        let result = try await recognizer.recognize(jpeg: []) { _, _ in }
        #expect(result.books.isEmpty && result.unmatched.isEmpty)
    }
}
