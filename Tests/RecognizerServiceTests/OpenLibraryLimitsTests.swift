import Foundation
import HTTPEngine
import SwiftWingTesting
import Testing

@testable import swiftwing_recognizer

/// Issue 36, point 5: what the open set answers is cut to what the device takes, so one huge field never makes
/// the kiosk refuse the whole job.
@Suite struct OpenLibraryLimitsTests {
    func search(answering json: String) -> OpenLibrarySearch {
        let backend = ScriptedBackend { _, _ in .response(status: 200, body: json) }
        return OpenLibrarySearch(base: URL(string: "http://127.0.0.1:9")!, transport: backend)
    }

    @Test func aHugeTitleManyAuthorsAndJunkISBNsAreCutToTheDevicesLimits() async throws {
        let title = "The Hobbit " + String(repeating: "long ", count: 13_000)  // 65 KiB
        let authors = (0..<50).map { "\"J. R. R. Tolkien \(String(repeating: "x", count: 5000))\($0)\"" }
        let json = """
            {"docs": [{"title": "\(title)", "author_name": [\(authors.joined(separator: ","))],
            "isbn": ["\(String(repeating: "9", count: 5000))", "97805479282x7", "9780547928227"]}]}
            """
        let found = try #require(try await search(answering: json).bestMatch(for: "THE HOBBIT TOLKIEN"))
        #expect(found.title.count <= 1000)
        #expect(found.title.hasPrefix("The Hobbit long"))
        #expect(found.authors.count == 10)
        #expect(found.authors.allSatisfy { $0.count <= 1000 })
        #expect(found.isbn == "9780547928227")
        // What the device would keep of this book stays far below its 64 KiB per book.
        let bytes = found.title.utf8.count + found.authors.reduce(0) { $0 + $1.utf8.count }
        #expect(bytes < 48 * 1024)
    }

    @Test func controlCharactersAreDroppedAndAnISBN10IsKept() async throws {
        let json =
            #"{"docs": [{"title": "The\u0000 Hobbit\u001b[2J", "author_name": ["Tolkien"], "isbn": ["054792822X"]}]}"#
        let found = try #require(try await search(answering: json).bestMatch(for: "THE HOBBIT TOLKIEN"))
        #expect(found.title == "The Hobbit[2J")
        #expect(found.isbn == "054792822X")
    }
}
