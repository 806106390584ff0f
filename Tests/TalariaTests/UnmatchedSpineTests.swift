import Foundation
import Testing

@testable import Talaria

/// docs/protocol.md §6: the spines a backend read but did not identify, with their optional candidates, read from
/// the `completed` event and from §4's results; a backend that sends none, or no candidates, is read as before.
@Suite struct UnmatchedSpineTests {
    static let base = URL(string: "https://api.example.org/")!

    func decodeCompleted(_ data: String) -> JobCompletion? {
        var decoder = TalariaStreamDecoder(base: Self.base)
        guard case .completed(let completion)? = decoder.decode(SSEEvent(type: "completed", data: data)).event
        else { return nil }
        return completion
    }

    @Test func theCompletedEventCarriesSpinesWithAndWithoutCandidates() throws {
        let completion = try #require(
            decodeCompleted(
                #"""
                {"jobId":"j","status":"completed","books":[{"title":"Dune","confidence":0.9}],
                 "unmatched":[{"text":"  2018 ","boundingBox":{"x":0.1,"y":0.2,"width":0.05,"height":0.7}},
                   {"text":"H.S Wells","candidates":[{"title":"La màquina del temps","authors":["H. G. Wells"],
                     "isbn":"978-84-8256-767-7","confidence":0.41,"source":"catalogue"},{"title":null}]}]}
                """#))
        #expect(completion.books.map(\.title) == ["Dune"])
        #expect(completion.spines.map(\.text) == ["2018", "H.S Wells"])
        #expect(completion.spines[0].boundingBox == BoundingBox(x: 0.1, y: 0.2, width: 0.05, height: 0.7))
        #expect(completion.spines[0].candidates.isEmpty)
        let candidate = try #require(completion.spines[1].candidates.first)
        #expect(completion.spines[1].candidates.count == 1, "the candidate without a title is skipped")
        #expect(candidate.title == "La màquina del temps" && candidate.authors == ["H. G. Wells"])
        #expect(candidate.confidence == 0.41 && candidate.source == "catalogue")
        #expect(candidate.isbn13 == nil, "a checksum failure keeps the candidate without its ISBN")
    }

    @Test func aBackendWithoutSpinesIsReadAsBefore() throws {
        let plain = try #require(decodeCompleted(#"{"jobId":"j","status":"completed","books":[{"title":"Dune"}]}"#))
        #expect(plain.spines.isEmpty && plain.books.count == 1)
        let odd = try #require(decodeCompleted(#"{"jobId":"j","status":"completed","books":[],"unmatched":"none"}"#))
        #expect(odd.spines.isEmpty)
    }

    @Test func theResultsCarryTheSpinesToo() throws {
        let results = try JobResultsResponse.decode(
            Array(
                #"""
                {"success":true,"data":{"jobId":"j","status":"completed","results":[],
                 "unmatched":[{"text":"GUIA DE LA MUSCULACION","candidates":[{"title":"Guía de la musculación",
                   "author":"Delavier, Frédéric","isbn":"9788480196093","confidence":79}]}]}}
                """#.utf8))
        let spine = try #require(results.spines.first)
        #expect(spine.text == "GUIA DE LA MUSCULACION" && spine.boundingBox == nil)
        #expect(spine.candidates.first?.isbn13 == "9788480196093")
        #expect(spine.candidates.first?.confidence == 0.79)
        #expect(spine.candidates.first?.authors == ["Delavier, Frédéric"])
    }

    @Test func aSpinesCandidatesAreBoundedAndLongTextsCut() {
        let many = (1...12).map { #"{"title":"Book \#($0)"}"# }.joined(separator: ",")
        let long = String(repeating: "x", count: 5000)
        let (spine, warnings) = TalariaSpine.decode(
            try! JSONValue.parse(#"{"text":"\#(long)","candidates":[\#(many)]}"#, what: "a spine"))
        #expect(spine?.candidates.count == TalariaSpine.candidatesKept)
        #expect(spine?.text.count == TalariaSpine.textLimit)
        #expect(warnings.count == 2)
    }
}
