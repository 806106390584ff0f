import Foundation
import Testing

/// `swiftwing library show|edit|delete|review` against the real daemon and the real reference
/// backend: a book the backend sends with fields of the wrong type lands flagged with its raw JSON,
/// and a person's changes go into the daemon's database while the daemon keeps landing scans.
@Suite(.serialized) struct LibraryManagementTests {
    private func books(_ harness: DaemonHarness, _ extra: [String] = []) throws -> [[String: Any]] {
        let result = harness.run(["library"] + extra + ["--json"] + harness.commonArguments)
        guard result.status == 0 else { throw HarnessError("library --json failed: \(result.error)") }
        let object = try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [String: Any]
        return object?["books"] as? [[String: Any]] ?? []
    }

    private func book(_ harness: DaemonHarness, id: Int) throws -> [String: Any]? {
        try books(harness).first { $0["id"] as? Int == id }
    }

    @Test func wrongTypesAreKeptForReviewAndAPersonFixesThemWhileTheDaemonRuns() throws {
        let backend = try BackendHarness()
        try backend.start()
        let harness = try DaemonHarness.forBackend(backend)
        try harness.startDaemon()

        // The backend sends its first book with a word for the confidence and a number for the authors.
        try backend.queueFaults(["stream:wrong-types"])
        let (pressed, pressResult) = harness.press()
        let scan = try #require(pressed, "press refused: \(pressResult.error)")
        try harness.waitUntilDone([scan])
        let landed = try books(harness).filter { ($0["scanId"] as? String)?.lowercased() == scan }
        let flagged = try #require(landed.first { ($0["reviewReason"] as? String)?.contains("confidence") == true })
        let flaggedID = try #require(flagged["id"] as? Int)
        #expect(flagged["needsReview"] as? Bool == true)
        #expect((flagged["reviewReason"] as? String)?.contains(#"confidence is text ("high"), not a number"#) == true)
        #expect((flagged["reviewReason"] as? String)?.contains("authors is a number (3)") == true)
        #expect(flagged["confidence"] == nil)
        #expect(flagged["authors"] as? [String] == [], "a number is not taken for an author's name")
        #expect((flagged["rawJSON"] as? String)?.contains(#""confidence":"high""#) == true, "the raw JSON is kept")
        #expect(try books(harness, ["review"]).contains { $0["id"] as? Int == flaggedID })

        // Both exports say so.
        let csv = harness.run(["export"] + harness.commonArguments)
        #expect(csv.status == 0, "\(csv.error)")
        let title = try #require(flagged["title"] as? String)
        let row = csv.output.split(separator: "\r\n").first { $0.contains(title) }
        // Every book's field is quoted (a spreadsheet split on ';' still sees one cell).
        #expect(row?.contains(#","true","#) == true, "the SwiftWing export marks the book: \(row ?? "no row")")
        let goodreads = harness.run(["export", "--format", "goodreads"] + harness.commonArguments)
        #expect(
            goodreads.output.split(separator: "\r\n").first { $0.contains(title) }?.contains("needs review") == true)

        // `show` prints every field and the raw JSON.
        let show = harness.run(["library", "show", "\(flaggedID)"] + harness.commonArguments)
        #expect(show.status == 0, "\(show.error)")
        #expect(show.output.contains("raw JSON:") && show.output.contains(#""high""#), "\(show.output)")
        #expect(show.output.contains("needs review: yes"), "\(show.output)")

        // Presses keep landing books while a person edits, approves and deletes.
        let backgroundPresses = PressedScans()
        let pressing = Thread {
            for _ in 1...4 {
                if let id = harness.press().id { backgroundPresses.append(id) }
                Thread.sleep(forTimeInterval: 0.3)
            }
            backgroundPresses.finished.signal()
        }
        pressing.start()
        let badISBN = harness.run(
            ["library", "edit", "\(flaggedID)", "--isbn", "978-0-441-01359-4"] + harness.commonArguments)
        #expect(badISBN.status != 0 && badISBN.error.contains("the last character should be 3"), "\(badISBN.error)")
        let edit = harness.run(
            [
                "library", "edit", "\(flaggedID)", "--title", "Checked Title", "--author", "A. Person", "--author",
                "B. Person",
            ]
                + harness.commonArguments)
        #expect(edit.status == 0, "\(edit.error)")
        for _ in 1...5 {
            let again = harness.run(["library", "edit", "\(flaggedID)", "--needs-review"] + harness.commonArguments)
            #expect(again.status == 0, "\(again.error)")
            let approve = harness.run(["library", "review", "--approve", "\(flaggedID)"] + harness.commonArguments)
            #expect(approve.status == 0, "\(approve.error)")
        }
        backgroundPresses.finished.wait()
        let scans = backgroundPresses.ids
        #expect(scans.count == 4)
        try harness.waitUntilDone(scans)

        let edited = try #require(try book(harness, id: flaggedID))
        #expect(edited["title"] as? String == "Checked Title")
        #expect(edited["authors"] as? [String] == ["A. Person", "B. Person"])
        #expect(edited["needsReview"] as? Bool == false)
        #expect(edited["reviewedAt"] != nil)
        #expect(try !books(harness, ["review"]).contains { $0["id"] as? Int == flaggedID })

        let delete = harness.run(["library", "delete", "\(flaggedID)"] + harness.commonArguments)
        #expect(delete.status == 0 && delete.output.contains("Checked Title"), "\(delete.error)")
        #expect(try book(harness, id: flaggedID) == nil)
        let missing = harness.run(["library", "show", "\(flaggedID)"] + harness.commonArguments)
        #expect(missing.status != 0 && missing.error.contains("no book with id \(flaggedID)"), "\(missing.error)")

        // With the daemon stopped the same commands work, and the daemon starts on the changed library.
        harness.killDaemon(signal: SIGTERM)
        let other = try #require(try books(harness).first?["id"] as? Int)
        let offline = harness.run(
            ["library", "edit", "\(other)", "--title", "Edited Offline"] + harness.commonArguments)
        #expect(offline.status == 0, "\(offline.error)")
        try harness.startDaemon()
        #expect(try book(harness, id: other)?["title"] as? String == "Edited Offline")
        let status = harness.statusJSON()
        let count = (status["library"] as? [String: Any])?["books"] as? Int
        #expect(count == (try books(harness).count))
    }
}

/// Scan ids pressed on another thread.
private final class PressedScans: @unchecked Sendable {
    private let lock = NSLock()
    private var pressed: [String] = []
    let finished = DispatchSemaphore(value: 0)

    func append(_ id: String) { lock.withLock { pressed.append(id) } }
    var ids: [String] { lock.withLock { pressed } }
}
