import Foundation
import Testing

/// The uplink's main job and fault suite: the real daemon (synthetic camera) and the real reference
/// backend as separate processes on loopback, real HTTP through libcurl, a real SQLite queue.
@Suite(.serialized) struct UplinkEndToEndTests {
    /// ISBN-13 of an ISBN-10 or ISBN-13 as the backend sent it (the library stores ISBN-13).
    static func isbn13(_ raw: String) -> String {
        let digits = raw.filter { $0.isNumber || $0 == "X" }
        guard digits.count == 10 else { return digits }
        let core = "978" + digits.prefix(9)
        let sum = core.enumerated().reduce(0) { $0 + Int(String($1.element))! * ($1.offset % 2 == 0 ? 1 : 3) }
        return core + String((10 - sum % 10) % 10)
    }

    static func isValidISBN13(_ isbn: String) -> Bool {
        let digits = isbn.compactMap(\.wholeNumberValue)
        guard digits.count == 13, isbn.count == 13 else { return false }
        let sum = digits.prefix(12).enumerated().reduce(0) { $0 + $1.element * ($1.offset % 2 == 0 ? 1 : 3) }
        return (10 - sum % 10) % 10 == digits[12]
    }

    /// Every ISBN the backend returned for `jobs` (all of them when nil), as ISBN-13.
    static func backendISBNs(_ stats: [String: Any], jobs: Set<String>? = nil) -> Set<String> {
        let byJob = stats["booksByJob"] as? [String: [String]] ?? [:]
        return Set(byJob.filter { jobs?.contains($0.key) ?? true }.flatMap(\.value).map(isbn13))
    }

    @Test func scansGoOutOnlineQueueOfflineAndDrainWhenTheBackendReturns() throws {
        let backend = try BackendHarness()
        try backend.start()
        let harness = try DaemonHarness.forBackend(backend)
        try harness.startDaemon()

        // Online: three presses become books.
        var online: [String] = []
        for _ in 1...3 {
            let (id, result) = harness.press()
            try #require(id != nil, "press refused: \(result.error)")
            online.append(id!)
        }
        try harness.waitUntilDone(online)
        let firstStats = try backend.stats()
        #expect(firstStats["jobsCreated"] as? Int == 3)
        #expect((firstStats["cleanups"] as? [String])?.count == 3)
        #expect(harness.connectivity == "online")

        // Offline: the backend stops; presses keep queueing and the device says offline.
        backend.stop()
        var offline: [String] = []
        for _ in 1...4 {
            let (id, result) = harness.press()
            try #require(id != nil, "press refused while offline: \(result.error)")
            offline.append(id!)
        }
        try harness.waitForQueue("offline scans waiting") { queue in
            offline.allSatisfy { id in queue.contains { $0.id == id && $0.state == "queued" && $0.lastError != nil } }
        }
        #expect(harness.connectivity == "offline")

        // Back online: everything drains, each scan one job, books once.
        try backend.start()
        try harness.waitUntilDone(offline, within: 90)
        let stats = try backend.stats()
        #expect(stats["jobsCreated"] as? Int == 4)
        let perKey = stats["uploadsByIdempotencyKey"] as? [String: Int] ?? [:]
        #expect(Set(perKey.keys) == Set(offline))
        let library = try harness.library()
        #expect(library.count == Set(library.compactMap(\.isbn13)).count + library.filter { $0.isbn13 == nil }.count)
        let landed = Set(library.compactMap(\.isbn13))
        #expect(Self.backendISBNs(stats).isSubset(of: landed))
        #expect(Self.backendISBNs(firstStats).isSubset(of: landed))
        #expect(!harness.spoolFiles().contains { $0.hasSuffix(".jpg") }, "photos of done scans are deleted")
        #expect(!harness.log.contains("sk-"), "no secret in the log")
    }

