import Foundation
import Testing

@testable import Talaria

private let base = URL(string: "https://api.example.org/")!

@Suite("Stream events (docs/protocol.md §2)")
struct StreamEventTests {
    private func decodeAll(_ events: [SSEEvent]) -> (events: [TalariaEvent], warnings: [TalariaWarning]) {
        var decoder = TalariaStreamDecoder(base: base)
        var out: [TalariaEvent] = []
        var warnings: [TalariaWarning] = []
        for event in events {
            let decoded = decoder.decode(event)
            warnings += decoded.warnings
            if let event = decoded.event { out.append(event) }
        }
        return (out, warnings)
    }

    @Test("the recorded job stream: every alias, the bad event and bad books skipped, one terminal event")
    func recordedStream() throws {
        let (events, warnings) = decodeAll(parse(Fixtures.jobStream).events)
        // 14 SSE events: the unknown one and the duplicate terminal are dropped, the malformed one skipped.
        #expect(events.count == 11)
        guard case .progress(let first) = events[0], case .progress(let second) = events[1],
            case .progress(let third) = events[3]
        else {
            Issue.record("expected progress events, got \(events)")
            return
        }
        #expect(first.fraction == 0)
        #expect(first.message == nil)
        #expect(second.fraction == 0.1)
        #expect(third.fraction == 0.35)  // 0–100 scale
        #expect(third.totalCount == 5)
        #expect(events[2] == .ping)
        guard case .result(let books, _, _) = events[4] else { Issue.record("\(events[4])"); return }
        #expect(books.map(\.title) == ["Dune"])  // a bare book
        guard case .result(let none, let status, let message) = events[5] else { Issue.record("\(events[5])"); return }
        #expect(none.isEmpty)  // status-only result
        #expect(status == .processing)
        #expect(message == "Enriching 4 more books")
        guard case .enrichmentDegraded(let isbn, _, let reason, let fallback) = events[6] else { return }
        #expect(isbn == "9780547928227" && reason == "PROVIDER_TIMEOUT" && fallback == "cache")
        guard case .result(let hobbit, _, _) = events[7] else { Issue.record("\(events[7])"); return }
        #expect(hobbit.map(\.isbn13) == ["9780547928227"])  // two bad books skipped, the good one kept
        guard case .completed(let completion) = events[10] else { Issue.record("\(events[10])"); return }
        #expect(completion.booksIncluded)
        #expect(completion.books.count == 6)
        #expect(completion.resultsURL?.absoluteString
            == "https://api.example.org/v3/jobs/scans/7f3c9a2e-5b1d-4c8e-9f00-2a6b8c4d1e01/results")
        let text = warnings.map(\.message).joined(separator: "\n")
        #expect(text.contains("not a JSON object"))  // "not a book"
        #expect(text.contains("neither a title nor a valid ISBN"))  // {"confidence":0.2}
        #expect(text.contains("is not JSON"))  // event id 8
        #expect(text.contains("second terminal event"))
        #expect(text.contains("9780441013594"))  // Children of Dune's bad checksum
    }

    @Test("aliases: complete/completed, error/failed, both failure shapes, timeout, ping")
    func aliases() {
        let (events, _) = decodeAll([
            SSEEvent(type: "complete", data: #"{"status":"completed","books":[]}"#),
        ])
        #expect(events == [.completed(JobCompletion(status: .completed, books: [], booksIncluded: true, resultsURL: nil))])
        let (failed, _) = decodeAll([SSEEvent(type: "error", data: #"{"jobId":"j","error":{"code":"PROVIDER_ERROR","message":"x","retryable":true}}"#)])
        #expect(failed == [.failed(JobFailure(code: "PROVIDER_ERROR", message: "x", retryable: true))])
        let (flat, _) = decodeAll([SSEEvent(type: "failed", data: #"{"code":"CANCELED","message":"by user"}"#)])
        guard case .failed(let failure) = flat.first else { Issue.record("\(flat)"); return }
        #expect(failure.isCanceled)
        #expect(!failure.retryable)
        let (timeout, _) = decodeAll([SSEEvent(type: "timeout", data: #"{"error":{"code":"STREAM_TIMEOUT","retryable":true}}"#)])
        #expect(timeout == [.timeout(JobFailure(code: "STREAM_TIMEOUT", message: nil, retryable: true))])
        #expect(!TalariaEvent.timeout(JobFailure(code: nil, message: nil, retryable: true)).isTerminal)
        let (ping, warnings) = decodeAll([SSEEvent(type: "ping", data: "")])
        #expect(ping == [.ping])
        #expect(warnings.isEmpty)
    }

    @Test("a stripped completed event says so, so the results are fetched (§4)")
    func strippedCompletion() {
        let (events, _) = decodeAll([SSEEvent(type: "completed", data: #"{"jobId":"j","status":"completed","summary":{"total":3}}"#)])
        guard case .completed(let completion) = events.first else { Issue.record("\(events)"); return }
        #expect(!completion.booksIncluded)
    }

    @Test("unknown events are ignored without a warning; an event named inside the data is understood")
    func unknownAndNamedInData() {
        let (events, warnings) = decodeAll([
            SSEEvent(type: "vision_debug", data: "{}"),
            SSEEvent(type: "message", data: #"{"type":"progress","progress":0.5}"#),
        ])
        #expect(warnings.isEmpty)
        #expect(events == [.progress(JobProgress(status: nil, fraction: 0.5))])
    }

    @Test("progress: once a value above 1 is seen, 1 means 1 %")
    func progressScale() {
        let (events, _) = decodeAll([
            SSEEvent(type: "progress", data: #"{"progress":50}"#),
            SSEEvent(type: "progress", data: #"{"progress":1}"#),
            SSEEvent(type: "progress", data: #"{"progress":100}"#),
            SSEEvent(type: "progress", data: #"{"progress":250}"#),
        ])
        #expect(events.map { if case .progress(let p) = $0 { p.fraction } else { -1 } } == [0.5, 0.01, 1.0, nil])
    }
}

@Suite("ISBNs and books (docs/protocol.md §3)")
struct BookTests {
    @Test("ISBN-10 and ISBN-13 checksums")
    func checksums() {
        #expect(ISBN.isValidISBN13("9780441013593"))
        #expect(!ISBN.isValidISBN13("9780441013594"))
        #expect(!ISBN.isValidISBN13("4006381333931"))  // a valid EAN-13, not a book
        #expect(ISBN.isValidISBN13("9791032305690"))  // 979 prefix
        #expect(ISBN.isValidISBN10("0547928270"))
        #expect(ISBN.isValidISBN10("080442957X"))
        #expect(!ISBN.isValidISBN10("0804429570"))
        #expect(!ISBN.isValidISBN10("X804429570"))  // X only as the check digit
        #expect(!ISBN.isValidISBN10("054792827"))
    }

    @Test("normalisation to ISBN-13: hyphens, spaces, labels, x, ISBN-10 → 978; invalid and placeholders → nil")
    func normalisation() {
        #expect(ISBN.normalisedISBN13("978-0-441-01359-3") == "9780441013593")
        #expect(ISBN.normalisedISBN13(" 978 0441 013593 ") == "9780441013593")
        #expect(ISBN.normalisedISBN13("ISBN-13: 978-0-441-01359-3") == "9780441013593")
        #expect(ISBN.normalisedISBN13("0-547-92822-x") == "9780547928227")
        #expect(ISBN.normalisedISBN13("0-547-92827-0") == "9780547928272")
        #expect(ISBN.normalisedISBN13("080442957x") == "9780804429573")
        #expect(ISBN.normalisedISBN13("9780441013594") == nil)
        #expect(ISBN.normalisedISBN13("") == nil)
        #expect(ISBN.normalisedISBN13("unknown") == nil)
        #expect(ISBN.normalisedISBN13(nil) == nil)
        #expect(ISBN.isbn10(fromISBN13: "9780804429573") == "080442957X")
        #expect(ISBN.isbn10(fromISBN13: "9791032305690") == nil)
    }

    @Test("a full book: every field, raw JSON kept")
    func fullBook() throws {
        let json = try JSONValue.parse(#"""
            {"isbn":"054792822X","title":" The Hobbit ","authors":["J. R. R. Tolkien",""],"confidence":0.79,
             "format":"hardcover","publisher":"HMH","publicationYear":2012,"pageCount":300,
             "coverUrl":"https://c.example/h.jpg","enrichmentStatus":"success",
             "boundingBox":{"x":0.1,"y":0.2,"width":0.05,"height":0.7}}
            """#, what: "test")
        let (book, warnings) = TalariaBook.decode(json)
        let hobbit = try #require(book)
        #expect(warnings.isEmpty)
        #expect(hobbit.isbn13 == "9780547928227")
        #expect(hobbit.isbn10 == "054792822X")
        #expect(hobbit.title == "The Hobbit")
        #expect(hobbit.authors == ["J. R. R. Tolkien"])
        #expect(hobbit.publishedDate == "2012")
        #expect(hobbit.pageCount == 300)
        #expect(hobbit.boundingBox == BoundingBox(x: 0.1, y: 0.2, width: 0.05, height: 0.7))
        #expect(hobbit.enrichmentStatus == "success")
        #expect(try JSONValue.parse(hobbit.rawJSON, what: "raw") == json)  // lossless
    }

    @Test("tolerance: author string, enrichment.isbn13, placeholder ISBNs, unknown status kept as sent, % confidence")
    func tolerance() throws {
        func book(_ text: String) throws -> (TalariaBook?, [TalariaWarning]) {
            TalariaBook.decode(try JSONValue.parse(text, what: "test"))
        }
        let (nested, _) = try book(#"{"title":"Dune","author":"Frank Herbert","isbn":null,"enrichment":{"isbn13":"9780441013593"}}"#)
        #expect(nested?.isbn13 == "9780441013593")
        #expect(nested?.authors == ["Frank Herbert"])
        let (unknown, unknownWarnings) = try book(#"{"title":"X","isbn":"unknown","enrichmentStatus":"brand_new","confidence":85}"#)
        #expect(unknown?.isbn13 == nil)
        #expect(unknownWarnings.isEmpty)  // "unknown" is a placeholder, not a bad ISBN
        #expect(unknown?.enrichmentStatus == "brand_new")
        #expect(unknown?.confidence == 0.85)
        let (bad, badWarnings) = try book(#"{"title":"Children of Dune","isbn":"9780441013594","confidence":-3}"#)
        #expect(bad?.isbn13 == nil)
        #expect(bad?.confidence == nil)
        #expect(badWarnings.count == 2)
        // A bad top-level ISBN, a good nested one: the good one wins, no warning.
        let (rescued, rescuedWarnings) = try book(#"{"title":"Dune","isbn":"123","enrichment":{"isbn13":"9780441013593"}}"#)
        #expect(rescued?.isbn13 == "9780441013593")
        #expect(rescuedWarnings.isEmpty)
        let (authorObjects, _) = try book(#"{"title":"Good Omens","authors":[{"name":"Terry Pratchett"},{"name":"Neil Gaiman"}]}"#)
        #expect(authorObjects?.authors == ["Terry Pratchett", "Neil Gaiman"])
        let (isbnOnly, _) = try book(#"{"isbn":"9780441013593"}"#)
        #expect(isbnOnly?.title == "")
        let (nothing, why) = try book(#"{"confidence":0.9}"#)
        #expect(nothing == nil)
        #expect(why.first?.message.contains("neither a title nor a valid ISBN") == true)
    }
}
