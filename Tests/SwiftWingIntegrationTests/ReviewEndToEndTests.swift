import Foundation
import SwiftWingCore
import Testing

/// Issue 34 end to end on real parts: the real daemon presses at the shelf photos, uploads to the real recognizer
/// (`swiftwing-recognizer serve` on loopback), and the spines it read but did not identify land as spines to check;
/// the owner then reviews them over SSH with `swiftwing review`, counted by `swiftwing status`, exported by
/// `swiftwing export --spines`.
@Suite(.serialized) struct ReviewEndToEndTests {
    struct Listing: Decodable {
        struct Candidate: Decodable {
            var title: String
            var confidence: Double?
        }
        struct Spine: Decodable {
            var id: Int
            var state: String
            var text: String
            var candidates: [Candidate]
            var hasPicture: Bool
        }
        var spines: [Spine]
    }

    struct Book: Decodable {
        var title: String
        var confidence: Double?
    }

    func books(_ harness: DaemonHarness) throws -> [Book] {
        let result = harness.run(["library", "--json"] + harness.commonArguments)
        guard result.status == 0 else { throw HarnessError("library --json failed: \(result.error)") }
        struct Listing: Decodable { var books: [Book] }
        return try JSONDecoder().decode(Listing.self, from: Data(result.output.utf8)).books
    }

    func list(_ harness: DaemonHarness, all: Bool = false) throws -> [Listing.Spine] {
        let result = harness.run(["review", "list", "--json"] + (all ? ["--all"] : []) + harness.commonArguments)
        guard result.status == 0 else { throw HarnessError("review list --json failed: \(result.error)") }
        return try JSONDecoder().decode(Listing.self, from: Data(result.output.utf8)).spines
    }

    @Test(
        .enabled(
            if: RecognizerHarness.readiness.ready,
            "the recognizer cannot read photos on this machine (swiftwing-recognizer serve --check): \(RecognizerHarness.readiness.reason)"
        ))
    func unidentifiedSpinesLandWithTheirPicturesAndAreReviewedFromTheCommandLine() throws {
        let recognizer = try RecognizerHarness()
        try recognizer.start()
        let harness = try DaemonHarness(extraArguments: ["--backend", recognizer.url])
        harness.configText = """
            [backend]
            url = "\(recognizer.url)"
            probe_interval_seconds = 0.5
            round_interval_seconds = 2.0
            """
        try harness.startDaemon(width: 4624, height: 3468)
        let (id, result) = harness.press()
        let scan = try #require(id, "press refused: \(result.error)")
        try harness.waitUntilDone([scan], within: 300)

        let landed = try books(harness)
        print(
            "one press: \(landed.count) books, \(try list(harness).count) spines to check, "
                + "\(try list(harness).filter { $0.candidates.count >= 3 }.count) of them with >= 3 candidates")
        let spines = try list(harness)
        #expect(!spines.isEmpty, "no spine to check; recognizer log:\n\(recognizer.log.suffix(3000))")
        // A book lands only when sure: every book the recognizer sent is at or above the review line.
        #expect(landed.allSatisfy { ($0.confidence ?? 0) >= 0.8 }, "\(landed.map { ($0.title, $0.confidence) })")
        for spine in spines {
            #expect(spine.state == "to check" && !spine.text.isEmpty)
            // Best first. (A candidate may be sure when the photo's assignment gave that book to another spine.)
            let confidences = spine.candidates.map { $0.confidence ?? 0 }
            #expect(confidences == confidences.sorted(by: >), "\(spine.text): \(spine.candidates)")
        }
        #expect(spines.contains { $0.hasPicture }, "the spines' pictures were cut before the photo went")
        #expect(spines.contains { $0.candidates.count >= 3 }, "\(spines.map { ($0.text, $0.candidates.count) })")

        let status = harness.run(["status"] + harness.commonArguments)
        #expect(
            status.output.contains("\(spines.count) spine\(spines.count == 1 ? "" : "s") to check"), "\(status.output)")