    @Test func kill9DuringUploadStreamAndCleanupLosesNothingAndMakesNoSecondJob() throws {
        let backend = try BackendHarness(arguments: ["--recognition-delay-ms", "2500"])
        try backend.start()
        let harness = try DaemonHarness.forBackend(backend)
        try harness.startDaemon()

        // 1. During the upload: the server holds the request for 2 s.
        try backend.queueFaults(["upload:slow:2000"])
        let (duringUpload, _) = harness.press()
        let uploadID = try #require(duringUpload)
        let deadline = Date().addingTimeInterval(20)
        while backend.stat("uploads") < 1, Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        harness.killDaemon(signal: SIGKILL)
        try harness.startDaemon()
        try harness.waitUntilDone([uploadID])

        // 2. During the stream: the job takes 2.5 s; kill once the scan is analyzing.
        let (duringStream, _) = harness.press()
        let streamID = try #require(duringStream)
        try harness.waitForQueue("analyzing") { $0.contains { $0.id == streamID && $0.state == "analyzing" } }
        harness.killDaemon(signal: SIGKILL)
        try harness.startDaemon()
        try harness.waitUntilDone([streamID])

        // 3. Between the commit and the cleanup: the cleanup hangs 3 s; kill once the scan is done.
        try backend.queueFaults(["cleanup:slow:3000"])
        let (duringCleanup, _) = harness.press()
        let cleanupID = try #require(duringCleanup)
        try harness.waitUntilDone([cleanupID])
        harness.killDaemon(signal: SIGKILL)
        #expect(try harness.queue().first { $0.id == cleanupID }?.cleanupPending == true)
        try harness.startDaemon()
        try harness.waitForQueue("the owed cleanup is sent after the restart", within: 30) { queue in
            queue.first { $0.id == cleanupID }?.cleanupPending == false
        }

        let stats = try backend.stats()
        let jobs = stats["jobByIdempotencyKey"] as? [String: String] ?? [:]
        #expect(stats["jobsCreated"] as? Int == 3, "one job per scan, never two: \(jobs)")
        #expect(Set(jobs.keys) == [uploadID, streamID, cleanupID])
        #expect((stats["uploadsByIdempotencyKey"] as? [String: Int])?[uploadID] ?? 0 >= 1)
        #expect(stats["streamsOpened"] as? Int ?? 0 >= 3, "the interrupted stream was opened again")
        let queue = try harness.queue()
        #expect(queue.allSatisfy { $0.state == "done" && $0.cleanupPending == false })
        let library = try harness.library()
        #expect(Self.backendISBNs(stats).isSubset(of: Set(library.compactMap(\.isbn13))))
        #expect(library.count == Set(library.map { $0.isbn13 ?? $0.title }).count, "each book once")
    }

