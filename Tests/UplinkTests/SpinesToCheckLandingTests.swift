import Foundation
import Imaging
import Store
import SwiftWingTesting
import Testing

@testable import Uplink

/// Spines the backend read but did not identify (docs/protocol.md §6) land as spines to check with the scan's books,
/// their pictures cut from the photo before it is deleted, over real HTTP on loopback and a real SQLite file.
@Suite struct SpinesToCheckLandingTests {
    static let unmatched = #"""
        "unmatched":[
          {"text":"CORRER PER SER FELIC","boundingBox":{"x":0.25,"y":0.1,"width":0.1,"height":0.8},
           "candidates":[
             {"title":"Correr per ser feliç","authors":["Haruki Murakami"],"isbn":"9788497871839","confidence":0.62,
              "source":"catalogue"},
             {"title":"Tòquio blues","authors":["Haruki Murakami"],"isbn":null,"confidence":0.21},
             {"title":"","confidence":0.2},
             {"title":"Kafka a la platja","author":"Haruki Murakami","confidence":5}]},
          {"text":"2018","boundingBox":{"x":1.5,"y":0.1,"width":0.2,"height":0.5}},
          {"boundingBox":{"x":0.1,"y":0.1,"width":0.1,"height":0.1}},
          {"text":"GUIA DE LA MUSCULACION"}
        ]
        """#.replacingOccurrences(of: "\n", with: "")

    static func completed(job: String, books: [String]) -> String {
        "id: 1\nevent: completed\ndata: {\"jobId\":\"\(job)\",\"status\":\"completed\",\"books\":[\(books.joined(separator: ","))],\(unmatched)}\n\n"
    }

    @Test("unidentified spines land with the books, each with its candidates and, where its box allows, its picture")
    func spinesLandFromTheCompletedEvent() async throws {
        let harness = try UplinkHarness { request, _ in
            if request.method == .post { return .response(status: 202, body: Talk.accepted(job: "job-1")) }
            if request.url.path.hasSuffix("/stream") {
                return .stream(chunks: [
                    Self.completed(
                        job: "job-1",
                        books: [
                            SpineKeepingTests.book(
                                isbn: "9780262033848", title: "Tall",
                                box: #"{"x":0.5,"y":0.5,"width":0.4,"height":0.1}"#)
                        ])
                ])
            }
            return .response(status: 204, body: "")
        }
        harness.start()
        let scan = try harness.queueScan(bytes: try SpineKeepingTests.photo())
        try await harness.eventually("the scan is done and its photo deleted") {
            try harness.scan(scan.id).state == .done
                && !FileManager.default.fileExists(atPath: harness.spool.path(of: scan.imagePath))
        }
        await harness.stop()

        #expect(try harness.database.library.books().map(\.title) == ["Tall"])
        let spines = try harness.database.spinesToCheck()
        // The spine without text is skipped; the one whose box lies outside the photo keeps no box.
        #expect(spines.map(\.text) == ["CORRER PER SER FELIC", "2018", "GUIA DE LA MUSCULACION"])
        #expect(spines.map(\.cropState) == [.kept, .none, .none])
        #expect(spines.allSatisfy { $0.scanID == scan.id && $0.jobID == "job-1" })
        let first = try #require(spines.first)
        // The candidate without a title is skipped; 5 (a percentage) reads as 0.05; a lone author is a list.
        #expect(first.candidates.map(\.title) == ["Correr per ser feliç", "Tòquio blues", "Kafka a la platja"])
        #expect(first.candidates.map(\.confidence) == [0.62, 0.21, 0.05])
        #expect(first.candidates[0].isbn13 == "9788497871839" && first.candidates[2].authors == ["Haruki Murakami"])
        // The picture is the bright band of the photo, cut as a book's spine is.
        let picture = try #require(try harness.database.spineCrop(id: first.id))
        #expect(picture.height == SpineCrop.longEdge)
        let decoded = try JPEGDecoder().decode(picture.jpeg)
        #expect(ImagingFixtures.luma(decoded, decoded.width / 2, decoded.height / 2) > 220, "the bright band")
        #expect(try harness.database.queue.reconcile(spool: harness.spool).isClean)
    }

    @Test("a stop between landing and cutting loses no spine: the next start cuts it, then removes the photo")
    func spinesLeftBehindAreCutAtTheNextStart() async throws {
        let photo = try SpineKeepingTests.photo()
        let harness = try UplinkHarness { request, _ in
            if request.method == .post { return .response(status: 202, body: Talk.accepted(job: "job-1")) }
            if request.url.path.hasSuffix("/stream") {
                return .stream(chunks: [Self.completed(job: "job-1", books: [])])
            }
            return .response(status: 204, body: "")
        }
        harness.start()
        let scan = try harness.queueScan(bytes: photo)
        try await harness.eventually("the scan is done and its photo deleted") {
            try harness.scan(scan.id).state == .done
                && !FileManager.default.fileExists(atPath: harness.spool.path(of: scan.imagePath))
        }
        await harness.stop()
        let id = try #require(try harness.database.spinesToCheck().first?.id)
        let cut = try #require(try harness.database.spineCrop(id: id))
        // As if the device had been killed right after the landing's transaction: no picture yet, the photo there.
        try await harness.database.writer.write { db in
            try db.execute(
                sql: """
                    UPDATE spineToCheck SET crop = NULL, cropWidth = NULL, cropHeight = NULL, cropState = 'pending'
                    WHERE boxX IS NOT NULL
                    """)
        }
        _ = try harness.spool.write(jpeg: photo, for: scan.id)
        #expect(try harness.database.queue.reconcile(spool: harness.spool).photosKeptForSpines == [scan.id])

        harness.start()
        try await harness.eventually("the spine's picture is kept and the photo removed") {
            try harness.database.spineCrop(id: id) != nil
                && !FileManager.default.fileExists(atPath: harness.spool.path(of: scan.imagePath))
        }
        await harness.stop()
        #expect(try harness.database.spineCrop(id: id) == cut)
        #expect(try harness.database.spinesToCheck().count == 3)
        #expect(try harness.database.queue.reconcile(spool: harness.spool).isClean)
    }

    @Test("more unidentified spines than a photo may give are not landed: the scan needs attention")
    func tooManySpinesNeedAttention() async throws {
        let many = (0...200).map { #"{"text":"spine \#($0)"}"# }.joined(separator: ",")
        let harness = try UplinkHarness { request, _ in
            if request.method == .post { return .response(status: 202, body: Talk.accepted(job: "job-1")) }
            if request.url.path.hasSuffix("/stream") {
                return .stream(chunks: [
                    "id: 1\nevent: completed\ndata: {\"jobId\":\"job-1\",\"status\":\"completed\",\"books\":[],\"unmatched\":[\(many)]}\n\n"
                ])
            }
            return .response(status: 204, body: "")
        }
        harness.start()
        let scan = try harness.queueScan()
        try await harness.eventually("the scan needs attention") { try harness.scan(scan.id).state == .needsAttention }
        await harness.stop()
        #expect(try harness.database.spinesToCheckCount() == 0)
        #expect(try harness.scan(scan.id).lastError?.contains("201 unidentified spines") == true)
    }
}
