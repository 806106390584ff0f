import Foundation
import Store
import Testing

@testable import Appliance

@Suite("library show/edit/review: ISBN checks and output")
struct LibraryCommandTests {
    @Test("an ISBN typed with hyphens, spaces or as ISBN-10 is checked and gives both forms")
    func validISBNs() throws {
        let dune = try LibraryManagement.checkedISBN("978-0-441-01359-3")
        #expect(dune.isbn13 == "9780441013593" && dune.isbn10 == "0441013597")
        let old = try LibraryManagement.checkedISBN("0 441 01359 7")
        #expect(old.isbn13 == "9780441013593" && old.isbn10 == "0441013597")
        let recent = try LibraryManagement.checkedISBN("979-10-323-0569-0")
        #expect(recent.isbn13 == "9791032305690" && recent.isbn10 == nil)
    }

    @Test(
        "a wrong check digit is refused with the right one; what is no ISBN says what one looks like",
        arguments: [
            ("978-0-441-01359-4", "the last character should be 3"),
            ("0441013591", "the last character should be 7"),
            ("080442957-0", "the last character should be X"),
            ("9791032305691", "the last character should be 0"),
            ("4006381333931", "is not an ISBN"),
            ("12345", "is not an ISBN"),
            ("dune", "is not an ISBN"),
        ])
    func invalidISBNs(typed: String, advice: String) {
        #expect {
            try LibraryManagement.checkedISBN(typed)
        } throws: { error in
            (error as? ApplianceError)?.description.contains(advice) == true
        }
    }

    @Test("library --json carries needsReview, the reason and the review date; text names the reason")
    func listing() throws {
        var flagged = BookRecord(
            id: 7, title: "1984", confidence: nil, addedAt: Date(timeIntervalSince1970: 1_800_000_000),
            rawJSON: #"{"title":1984}"#, reviewReason: "title is a number (1984), not text")
        var doubtful = BookRecord(
            id: 8, title: "Dune", confidence: 0.64, addedAt: Date(timeIntervalSince1970: 1_800_000_000))
        let report = LibraryReport(books: [flagged, doubtful])
        let json = try #require(
            try JSONSerialization.jsonObject(with: Data(report.json().utf8)) as? [String: [[String: Any]]])
        #expect(json["books"]?.map { $0["needsReview"] as? Bool } == [true, true])
        #expect(json["books"]?[0]["reviewReason"] as? String == "title is a number (1984), not text")
        let text = report.text()
        #expect(text.contains("7     no ISBN        1984  [review: title is a number (1984), not text]"), "\(text)")
        #expect(text.contains("[review: confidence 64%]"), "\(text)")

        flagged.reviewedAt = Date(timeIntervalSince1970: 1_800_000_600)
        doubtful.confidence = 0.9
        let after = try #require(
            try JSONSerialization.jsonObject(with: Data(LibraryReport(books: [flagged, doubtful]).json().utf8))
                as? [String: [[String: Any]]])
        #expect(after["books"]?.map { $0["needsReview"] as? Bool } == [false, false])
        #expect(after["books"]?[0]["reviewedAt"] as? String == "2027-01-15T08:10:00Z")
    }

    @Test("show prints every field and the raw JSON indented; a book without one says why")
    func show() {
        let book = BookRecord(
            id: 3, isbn13: "9780441013593", title: "Dune", authors: ["Frank Herbert"], confidence: 0.5,
            rawJSON: #"{"confidence":"0.5","title":"Dune"}"#)
        let text = LibraryEntry(book).text()
        #expect(text.contains("ISBN-13:      9780441013593"))
        #expect(text.contains("needs review: yes — confidence 50%"))
        #expect(text.contains("raw JSON:\n  {\n    \"confidence\" : \"0.5\","), "\(text)")
        let barcode = BookRecord(id: 4, isbn13: "9780441013593", title: "")
        #expect(LibraryEntry(barcode).text().contains("(none: the book was not sent by the backend)"))
    }
}