    /// One daemon, one backend, one fault per press: each ends with its books or a clear failure.
    @Test func everyBackendFaultEndsWithBooksOrAClearFailure() throws {
        // A real key on both sides: the backend demands it, the daemon reads it from a credential file.
        let keyDirectory = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent(
            "swiftwing-key-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: keyDirectory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: keyDirectory) }
        let key = "sk-live-" + UUID().uuidString.lowercased()
        let keyFile = keyDirectory.appendingPathComponent("api-key").path
        try Data((key + "\n").utf8).write(to: URL(fileURLWithPath: keyFile))
        let backend = try BackendHarness(arguments: ["--api-key-file", keyFile])
        try backend.start()
        let harness = try DaemonHarness.forBackend(backend, extraConfig: "api_key_file = \"\(keyFile)\"")
        try harness.startDaemon()

        func pressWith(_ faults: [String]) throws -> String {
            try backend.queueFaults(faults)
            let (id, result) = harness.press()
            return try #require(id, "press refused: \(result.error)")
        }
        func doneAfter(_ faults: [String], within: Double = 45) throws -> String {
            let id = try pressWith(faults)
            try harness.waitUntilDone([id], within: within)
            return id
        }
        func failedAfter(_ faults: [String], reasonContains: String) throws -> String {
            let id = try pressWith(faults)
            try harness.waitForQueue("\(faults) fails") { $0.contains { $0.id == id && $0.state == "failed" } }
            let entry = try #require(try harness.queue().first { $0.id == id })
            #expect(
                entry.lastError?.lowercased().contains(reasonContains.lowercased()) == true,
                "\(faults): \(entry.lastError ?? "")")
            #expect(FileManager.default.fileExists(atPath: harness.spoolDirectory + "/\(id).jpg"), "the photo is kept")
            return id
        }

        // Transient upload failures: retried within the round.
        for fault in ["upload:500", "upload:503", "upload:html", "upload:drop", "upload:slow:800"] {
            _ = try doneAfter([fault])
        }
        // 429 in every form: the device reports the pause, then the scan goes out.
        for fault in [
            "upload:429-ms:1500", "upload:429-seconds:2", "upload:429-date:2", "upload:429-reset:1500",
            "upload:429-legacy:2",
        ] {
            let id = try pressWith([fault])
            var sawPause = false
            let deadline = Date().addingTimeInterval(10)
            while !sawPause, Date() < deadline {
                sawPause = harness.connectivity == "rate-limited"
                Thread.sleep(forTimeInterval: 0.05)
            }
            #expect(sawPause, "\(fault): the device did not report rate-limited")
            try harness.waitUntilDone([id])
        }
        // Stream faults: resumed, polled or decoded tolerantly; books land once.
        let resumesBefore = backend.stat("resumes")
        _ = try doneAfter(["stream:drop-after:2"])
        #expect(backend.stat("resumes") > resumesBefore, "the dropped stream was resumed with Last-Event-ID")
        // A stream refused as a recognizer at its stream cap refuses it: opened again after its Retry-After (6 s),
        // not after the 5 s a stream without `retry:` waits.
        _ = try doneAfter(["stream:429:6"])
        #expect(
            harness.log.contains("in_s=6.0") && harness.log.contains("the stream answered HTTP 429, retry in 6 s"),
            "the refused stream waited for its Retry-After")
        for fault in [
            "stream:malformed", "stream:duplicate-terminal", "stream:results-key", "stream:complete-alias",
            "stream:progress-100", "stream:slow:500",
        ] {
            _ = try doneAfter([fault])
        }
        // A completion without its list: the books from the `result` events (or the results endpoint).
        _ = try doneAfter(["stream:stripped"])
        let pollsBefore = backend.stat("statusPolls")
        _ = try doneAfter(["stream:timeout-event"])
        _ = try doneAfter(["stream:huge-line"])
        #expect(backend.stat("statusPolls") > pollsBefore, "timeout event and 10 MB line fall back to polling")
        let badISBN = try doneAfter(["stream:bad-isbn"])
        let retried = try doneAfter(["stream:failed-retryable"])
        let jobs = try backend.stats()["jobByIdempotencyKey"] as? [String: String] ?? [:]
        #expect(jobs[retried] != nil && jobs.count >= 2)
        // No stream at all: polled, at most one status request per 2 s.
        _ = try doneAfter(["upload:envelope:status-only"])
        _ = try doneAfter(["upload:no-stream", "status:404"])
        // A stream that never ends is abandoned (6 s here) for polling.
        _ = try doneAfter(["stream:never-end"], within: 60)

        // Permanent failures keep the photo and say why; a retry sends it again.
        _ = try failedAfter(["upload:413"], reasonContains: "too large")
        _ = try failedAfter(["upload:400-invalid-file"], reasonContains: "refused the photo")
        _ = try failedAfter(["stream:failed"], reasonContains: "could not recognise")
        let unauthorized = try failedAfter(["upload:401"], reasonContains: "api key")
        #expect(harness.connectivity == "unauthorized")
        let retry = harness.run(["queue", "retry", unauthorized] + harness.commonArguments)
        #expect(retry.status == 0, "\(retry.error)")
        try harness.waitUntilDone([unauthorized])
        #expect(harness.connectivity == "online")