        // One tap: the first spine with candidates is its first candidate; another is not a book.
        let picked = try #require(spines.first { !$0.candidates.isEmpty })
        let pick = harness.run(["review", "pick", "\(picked.id)", "1"] + harness.commonArguments)
        #expect(pick.status == 0, "\(pick.error)")
        #expect(pick.output.contains(picked.candidates[0].title), "\(pick.output)")
        #expect(try books(harness).contains { $0.title == picked.candidates[0].title })
        let again = harness.run(["review", "pick", "\(picked.id)", "1"] + harness.commonArguments)
        #expect(again.status != 0 && again.error.contains("picked already"), "\(again.error)")
        let outOfRange = harness.run(["review", "pick", "999999", "1"] + harness.commonArguments)
        #expect(outOfRange.status != 0 && outOfRange.error.contains("no spine has id 999999"), "\(outOfRange.error)")
        if let other = spines.first(where: { $0.id != picked.id }) {
            let dismiss = harness.run(["review", "dismiss", "\(other.id)"] + harness.commonArguments)
            #expect(dismiss.status == 0, "\(dismiss.error)")
        }
        let left = try list(harness)
        #expect(left.count == spines.count - min(2, spines.count))
        #expect(try list(harness, all: true).count == spines.count, "nothing read is lost: picked and dismissed stay")

        let csv = harness.run(["export", "--spines"] + harness.commonArguments)
        #expect(csv.status == 0, "\(csv.error)")
        let rows = csv.output.split(separator: "\r\n")
        #expect(rows.first?.hasPrefix("Spine Id,State,Text Read") == true)
        #expect(rows.count == spines.count + 1)
    }

    @Test(
        .enabled(
            if: RecognizerHarness.readiness.ready,
            "the recognizer cannot read photos on this machine (swiftwing-recognizer serve --check): \(RecognizerHarness.readiness.reason)"
        ))
    func aSIGKILLAsSoonAsTheSpinesLandLosesNoneOfThem() throws {
        let recognizer = try RecognizerHarness()
        try recognizer.start()
        let harness = try DaemonHarness(extraArguments: ["--backend", recognizer.url])
        harness.configText = """
            [backend]
            url = "\(recognizer.url)"
            probe_interval_seconds = 0.5
            round_interval_seconds = 2.0
            """
        try harness.startDaemon(width: 4624, height: 3468)
        let (id, result) = harness.press()
        let scan = try #require(id, "press refused: \(result.error)")
        // Killed the moment the landing's transaction is logged (the line comes before the cut): the pictures are
        // not cut yet, the photo is still there.
        let deadline = Date().addingTimeInterval(300)
        while !harness.log.contains("books landed in the library"), Date() < deadline {
            Thread.sleep(forTimeInterval: 0.001)
        }
        harness.killDaemon(signal: SIGKILL)
        let seen = try list(harness)
        try #require(!seen.isEmpty, "no spine landed; recognizer log:\n\(recognizer.log.suffix(3000))")
        let cutBeforeTheKill = seen.filter(\.hasPicture).count
        // Whether the kill fell between landing and cutting (0 pictures) or after the cut, said in the test's output.
        print("SIGKILL with \(seen.count) spines landed, \(cutBeforeTheKill) of them cut")

        try harness.startDaemon(width: 4624, height: 3468)
        let restartDeadline = Date().addingTimeInterval(120)
        var after: [Listing.Spine] = []
        while Date() < restartDeadline {
            after = try list(harness)
            if !harness.spoolFiles().contains(where: {
                $0.hasPrefix(scan) && $0.hasSuffix(".jpg") && !$0.contains("thumb")
            }),
                after.contains(where: \.hasPicture)
            {
                break
            }
            Thread.sleep(forTimeInterval: 0.2)
        }
        harness.killDaemon(signal: SIGTERM)
        // The same spines, none twice, and their pictures cut after the restart if the kill came first.
        #expect(after.map(\.id) == seen.map(\.id))
        #expect(after.map(\.text) == seen.map(\.text))
        #expect(after.filter(\.hasPicture).count >= cutBeforeTheKill)
        #expect(after.contains { $0.hasPicture }, "no picture after the restart: \(harness.log.suffix(3000))")
        #expect(try harness.queue().first { $0.id == scan }?.state == "done")
    }
}
