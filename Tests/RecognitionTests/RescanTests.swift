import Foundation
import Testing

/// The library grows its own catalogue: a second press at the same shelf, once the owner has confirmed its books,
/// matches them from the device's library (`read --library`, a SwiftWing export) before the open catalogue. Real
/// OCR lines of three MIT-licensed home-shelf photos (Fixtures/home-shelf-lines/README.md), their 26 annotated books.
@Suite("A second press after the owner confirmed the shelf")
struct RescanAfterConfirmingTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Fixtures/home-shelf-lines")
    static let photos = ["cv-book-svg-1", "cv-book-svg-2", "bookshelf-reader-api-1"]

    /// The annotated books per photo (title, authors "; "-joined), from shelf-books.csv.
    static func shelfBooks() throws -> [(photo: String, title: String, authors: String)] {
        let text = try String(contentsOf: fixtures.appendingPathComponent("shelf-books.csv"), encoding: .utf8)
        var books: [(String, String, String)] = []
        for line in text.split(separator: "\n").dropFirst() {
            // photo,"title",authors: the title may hold commas, the photo and the authors hold none.
            let photo = String(line.prefix { $0 != "," })
            let rest = line.dropFirst(photo.count + 1)
            let title: String
            let authors: String
            if rest.hasPrefix("\"") {
                let end = rest.dropFirst().firstIndex(of: "\"")!
                title = String(rest[rest.index(after: rest.startIndex)..<end])
                authors = String(rest[rest.index(after: end)...].dropFirst())
            } else {
                title = String(rest.prefix { $0 != "," })
                authors = String(rest.dropFirst(title.count + 1))
            }
            books.append((photo, title, authors))
        }
        return books
    }

    /// Runs `read` on the three photos' saved lines; per photo, the books that land without review (>= 0.8).
    func sureBooks(_ extra: [String], in folder: URL) throws -> [String: [String]] {
        let photos = Self.photos.map { folder.appendingPathComponent("\($0).jpg").path }
        let result = try ReadCommandTests().run(
            ["read", "--json", "--ocr-from", Self.fixtures.path] + extra + photos)
        #expect(result.status == 0, "\(result.errors)")
        var sure: [String: [String]] = [:]
        for image in result.output["images"] as? [[String: Any]] ?? [] {
            let name = URL(fileURLWithPath: image["file"] as? String ?? "").deletingPathExtension().lastPathComponent
            let books = image["books"] as? [[String: Any]] ?? []
            sure[name] = books.filter { ($0["confidence"] as? Double ?? 0) >= 0.8 }.compactMap {
                $0["title"] as? String
            }
        }
        return sure
    }

    /// (right, wrong) among the sure books, each annotated copy counted once.
    func score(_ sure: [String: [String]], against books: [(photo: String, title: String, authors: String)]) -> (
        right: Int, wrong: Int
    ) {
        var right = 0
        var wrong = 0
        for photo in Self.photos {
            var remaining = books.filter { $0.photo == photo }.map(\.title)
            for title in sure[photo] ?? [] {
                if let index = remaining.firstIndex(of: title) {
                    remaining.remove(at: index)
                    right += 1
                } else {
                    wrong += 1
                }
            }
        }
        return (right, wrong)
    }

    @Test func theConfirmedBooksLandWithoutReviewTheSecondTime() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rescan-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        // With saved lines the photos' bytes are not decoded: any file stands for each.
        for photo in Self.photos {
            try Data([0xFF, 0xD8, 0xFF, 0xD9]).write(to: folder.appendingPathComponent("\(photo).jpg"))
        }
        let books = try Self.shelfBooks()
        #expect(books.count == 26)

        // The first press, with no catalogue of the owner's: the open catalogue holds few of these books.
        let first = score(try sureBooks([], in: folder), against: books)

        // The owner confirms every book of the shelf; the device's library, exported, is what the next press
        // matches first (a book still awaiting review would be left out of it).
        var csv = "ISBN-13,ISBN-10,Title,Authors,Format,Publisher,Published Date,Pages,Confidence,Needs Review,"
        csv += "Added Date,Cover URL,Scan ID\r\n"
        // One row a book: the two framings of one shelf show the same copies.
        var listed = Set<String>()
        for book in books where listed.insert(book.title).inserted {
            let title = "\"" + book.title.replacingOccurrences(of: "\"", with: "\"\"") + "\""
            csv += ",,\(title),\"\(book.authors)\",,,,,0.5,false,2026-12-02T10:00:00Z,,\r\n"
        }
        let library = folder.appendingPathComponent("library.csv")
        try Data(csv.utf8).write(to: library)
        let second = score(try sureBooks(["--library", library.path], in: folder), against: books)

        // Measured: 4 of 26 the first time, 21 of 26 the second (the other five: one spine unreadable, one cut
        // in two, one merged with its neighbour, two whose title was not read: in review), none wrong either time.
        #expect(first.right <= 6 && second.right >= 21, "first \(first), second \(second)")
        #expect(first.wrong == 0 && second.wrong == 0, "first \(first), second \(second)")
    }
}