        // A person gives up on a failed scan: it leaves the lists of work and its photo is deleted.
        let giveUp = try failedAfter(["upload:413"], reasonContains: "too large")
        let discard = harness.run(["queue", "discard", giveUp] + harness.commonArguments)
        #expect(discard.status == 0, "\(discard.error)")
        #expect(try harness.queue().first { $0.id == giveUp }?.discardedAt != nil)
        #expect(!FileManager.default.fileExists(atPath: harness.spoolDirectory + "/\(giveUp).jpg"))
        let again = harness.run(["queue", "retry", giveUp] + harness.commonArguments)
        #expect(
            again.status != 0 && again.error.contains("discarded"), "a discarded scan cannot be retried: \(again.error)"
        )

        // The key never reaches a log.
        #expect(!harness.log.contains(key) && !backend.log.contains(key), "the API key leaked into a log")

        // The library: every book once; the book with a bad checksum kept, without an ISBN.
        let library = try harness.library()
        #expect(library.count == Set(library.map { $0.isbn13 ?? "title:" + $0.title }).count)
        // The book whose ISBN fails its checksum is kept without ISBN and matched by title + author
        // (here to the same book from an earlier scan of the same shelf): no invalid ISBN is stored.
        #expect(harness.log.contains("is not a valid ISBN-10/13"), "the bad ISBN is logged")
        #expect(library.allSatisfy { $0.isbn13.map(Self.isValidISBN13) ?? true })
        #expect(try harness.queue().first { $0.id == badISBN }?.state == "done")
        #expect(try harness.queue().allSatisfy { $0.state == "done" || $0.state == "failed" || $0.discardedAt != nil })
    }

    /// TLS through a real TLS server (socat with a self-signed certificate in front of the backend):
    /// refused while the certificate is not trusted (the scan waits, the reason says TLS), accepted
    /// once `backend.ca_file` names it.
    @Test func selfSignedTLSIsRefusedUntilItsCertificateIsTrusted() throws {
        let backend = try BackendHarness()
        try backend.start()
        let tlsPort = try BackendHarness.freePort()
        let front = Process()
        front.executableURL = URL(fileURLWithPath: "/bin/bash")
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("scripts/tls-front.sh").path
        front.arguments = [script, backend.root.path + "/tls", "\(tlsPort)", "\(backend.port)"]
        front.standardOutput = FileHandle.nullDevice
        front.standardError = FileHandle.nullDevice
        try front.run()
        defer {
            // SIGKILL: the test runner's blocked SIGTERM is inherited by its children.
            kill(front.processIdentifier, SIGKILL)
            front.waitUntilExit()
        }
        let certificate = backend.root.path + "/tls/cert.pem"
        let deadline = Date().addingTimeInterval(20)
        while !FileManager.default.fileExists(atPath: certificate), Date() < deadline {
            Thread.sleep(forTimeInterval: 0.05)
        }
        Thread.sleep(forTimeInterval: 0.3)

        let harness = try DaemonHarness(extraArguments: ["--backend", "https://127.0.0.1:\(tlsPort)/"])
        harness.configText = "[backend]\nprobe_interval_seconds = 0.5\nround_interval_seconds = 2.0\n"
        try harness.startDaemon()
        let (pressed, _) = harness.press()
        let id = try #require(pressed)
        try harness.waitForQueue("the upload refused over untrusted TLS") { queue in
            queue.contains { $0.id == id && $0.state == "queued" && ($0.lastError ?? "").contains("TLS") }
        }
        #expect(harness.connectivity == "offline")
        #expect(backend.stat("jobsCreated") == 0)
        harness.killDaemon(signal: SIGTERM)

        harness.configText += "ca_file = \"\(certificate)\"\n"
        try Data(harness.configText.utf8).write(to: URL(fileURLWithPath: harness.configPath))
        try harness.startDaemon()
        try harness.waitUntilDone([id])
        #expect(backend.stat("jobsCreated") == 1)
    }

    @Test func plainHTTPToAnotherHostIsRefusedWithAdvice() throws {
        let harness = try DaemonHarness(extraArguments: ["--backend", "http://192.0.2.10/"])
        #expect(throws: HarnessError.self) { try harness.startDaemon() }
        #expect(harness.log.contains("use https://"), "\(harness.log)")
    }
}
