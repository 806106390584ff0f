import Foundation
import Recognition
import Testing

/// Each spine's candidates (issue 34): the books it may be, from the same ranking and on the same confidence scale
/// as the assignment's match, on a real catalogue index.
@Suite struct SpineCandidatesTests {
    static let spines = [
        // As the dataset's OCR read them: one sure, one only the author legible, one nothing like a book.
        "Mecanoscrit del segon origen Manuel de Pedrolo 433.2 Ped",
        "H.S Wells 441.2 Wel",
        "Guias Espasa de conversación GUÉS 435 Cae",
        "2018",
    ]

    @Test func theMatchComesFirstWithItsConfidenceAndTheOthersFollowOnTheSameScale() throws {
        let catalogue = try MatchConfidenceTests.languageShelf()
        defer { catalogue.remove() }
        let matcher = CatalogueMatcher(
            index: try CatalogueIndex.open(catalogue: catalogue.path), options: MatchingOptions(useTags: false))
        let assigned = try matcher.assign(Self.spines)
        let read = try matcher.assignWithCandidates(Self.spines, keep: 5)
        #expect(read.count == Self.spines.count)
        // The same matches as the assignment alone.
        #expect(read.map(\.match) == assigned)
        for (spine, result) in zip(Self.spines, read) {
            #expect(result.candidates.count <= 5)
            if let match = result.match {
                #expect(
                    result.candidates.contains { $0.entry == match.entry && $0.confidence == match.confidence },
                    "\(spine)")
            }
            // Each book once, each confidence a probability, best first.
            let books = result.candidates.map { "\($0.entry.title)|\($0.entry.authors)" }
            #expect(Set(books).count == books.count, "\(spine): \(books)")
            #expect(result.candidates.allSatisfy { (0...1).contains($0.confidence) })
            let confidences = result.candidates.map(\.confidence)
            #expect(confidences == confidences.sorted(by: >), "\(spine)")
        }
        // The sure spine: its book first, at or above the review line.
        #expect(read[0].candidates.first?.entry.title == "Mecanoscrit del segon origen")
        #expect((read[0].candidates.first?.confidence ?? 0) >= 0.8)
        // Only the author legible: at least three books offered, his first, none of them sure.
        #expect(read[1].candidates.count >= 3, "\(read[1].candidates.map(\.entry.title))")
        #expect(read[1].candidates.allSatisfy { $0.confidence < 0.8 })
        #expect(read[1].candidates.first?.entry.authors.contains { $0.contains("Wells") } == true)
        // A spine with no words to search by has no candidates.
        #expect(read[3].candidates.allSatisfy { $0.confidence < 0.8 })
    }

    @Test func keepBoundsTheCandidatesAndZeroKeepsNone() throws {
        let catalogue = try MatchConfidenceTests.languageShelf()
        defer { catalogue.remove() }
        let matcher = CatalogueMatcher(
            index: try CatalogueIndex.open(catalogue: catalogue.path), options: MatchingOptions(useTags: false))
        #expect(try matcher.assignWithCandidates(Self.spines, keep: 0).allSatisfy(\.candidates.isEmpty))
        #expect(try matcher.assignWithCandidates(Self.spines, keep: 3).allSatisfy { $0.candidates.count <= 3 })
    }

    @Test func theShelfRecognizerReportsEverySpineWithItsCandidates() async throws {
        let catalogue = try MatchConfidenceTests.languageShelf()
        defer { catalogue.remove() }
        let matcher = CatalogueMatcher(
            index: try CatalogueIndex.open(catalogue: catalogue.path), options: MatchingOptions(useTags: false))
        let photo = ReadPhoto(
            width: 1000, height: 1000,
            lines: [
                TextLine(
                    text: "Mecanoscrit del segon origen",
                    polygon: [
                        .init(x: 100, y: 100), .init(x: 130, y: 100), .init(x: 130, y: 800), .init(x: 100, y: 800),
                    ],
                    score: 0.95),
                TextLine(
                    text: "H.S Wells",
                    polygon: [
                        .init(x: 600, y: 100), .init(x: 630, y: 100), .init(x: 630, y: 500), .init(x: 600, y: 500),
                    ],
                    score: 0.95),
            ])
        let recognizer = ShelfRecognizer(reader: FixedReader(photo: photo), matcher: matcher)
        let reading = try await recognizer.read(jpeg: [], candidates: 5) { _, _ in }
        let recognition = try await recognizer.recognize(jpeg: []) { _, _ in }
        #expect(reading.spines.count == recognition.books.count + recognition.unmatched.count)
        #expect(reading.spines.compactMap(\.match) == recognition.books.map(\.match))
        #expect(reading.spines.allSatisfy { !$0.candidates.isEmpty })
    }
}

private struct FixedReader: TextReading {
    let photo: ReadPhoto
    func read(jpeg: [UInt8]) async throws -> ReadPhoto { photo }
}
