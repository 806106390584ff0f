import Foundation
import Imaging
import Store
import SwiftWingCore
import Synchronization
import Testing

@testable import WebInterface

/// The review page's spines to check (issue 34): each with its picture, the text read and its candidates as buttons;
/// one POST lands the book, "not a book" dismisses it, "none of these" types it. Over real loopback HTTP with the
/// daemon's real SQLite file.
@Suite struct SpineReviewPageTests {
    static let candidates = [
        SpineCandidateRecord(
            title: "The Dragonbone Chair", authors: ["Tad Williams"], isbn13: "9780756402693", confidence: 0.62,
            source: "catalogue"),
        SpineCandidateRecord(title: "Stone of Farewell", authors: ["Tad Williams"], confidence: 0.21),
        SpineCandidateRecord(title: "To Green Angel Tower", authors: ["Tad Williams"], confidence: 0.05),
    ]
    static let hostileText = "<img src=x onerror=alert(1)>"

    /// A done scan with `count` spines to check: the first with candidates and a kept picture, the second read as
    /// markup with none, the rest plain. Returns the spines and the first one's picture.
    static func land(_ device: WebDevice, count: Int = 2) throws -> ([SpineToCheck], [UInt8]) {
        let scan = try SpineCoverTests.queueScan(device, photo: nil)
        var spines = [
            NewSpineToCheck(
                text: "TAD WILLIAMS THE DRAGONBONE CHAIR", box: SpineBox(x: 0.2, y: 0.1, width: 0.05, height: 0.8),
                candidates: candidates),
            NewSpineToCheck(text: hostileText, box: nil, candidates: []),
        ]
        for number in spines.count..<max(count, spines.count) {
            spines.append(NewSpineToCheck(text: "SPINE \(number)", box: nil, candidates: Array(candidates.prefix(1))))
        }
        let landed = try device.database.completeScanMatchingTitles(
            scan, books: [], spines: spines, jobID: "job-1"
        ).spines
        let picture = try JPEGEncoder(quality: 80).encode(YUV420Frame(layout: YUV420Layout(width: 54, height: 320)))
        _ = try device.database.saveSpineCrops([
            SpinePicture(spineID: landed[0].id, jpeg: picture, width: 54, height: 320)
        ])
        return (landed, picture)
    }

