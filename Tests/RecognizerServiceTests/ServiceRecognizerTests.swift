import Foundation
import HTTPEngine
import Logging
import Recognition
import TalariaReferenceServer
import Testing

@testable import swiftwing_recognizer

@Suite struct ServiceRecognizerTests {
    static let logger = Logger(label: "test")
    static let hobbitSpine = spine("THE HOBBIT J.R.R. TOLKIEN", x: 0.1)
    static let unknownSpine = spine("GUIA DE LA MUSCULACION", x: 0.3)
    static let shelf = FixedShelfRecognizer { _ in
        ShelfRecognition(
            books: [
                book(
                    "Correr per ser feliç", ["Murakami, Haruki"], isbn: "9788497871839", confidence: 0.91,
                    spine: spine("Correr per ser felic", x: 0.5))
            ],
            unmatched: [hobbitSpine, unknownSpine])
    }

    @Test func catalogueMatchesBecomeBooksAndTheRestStayUnmatched() async throws {
        let recognizer = ServiceRecognizer(shelf: Self.shelf, openLibrary: nil, logger: Self.logger)
        let stages = StageLog()
        let result = try await recognizer.recognize(photo: []) { fraction, stage in await stages.add(fraction, stage) }
        #expect(result.books.count == 1)
        let book = try #require(result.books.first)
        #expect(
            book.title == "Correr per ser feliç" && book.isbn == "9788497871839" && book.authors == ["Murakami, Haruki"]
        )
        #expect(book.confidence == 0.91 && book.text == "Correr per ser felic" && book.source == "catalogue")
        #expect(book.boundingBox == BoundingBox(x: 0.5, y: 0.1, width: 0.05, height: 0.8))
        #expect(result.unmatched.map(\.text) == ["THE HOBBIT J.R.R. TOLKIEN", "GUIA DE LA MUSCULACION"])
        #expect(result.unmatched.first?.boundingBox.x == 0.1)
        #expect(await stages.entries.first?.stage == "reading")
    }

    @Test func unmatchedSpinesAreLookedUpInTheOpenSet() async throws {
        let engine = CurlEngine()
        defer { engine.shutdown() }
        try await withReferenceCatalogue { base in
            let recognizer = ServiceRecognizer(
                shelf: Self.shelf, openLibrary: OpenLibrarySearch(base: base, transport: engine), logger: Self.logger)
            let result = try await recognizer.recognize(photo: []) { _, _ in }
            let found = try #require(result.books.first { $0.source == "openlibrary" })
            #expect(
                found.title == "The Hobbit" && found.isbn == "9780547928227" && found.authors == ["J. R. R. Tolkien"])
            #expect(found.confidence < 0.8, "an open-set match always goes to review")
            #expect(found.text == "THE HOBBIT J.R.R. TOLKIEN" && found.boundingBox?.x == 0.1)
            #expect(result.unmatched.map(\.text) == ["GUIA DE LA MUSCULACION"])
        }
    }

    @Test func anOpenSetThatDoesNotAnswerLeavesTheSpinesUnmatched() async throws {
        // Port 9 (discard) has nothing listening on loopback: the lookup fails at once, the job does not.
        let engine = CurlEngine()
        defer { engine.shutdown() }
        let offline = OpenLibrarySearch(base: URL(string: "http://127.0.0.1:9")!, transport: engine)
        let recognizer = ServiceRecognizer(shelf: Self.shelf, openLibrary: offline, logger: Self.logger)
        let result = try await recognizer.recognize(photo: []) { _, _ in }
        #expect(result.books.map(\.source) == ["catalogue"])
        #expect(result.unmatched.count == 2)
    }

    @Test func theServiceRunsTheRecognizerOnARealShelfPhoto() async throws {
        let photo = try [UInt8](
            Data(contentsOf: repositoryRoot.appendingPathComponent("Fixtures/shelves/one_shelf.jpg")))
        let recognizer = ServiceRecognizer(shelf: Self.shelf, openLibrary: nil, logger: Self.logger)
        let settings = RecognitionService.Settings(catalogue: "/etc/swiftwing/catalogue.csv", books: 15228)
        var serving = settings
        serving.port = 0
        try await withRunning({ onRunning in
            RecognitionService.makeApplication(
                settings: serving, recognizer: recognizer, logger: Self.logger, onRunning: onRunning)
        }) { port in
            let base = URL(string: "http://127.0.0.1:\(port)")!
            let health = try json(try await fetch(base.appendingPathComponent("health")).body)
            #expect(health["service"] as? String == "swiftwing-recognizer")
            #expect(health["catalogue"] as? String == "catalogue.csv" && health["catalogueBooks"] as? String == "15228")
            #expect(
                try await fetch(base.appendingPathComponent("_faults"), method: "POST", body: Data("{}".utf8)).status
                    == 404)

            let accepted = try await upload(base, photo: photo, key: "scan-1")
            #expect(accepted.status == 202, "\(String(decoding: accepted.body, as: UTF8.self))")
            let data = try #require(try json(accepted.body)["data"] as? [String: Any])
            let streamPath = try #require(data["sseUrl"] as? String)
            let token = try #require(data["authToken"] as? String)
            let stream = try #require(URL(string: streamPath, relativeTo: base))
            let events = try await fetch(
                stream, headers: ["Accept": "text/event-stream", "Authorization": "Bearer \(token)"])
            let text = String(decoding: events.body, as: UTF8.self)
            #expect(text.contains("\"message\":\"reading\""), "\(text)")
            #expect(text.contains("event: completed"))
            #expect(text.contains("\"text\":\"Correr per ser felic\""))
            #expect(text.contains("\"unmatched\":[{\"boundingBox\""))

            // The photo cut after its first 64 KiB (headers and the start of the scan, no end): refused, no job.
            let cut = try await upload(base, photo: Array(photo.prefix(65536)), key: "cut")
            #expect(cut.status == 400 && String(decoding: cut.body, as: UTF8.self).contains("truncated"))
        }
    }
}

actor StageLog {
    var entries: [(fraction: Double, stage: String)] = []
    func add(_ fraction: Double, _ stage: String) { entries.append((fraction, stage)) }
}
