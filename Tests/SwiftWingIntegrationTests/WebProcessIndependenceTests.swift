import Foundation
import Testing

/// The real `swiftwing-web` beside the real daemon: a process the daemon never depends on.
final class WebHarness: @unchecked Sendable {
    static let binary: String = {
        URL(fileURLWithPath: DaemonHarness.binary).deletingLastPathComponent().appendingPathComponent("swiftwing-web")
            .path
    }()

    let daemon: DaemonHarness
    private(set) var process: Process?
    private(set) var port = 0

    init(beside daemon: DaemonHarness) {
        self.daemon = daemon
    }

    deinit { stop(signal: SIGKILL) }

    /// Starts `swiftwing-web` on a free loopback port and waits for its "listening" line.
    func start() throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.binary)
        process.arguments = daemon.commonArguments + ["--port", "0"]
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        self.process = process
        // Its own line names the port; log lines may come before it. The pipe is drained afterwards so that
        // logging never blocks the process.
        var printed = Data()
        let reader = out.fileHandleForReading
        var found: Int?
        while found == nil {
            let chunk = reader.availableData
            if chunk.isEmpty {
                throw HarnessError("swiftwing-web exited before listening: \(String(decoding: printed, as: UTF8.self))")
            }
            printed += chunk
            let text = String(decoding: printed, as: UTF8.self)
            if let range = text.range(
                of: #"swiftwing-web: listening on \S+ port [0-9]+\n"#, options: .regularExpression)
            {
                found = Int(
                    text[range].split(separator: " ").last?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "")
            }
        }
        // At the end of the pipe the handler is called again and again: it stops itself there.
        reader.readabilityHandler = { handle in if handle.availableData.isEmpty { handle.readabilityHandler = nil } }
        port = found ?? 0
    }

    func stop(signal: Int32) {
        guard let process, process.isRunning else { return }
        kill(process.processIdentifier, signal)
        process.waitUntilExit()
        self.process = nil
    }

    var base: String { "http://127.0.0.1:\(port)" }

    /// Pairs with a code from `swiftwing web pair`, as an operator on SSH would; returns the session cookie.
    func pair() throws -> String {
        let printed = daemon.run(["web", "pair"] + daemon.commonArguments)
        guard printed.status == 0, let range = printed.output.range(of: #"\b[0-9]{6}\b"#, options: .regularExpression)
        else { throw HarnessError("web pair failed: \(printed.output) \(printed.error)") }
        let answer = daemon.run(
            ["-s", "-i", "-d", "code=" + printed.output[range], base + "/pair"], executable: "/usr/bin/curl")
        guard
            let cookie = answer.output.split(separator: "\r\n").first(where: {
                $0.lowercased().hasPrefix("set-cookie:")
            })
            .flatMap({ $0.dropFirst("set-cookie:".count).split(separator: ";").first })
        else { throw HarnessError("pairing gave no cookie: \(answer.output)") }
        return cookie.trimmingCharacters(in: .whitespaces)
    }

    /// GETs `path` with the session cookie: the status code and the body.
    func get(_ path: String, cookie: String) -> (status: Int, body: String) {
        let answer = daemon.run(
            ["-s", "-H", "Cookie: " + cookie, "-w", "\n%{http_code}", base + path], executable: "/usr/bin/curl")
        let lines = answer.output.split(separator: "\n", omittingEmptySubsequences: false)
        return (Int(lines.last ?? "") ?? 0, lines.dropLast().joined(separator: "\n"))
    }
}

@Suite(.serialized) struct WebProcessIndependenceTests {
    /// Waits for `condition`, polling; a generous deadline for a busy machine.
    static func waitFor(_ what: String, within seconds: Double = 60, _ condition: () -> Bool) throws {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if condition() { return }
            Thread.sleep(forTimeInterval: 0.1)
        }
        throw HarnessError("timed out waiting for: \(what)")
    }

    @Test func killingTheWebProcessMidStreamChangesNothingForScanning() throws {
        let backend = try BackendHarness()
        try backend.start()
        defer { backend.stop() }
        let harness = try DaemonHarness.forBackend(
            backend, extraConfig: "[web]\nenabled = true\naddress = \"127.0.0.1\"\n")
        try harness.startDaemon()
        let web = WebHarness(beside: harness)
        try web.start()
        let cookie = try web.pair()
        #expect(web.get("/library", cookie: cookie).status == 200)

        // A live-status stream held open, as a phone on the Now page holds it.
        let stream = Process()
        stream.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
        stream.arguments = ["-s", "-N", "-H", "Cookie: " + cookie, web.base + "/events"]
        let streamed = Pipe()
        stream.standardOutput = streamed
        try stream.run()
        let received = LockedBytes()
        streamed.fileHandleForReading.readabilityHandler = { handle in
            let data = handle.availableData
            if data.isEmpty { handle.readabilityHandler = nil } else { received.append(data) }
        }
        try Self.waitFor("the first status event") { received.text.contains("event: status") }

        var pressed: [String] = []
        for _ in 0..<3 {
            let press = harness.press()
            pressed.append(try #require(press.id, "\(press.result.error)"))
        }
        // Killed mid-request: the stream open, scans queued and uploading.
        web.stop(signal: SIGKILL)
        stream.waitUntilExit()
        streamed.fileHandleForReading.readabilityHandler = nil

        let after = harness.press()
        pressed.append(try #require(after.id, "the daemon refused a press after the web process died: \(after.result)"))
        try harness.waitUntilDone(pressed)
        #expect(harness.statusJSON()["daemon"] != nil)

        // The web process starts again on the same files: the database reads, the session still holds, no lock
        // is left behind by the killed process.
        try web.start()
        let library = web.get("/library", cookie: cookie)
        #expect(library.status == 200)
        let books = try harness.library()
        #expect(!books.isEmpty)
        for book in books.prefix(3) where !book.title.isEmpty {
            let escaped = book.title.replacingOccurrences(of: "&", with: "&amp;")
                .replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: ">", with: "&gt;")
                .replacingOccurrences(of: "\"", with: "&quot;").replacingOccurrences(of: "'", with: "&#39;")
            #expect(library.body.contains(escaped), "\(book.title)")
        }
        #expect(web.get("/queue", cookie: cookie).status == 200)
        let code = try web.pair()
        #expect(web.get("/", cookie: code).status == 200)
        web.stop(signal: SIGTERM)
    }
}

/// Bytes a pipe's handler appends on its own queue while the test thread reads them.
final class LockedBytes: @unchecked Sendable {
    private let lock = NSLock()
    private var bytes = Data()

    func append(_ data: Data) { lock.withLock { bytes += data } }
    var text: String { lock.withLock { String(decoding: bytes, as: UTF8.self) } }
}
