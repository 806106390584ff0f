import Foundation
import Testing

@testable import Talaria

@Suite("Status and results responses (docs/protocol.md §4)")
struct StatusAndResultsTests {
    @Test("status: aliases folded, progress in either scale, error read")
    func status() throws {
        let running = try JobStatusResponse.decode(
            #"{"success":true,"data":{"jobId":"j","status":"processing","progress":45}}"#.bytes)
        #expect(running.status == .processing)
        #expect(running.progress == 0.45)
        #expect(!running.status.isTerminal)
        let canceled = try JobStatusResponse.decode(
            #"{"data":{"status":"cancelled","error":{"code":"CANCELED"}}}"#.bytes)
        #expect(canceled.status == .canceled)
        #expect(canceled.status.isTerminal)
        #expect(canceled.error?.code == "CANCELED")
        #expect(JobStatus(tolerating: "Complete") == .completed)
        #expect(JobStatus(tolerating: "mystery") == .other("mystery"))
        #expect(throws: TalariaDecodingError.self) { try JobStatusResponse.decode("<html>".bytes) }
    }

    @Test("results: books under results or books, bad ones skipped with a warning")
    func results() throws {
        let body = #"""
            {"success":true,"data":{"jobId":"j","status":"completed","results":[
              {"isbn":"9780441013593","title":"Dune","authors":["Frank Herbert"],"confidence":0.97},
              42,
              {"title":"  ","isbn":""}
            ]}}
            """#
        let response = try JobResultsResponse.decode(body.bytes)
        #expect(response.status == .completed)
        #expect(response.books.map(\.title) == ["Dune"])
        #expect(response.warnings.count == 2)
        let books = try JobResultsResponse.decode(
            #"{"data":{"books":[{"title":"Emma","author":"Jane Austen"}]}}"#.bytes)
        #expect(books.books.first?.authors == ["Jane Austen"])
    }
}