    @Test func eachSpineShowsItsPictureTextAndCandidatesAsButtons() async throws {
        try await withWebDevice { device in
            let (cookie, _) = try await device.pair()
            let (spines, picture) = try Self.land(device)
            let page = try await device.get("/review", cookie: cookie)
            #expect(page.status == 200)
            let html = page.text
            #expect(html.contains("2 spines to check"))
            #expect(
                html.contains(#"<img src="/spines/\#(spines[0].id)/picture" alt="The spine as photographed, read as"#))
            #expect(html.contains("TAD WILLIAMS THE DRAGONBONE CHAIR"))
            // Each candidate is a button of the spine's one form, numbered as `swiftwing review list` numbers them.
            for (number, candidate) in zip(1..., Self.candidates) {
                #expect(
                    html.contains(
                        #"name="candidate" value="\#(number)" aria-label="It is \#(candidate.title) by Tad Williams"#))
            }
            #expect(html.contains("62 %"))
            #expect(html.contains(#"action="/spines/\#(spines[0].id)/dismiss""#))
            #expect(html.contains(#"href="/spines/\#(spines[0].id)""#))
            // The text read is the spine's, shown as text.
            #expect(html.contains(htmlEscaped(Self.hostileText)))
            #expect(!html.contains("<img src=x"))
            #expect(html.contains("No picture was kept of this spine."))

            let served = try await device.get("/spines/\(spines[0].id)/picture", cookie: cookie)
            #expect(served.status == 200)
            #expect(served.header("Content-Type") == "image/jpeg")
            #expect(served.body == picture)
            let tag = try #require(served.header("ETag"))
            let again = try await device.request(
                "GET", "/spines/\(spines[0].id)/picture", headers: [("Cookie", cookie), ("If-None-Match", tag)])
            #expect(again.status == 304)
            #expect(try await device.get("/spines/\(spines[1].id)/picture", cookie: cookie).status == 404)
            // Nothing without pairing, not even the picture.
            #expect(try await device.get("/spines/\(spines[0].id)/picture").status != 200)
        }
    }

    @Test func oneTapOnACandidateLandsTheBookAndTheSpineLeavesTheList() async throws {
        try await withWebDevice { device in
            let (cookie, csrf) = try await device.pair()
            let (spines, picture) = try Self.land(device)
            let answer = try await device.post(
                "/spines/\(spines[0].id)/pick", [("csrf", csrf), ("candidate", "2")], cookie: cookie)
            #expect(answer.status == 303, "\(answer.text)")
            let location = try #require(answer.header("Location"))
            #expect(location.hasPrefix("/review?picked="))
            let book = try #require(try device.database.library.books().first { $0.title == "Stone of Farewell" })
            #expect(book.authors == ["Tad Williams"])
            #expect(!book.needsReview)
            // The book has the spine's picture as its cover.
            #expect(try device.database.bookCover(id: try #require(book.id))?.jpeg == picture)
            #expect(try device.database.spinesToCheckCount() == 1)
            let after = try await device.get(location, cookie: cookie).text
            #expect(after.contains("Added “Stone of Farewell” to the library."))
            #expect(after.contains("1 spine to check"))
            #expect(!after.contains("/spines/\(spines[0].id)/pick"))

            // The same tap again (a second tap, a reload): refused in words, nothing added twice.
            let twice = try await device.post(
                "/spines/\(spines[0].id)/pick", [("csrf", csrf), ("candidate", "2")], cookie: cookie)
            #expect(twice.status == 422)
            #expect(twice.text.contains("was picked already"))
            #expect(twice.text.contains("it is no longer on the review page"))
            #expect(!twice.text.contains("swiftwing review"))
            #expect(try device.database.library.books().count == 1)
        }
    }

    @Test func notABookDismissesAndNoneOfTheseTypesTheBook() async throws {
        try await withWebDevice { device in
            let (cookie, csrf) = try await device.pair()
            let (spines, _) = try Self.land(device)
            let dismissed = try await device.post(
                "/spines/\(spines[1].id)/dismiss", [("csrf", csrf)], cookie: cookie)
            #expect(dismissed.status == 303)
            #expect(try device.database.spineToCheck(id: spines[1].id)?.state == .dismissed)
            #expect(
                try await device.get(try #require(dismissed.header("Location")), cookie: cookie).text
                    .contains("Spine \(spines[1].id) is not a book"))

            // "None of these": the spine's own page, its title field holding the text read.
            let own = try await device.get("/spines/\(spines[0].id)", cookie: cookie)
            #expect(own.status == 200)
            #expect(own.text.contains(#"<input id="title" name="title" value="TAD WILLIAMS THE DRAGONBONE CHAIR""#))
            #expect(own.text.contains(#"<label for="authors">"#))
            // A bad ISBN is refused with the reason, on the spine's page, and nothing lands.
            let bad = try await device.post(
                "/spines/\(spines[0].id)/pick",
                [
                    ("csrf", csrf), ("title", "The Dragonbone Chair"), ("authors", "Tad Williams"),
                    ("isbn", "9780756402694"),
                ],
                cookie: cookie)
            #expect(bad.status == 422)
            #expect(bad.text.contains(#"role="alert""#))
            #expect(bad.text.contains("TAD WILLIAMS THE DRAGONBONE CHAIR"))
            #expect(try device.database.library.books().isEmpty)
            let typed = try await device.post(
                "/spines/\(spines[0].id)/pick",
                [
                    ("csrf", csrf), ("title", "The Dragonbone Chair"), ("authors", "Tad Williams\nSomeone Else"),
                    ("isbn", "978-0-7564-0269-3"),
                ], cookie: cookie)
            #expect(typed.status == 303, "\(typed.text)")
            let book = try #require(try device.database.library.books().first)
            #expect(book.title == "The Dragonbone Chair")
            #expect(book.authors == ["Tad Williams", "Someone Else"])
            #expect(book.isbn13 == "9780756402693")
            #expect(try device.database.spinesToCheckCount() == 0)
            #expect(try await device.get("/review", cookie: cookie).text.contains("Every spine read is in the library"))
            // Without the form's check token nothing changes.
            #expect(try await device.post("/spines/\(spines[0].id)/dismiss", [], cookie: cookie).status == 403)
        }
    }

    @Test func manySpinesArePagedAndATapComesBackToItsPage() async throws {
        try await withWebDevice { device in
            let (cookie, csrf) = try await device.pair()
            let (spines, _) = try Self.land(device, count: 45)
            let first = try await device.get("/review", cookie: cookie).text
            #expect(first.contains("45 spines to check, 1–20 shown."))
            #expect(first.contains(#"href="/review?page=1" rel="next""#))
            #expect(first.components(separatedBy: #"class="spine-item""#).count - 1 == 20)
            let last = try await device.get("/review?page=2", cookie: cookie).text
            #expect(last.contains("41–45 shown."))
            #expect(last.components(separatedBy: #"class="spine-item""#).count - 1 == 5)
            #expect(!last.contains("rel=\"next\""))
            let tap = try await device.post(
                "/spines/\(spines[44].id)/pick", [("csrf", csrf), ("candidate", "1"), ("page", "2")], cookie: cookie)
            #expect(tap.header("Location")?.hasSuffix("&page=2") == true)
        }
    }

    @Test func wrongBookOnABooksPageMakesItAnotherCandidate() async throws {
        // An identified book as the recognizer sends it: the book itself first among its candidates (§6).
        let raw = #"""
            {"title":"The Dragonbone Chair","authors":["Tad Williams"],"isbn":"9780756402693","confidence":0.86,
             "candidates":[{"title":"The Dragonbone Chair","authors":["Tad Williams"],"isbn":"9780756402693","confidence":0.86},
                           {"title":"Stone of Farewell","authors":["Tad Williams"],"isbn":"9780756402976","confidence":0.42},
                           {"title":"<i>Tower</i>","authors":[],"confidence":0.05}]}
            """#
        let book = BookRecord(
            isbn13: "9780756402693", title: "The Dragonbone Chair", authors: ["Tad Williams"], publisher: "DAW",
            pageCount: 766, coverURL: "https://covers.example/1.jpg", confidence: 0.86, rawJSON: raw)
        let plain = BookRecord(isbn13: "9780441013593", title: "Dune", confidence: 0.9)
        try await withWebDevice(books: [book, plain]) { device in
            let (cookie, csrf) = try await device.pair()
            let page = try await device.get("/books/1", cookie: cookie).text
            #expect(page.contains("Wrong book?"))
            // The other two, not the book itself; markup in a title is text.
            #expect(
                page.contains(#"name="candidate" value="1" aria-label="It is Stone of Farewell by Tad Williams, 42 %""#)
            )
            #expect(page.contains(htmlEscaped("<i>Tower</i>")))
            #expect(!page.contains(#"aria-label="It is The Dragonbone Chair"#))
            #expect(!(try await device.get("/books/2", cookie: cookie).text.contains("Wrong book?")))

            let wrong = try await device.post("/books/1/replace", [("csrf", csrf), ("candidate", "5")], cookie: cookie)
            #expect(wrong.status == 422)
            #expect(wrong.text.contains("has 2 other candidates, not 5"))
            #expect(!wrong.text.contains("swiftwing library"))

            let answer = try await device.post(
                "/books/1/replace", [("csrf", csrf), ("candidate", "1")], cookie: cookie)
            #expect(answer.status == 303, "\(answer.text)")
            #expect(answer.header("Location") == "/books/1?replaced=1")
            let replaced = try #require(try device.database.library.book(id: 1))
            #expect(replaced.title == "Stone of Farewell" && replaced.authors == ["Tad Williams"])
            #expect(replaced.isbn13 == "9780756402976")
            // What was looked up for the wrong book goes with it.
            #expect(replaced.publisher == nil && replaced.pageCount == nil && replaced.coverURL == nil)
            #expect(!replaced.needsReview)
            #expect(
                try await device.get("/books/1?replaced=1", cookie: cookie).text.contains(
                    "Changed to the book you picked."))

            // Its alternatives are now the rest, the Dragonbone Chair first. Its ISBN is another book's by now: refused.
            let other = try device.database.library.insert(
                BookRecord(isbn13: "9780756402693", title: "The Dragonbone Chair", confidence: 0.9))
            let back = try await device.post("/books/1/replace", [("csrf", csrf), ("candidate", "1")], cookie: cookie)
            #expect(back.status == 422, "\(back.text)")
            #expect(back.text.contains("book \(other.id ?? 0)"))
            #expect(try device.database.library.book(id: 1)?.title == "Stone of Farewell")
        }
    }

    /// The recognizer's answer to a search, as a test double of the search (the real one is tested over loopback
    /// below and in RecognizerServiceTests).
    final class FixedSearch: BookSearching {
        let books: [SpineCandidateRecord]
        let failure: String?
        let asked = Mutex<[String]>([])
        init(books: [SpineCandidateRecord], failure: String? = nil) {
            self.books = books
            self.failure = failure
        }
        func search(_ text: String) async throws -> [SpineCandidateRecord] {
            asked.withLock { $0.append(text) }
            if let failure { throw RecognizerBookSearch.Failure(description: failure) }
            return books
        }
    }

    @Test func noneOfTheseSearchesWithTheTextReadAndATapOnAResultLandsIt() async throws {
        let search = FixedSearch(books: [
            SpineCandidateRecord(
                title: "The Dragonbone Chair", authors: ["Tad Williams"], isbn13: "9780756402693", confidence: 0.41,
                source: "catalogue"),
            SpineCandidateRecord(title: "Otherland", authors: ["Tad Williams", "A. N. Other"], source: "openlibrary"),
        ])
        try await withWebDevice(bookSearch: search) { device in
            let (cookie, csrf) = try await device.pair()
            let (spines, _) = try Self.land(device)
            let page = try await device.get("/spines/\(spines[0].id)", cookie: cookie).text
            // Searched at once with the text read, which stays in the search field to change.
            #expect(search.asked.withLock { $0 } == ["TAD WILLIAMS THE DRAGONBONE CHAIR"])
            #expect(page.contains(#"<input id="q" name="q" type="search" value="TAD WILLIAMS THE DRAGONBONE CHAIR""#))
            #expect(page.contains(#"aria-label="It is Otherland by Tad Williams, A. N. Other""#))
            #expect(page.contains("Open Library"))
            let again = try await device.get("/spines/\(spines[0].id)?q=otherland", cookie: cookie)
            #expect(again.status == 200)
            #expect(search.asked.withLock { $0.last } == "otherland")
            // A tap on a result sends its fields: the book lands with both authors, one a line.
            let answer = try await device.post(
                "/spines/\(spines[0].id)/pick",
                [("csrf", csrf), ("title", "Otherland"), ("authors", "Tad Williams\nA. N. Other"), ("isbn", "")],
                cookie: cookie)
            #expect(answer.status == 303, "\(answer.text)")
            #expect(try device.database.library.books().first?.authors == ["Tad Williams", "A. N. Other"])
        }
        try await withWebDevice(
            bookSearch: FixedSearch(books: [], failure: "the recognizer on this device did not answer")
        ) {
            device in
            let (cookie, _) = try await device.pair()
            let (spines, _) = try Self.land(device)
            let page = try await device.get("/spines/\(spines[0].id)", cookie: cookie).text
            #expect(page.contains("the recognizer on this device did not answer: type the book below instead."))
            #expect(page.contains(#"<input id="title" name="title""#))
        }
        // No recognizer on this machine: no search, and the page says why.
        try await withWebDevice { device in
            let (cookie, _) = try await device.pair()
            let (spines, _) = try Self.land(device)
            let page = try await device.get("/spines/\(spines[0].id)", cookie: cookie).text
            #expect(page.contains("The search needs the recognizer on this device"))
            #expect(!page.contains(#"role="search""#))
        }
    }

    @Test func theSearchAsksOnlyThisMachinesRecognizerAndReadsItsAnswerTolerantly() throws {
        #expect(RecognizerBookSearch(backendURL: "http://127.0.0.1:8788") != nil)
        #expect(
            RecognizerBookSearch(backendURL: "http://localhost:8788/")?.endpoint.absoluteString
                == "http://localhost:8788/v3/books/search")
        // Another machine, or https (a remote backend): the text read is not sent there without its key.
        #expect(RecognizerBookSearch(backendURL: "https://talaria.example") == nil)
        #expect(RecognizerBookSearch(backendURL: "http://192.168.1.5:8788") == nil)
        #expect(RecognizerBookSearch(backendURL: "http://127.0.0.1.evil.example") == nil)
        #expect(RecognizerBookSearch(backendURL: nil) == nil)
        let body = #"""
            {"books":[{"title":"Dune","authors":["Frank Herbert"],"isbn":"9780441013593","confidence":0.7},
                      {"title":"","authors":[]},{"title":"Bad ISBN","isbn":"9780441013594","confidence":7},
                      {"authors":["no title"]}]}
            """#
        let books = try RecognizerBookSearch.books(in: Array(body.utf8))
        #expect(books.map(\.title) == ["Dune", "Bad ISBN"])
        #expect(books[0].isbn13 == "9780441013593" && books[0].isbn10 == "0441013597" && books[0].confidence == 0.7)
        #expect(books[1].isbn13 == nil && books[1].confidence == nil)
        #expect(throws: RecognizerBookSearch.Failure.self) { try RecognizerBookSearch.books(in: Array("<html>".utf8)) }
    }
}
