import Foundation
import Store
import Talaria
import Testing

@testable import Uplink

/// The recorded job stream of the Talaria tests (progress, results with books, malformed and
/// unknown events, a duplicate terminal event).
private let recordedJobStream: [UInt8] = {
    let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../TalariaTests/Fixtures/talaria-job-stream.sse")
    guard let data = FileManager.default.contents(atPath: url.standardizedFileURL.path) else {
        fatalError("missing test fixture \(url.path)")
    }
    return Array(data)
}()

@Suite("Wire books into library records")
struct LibraryBooksTests {
    private let addedAt = Date(timeIntervalSince1970: 1_800_000_000)

    private func book(_ json: String) throws -> TalariaBook {
        try #require(TalariaBook.decode(try JSONValue.parse(json, what: "test")).book)
    }

    @Test("a record keeps every field and the raw JSON; below 0.8 or review_needed it needs review")
    func record() throws {
        let hobbit = try book(
            #"""
            {"isbn":"054792822X","title":"The Hobbit","authors":["J. R. R. Tolkien"],"confidence":0.79,
             "format":"hardcover","publisher":"HMH","publicationYear":2012,"pageCount":300,"enrichmentStatus":"success"}
            """#)
        let scanID = UUID()
        let record = hobbit.record(scanID: scanID, now: addedAt)
        #expect(record.isbn13 == "9780547928227")
        #expect(record.isbn10 == "054792822X")
        #expect(record.authors == ["J. R. R. Tolkien"])
        #expect(record.publishedDate == "2012")
        #expect(record.enrichmentStatus == .success)
        #expect(record.needsReview)
        #expect(record.scanID == scanID)
        #expect(record.addedAt == addedAt)
        #expect(record.rawJSON == hobbit.rawJSON)
        let confident = try book(#"{"title":"Dune","confidence":0.95,"enrichmentStatus":"REVIEW_NEEDED"}"#)
        #expect(confident.record(scanID: nil, now: addedAt).enrichmentStatus == .reviewNeeded)
        #expect(confident.record(scanID: nil, now: addedAt).needsReview)
    }

    @Test("an unknown or missing enrichment status reads as pending")
    func tolerantStatus() throws {
        let unknown = try book(#"{"title":"X","enrichmentStatus":"brand_new","confidence":85}"#)
        #expect(unknown.record(scanID: nil, now: addedAt).enrichmentStatus == .pending)
        #expect(!unknown.record(scanID: nil, now: addedAt).needsReview)
        let missing = try book(#"{"title":"Y","enrichment":{"status":"not_found"}}"#)
        #expect(missing.record(scanID: nil, now: addedAt).enrichmentStatus == .notFound)
        #expect(try book(#"{"title":"Z"}"#).record(scanID: nil, now: addedAt).enrichmentStatus == .pending)
    }

    @Test("title normalisation: case, subtitles, leading articles, spaces")
    func titleKey() {
        #expect(BookMatchKey.normaliseTitle("The Hobbit: or There and Back Again") == "hobbit")
        #expect(BookMatchKey.normaliseTitle("  A  Game of Thrones (A Song of Ice and Fire, #1)") == "game of thrones")
        #expect(BookMatchKey.normaliseTitle("An Instance of the Fingerpost - A Novel") == "instance of the fingerpost")
        #expect(BookMatchKey.normaliseTitle("Dune [Deluxe Edition]") == "dune")
        #expect(BookMatchKey.normaliseTitle("The") == "the")  // an article alone stays
        #expect(BookMatchKey.normaliseTitle("Theory of Everything") == "theory of everything")
        #expect(
            BookMatchKey.normaliseTitle("Harry Potter and the Philosopher’s Stone")
                == BookMatchKey.normaliseTitle("harry potter and the philosopher's stone"))
        #expect(BookMatchKey.normaliseTitle("Catch-22") == "catch 22")  // a hyphen without spaces is no subtitle
        #expect(BookMatchKey.normaliseAuthor("J.R.R. Tolkien") == BookMatchKey.normaliseAuthor("J. R. R.  Tolkien"))
        #expect(
            BookMatchKey(title: "The Hobbit", authors: ["J.R.R. Tolkien"])
                == BookMatchKey(title: "Hobbit: The Illustrated Edition", authors: ["j. r. r. tolkien", "Alan Lee"]))
        #expect(
            BookMatchKey(title: "The Hobbit", authors: ["Tolkien"])
                != BookMatchKey(title: "The Hobbit", authors: ["Lee"]))
        #expect(BookMatchKey(title: " : ", authors: []) == nil)
    }

    @Test("dedupe in one result list: by ISBN-13, else title + first author; higher confidence wins")
    func dedupeList() {
        let books = [
            TalariaBook(isbn13: "9780441013593", title: "Dune", authors: ["Frank Herbert"], confidence: 0.7),
            TalariaBook(title: "The Hobbit", authors: ["J. R. R. Tolkien"], confidence: 0.6),
            TalariaBook(
                isbn13: "9780441013593", title: "Dune", authors: ["Frank Herbert"], confidence: 0.9, publisher: "Ace"),
            TalariaBook(
                title: "Hobbit (Anniversary)", authors: ["J.R.R. Tolkien"], confidence: 0.5, format: "hardcover"),
            TalariaBook(title: "Dune", authors: ["Frank Herbert"], confidence: 0.4),  // ISBN-less sighting of Dune
            TalariaBook(isbn13: "9780593099322", title: "Dune", authors: ["Frank Herbert"]),  // another edition
        ]
        let unique = TalariaBook.deduplicated(books)
        #expect(unique.count == 3)
        #expect(unique[0].confidence == 0.9)
        #expect(unique[0].publisher == "Ace")
        #expect(unique[1].title == "The Hobbit")
        #expect(unique[1].format == "hardcover")  // filled from the duplicate
        #expect(unique[2].isbn13 == "9780593099322")
    }

    @Test("the recorded stream's completed books land once, matched by ISBN or title + author, even when sent twice")
    func completedBooksIntoLibrary() throws {
        let database = try AppDatabase.inMemory()
        // A book already in the library without ISBN: the stream's ISBN-less "Мастер и Маргарита" matches it.
        try database.library.insert(BookRecord(title: "Мастер и Маргарита: роман", authors: ["Михаил Булгаков"]))
        var stream = JobStream(jobID: "j", base: URL(string: "https://api.example.org/")!)
        stream.connected(now: addedAt)
        let completions = stream.receive(recordedJobStream[...], now: addedAt).compactMap { action -> [TalariaBook]? in
            if case .complete(let books, _) = action { books } else { nil }
        }
        let books = try #require(completions.first)
        let scanID = UUID()
        let scan = NewScan(
            id: scanID, pressedAt: .init(nanoseconds: 1), pressedWallAt: addedAt, frameAt: nil,
            image: SpooledImage(fileName: "\(scanID.uuidString.lowercased()).jpg", path: "/nowhere", size: 1),
            width: 1, height: 1)
        try database.queue.enqueue(scan)
        try database.queue.markUploading(scanID)
        try database.queue.recordJob(scanID, jobID: "j", streamURL: nil, statusURL: nil, jobToken: nil)
        let records = TalariaBook.deduplicated(books).map { $0.record(scanID: scanID, now: addedAt) }
        _ = try database.completeScanMatchingTitles(scanID, books: records)
        _ = try database.completeScanMatchingTitles(scanID, books: records)  // the terminal event again
        let library = try database.library.books()
        #expect(library.count == 6)  // 1 existing (matched) + 5 new
        #expect(library[0].title == "Мастер и Маргарита")  // merged into the existing row
        #expect(library[0].needsReview)  // confidence 0.64
        #expect(Set(library.compactMap(\.isbn13)) == ["9780441013593", "9780547928227", "9782070360024"])
        let children = try #require(library.first { $0.title == "Children of Dune" })
        #expect(children.isbn13 == nil)  // its ISBN failed the checksum
        #expect(children.needsReview)
        let norwegian = try #require(library.first { $0.title.hasPrefix("ノルウェイの森") })
        #expect(norwegian.enrichmentStatus == .pending)
        #expect(norwegian.rawJSON?.contains("weird_new_status") == true)
    }
}
