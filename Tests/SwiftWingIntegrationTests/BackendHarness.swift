import Foundation
import SwiftWingTesting
import Testing

/// Runs the real reference backend (`talaria-reference`) as a child process on a loopback port, and
/// reads its `/_stats` and queues faults on `/_faults` with the real `curl` command.
final class BackendHarness: @unchecked Sendable {
    let port: Int
    let root: URL
    var arguments: [String]
    private(set) var process: Process?
    let logPath: String

    static let binary: String = {
        URL(fileURLWithPath: DaemonHarness.binary).deletingLastPathComponent().appendingPathComponent(
            "talaria-reference"
        ).path
    }()

    /// `arguments` are talaria-reference flags (faults per run, delays); tests use short delays.
    init(arguments: [String] = [], port: Int? = nil) throws {
        root = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent(
            "talaria-it-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        logPath = root.appendingPathComponent("backend.log").path
        self.arguments =
            ["--recognition-delay-ms", "200", "--retry-ms", "100", "--ping-interval-ms", "1000"] + arguments
        self.port = try port ?? Self.freePort()
    }

    deinit {
        stop(signal: SIGKILL)
        try? FileManager.default.removeItem(at: root)
    }

    var url: String { "http://127.0.0.1:\(port)/" }

    /// Starts it and waits for its own "listening" line and its port answering.
    func start() throws {
        do {
            process = try ServerLaunch.start(
                "talaria-reference", executable: Self.binary,
                arguments: ["--host", "127.0.0.1", "--port", "\(port)"] + arguments, port: port, logPath: logPath,
                within: 30)
        } catch let failure as ServerLaunch.Failure {
            throw HarnessError("\(failure)")
        }
    }

    func stop(signal: Int32 = SIGTERM) {
        guard let process, process.isRunning else { return }
        kill(process.processIdentifier, signal)
        process.waitUntilExit()
        self.process = nil
    }

    var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    /// `/_stats` as JSON.
    func stats() throws -> [String: Any] {
        let data = try curl(["-sS", "--max-time", "5", url + "_stats"])
        guard let object = try JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw HarnessError("/_stats is not a JSON object")
        }
        return object
    }

    func stat(_ key: String) -> Int { ((try? stats())?[key] as? Int) ?? -1 }

    /// Queues faults, each consumed by the next request of its kind.
    func queueFaults(_ faults: [String]) throws {
        let body = try JSONSerialization.data(withJSONObject: ["faults": faults])
        _ = try curl([
            "-sS", "--max-time", "5", "-X", "POST", "-H", "Content-Type: application/json",
            "--data-binary", String(decoding: body, as: UTF8.self), url + "_faults",
        ])
    }

    private func curl(_ arguments: [String]) throws -> Data {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
        process.arguments = arguments
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw HarnessError("curl \(arguments.joined(separator: " ")) exited with \(process.terminationStatus)")
        }
        return data
    }

    /// A port nothing listens on right now (bound and released), so a backend can come back on it.
    static func freePort() throws -> Int { try LoopbackSocket.freePort() }
}

extension DaemonHarness {
    /// A daemon configured for fast tests against `backend`.
    static func forBackend(_ backend: BackendHarness, extraConfig: String = "") throws -> DaemonHarness {
        let harness = try DaemonHarness(extraArguments: ["--backend", backend.url])
        harness.configText = """
            [backend]
            probe_interval_seconds = 0.5
            round_interval_seconds = 2.0
            stream_abandon_seconds = 6.0
            \(extraConfig)
            """
        return harness
    }

    /// Waits until `condition` holds for the queue listing.
    func waitForQueue(
        _ what: String, within seconds: Double = 60, sourceLocation: SourceLocation = #_sourceLocation,
        _ condition: ([QueueEntry]) -> Bool
    ) throws {
        let deadline = Date().addingTimeInterval(seconds)
        var last: [QueueEntry] = []
        while Date() < deadline {
            if let queue = try? queue() {
                last = queue
                if condition(queue) { return }
            }
            Thread.sleep(forTimeInterval: 0.1)
        }
        Issue.record(
            "timed out after \(seconds) s waiting for: \(what); queue: \(last.map { "\($0.id.prefix(8)) \($0.state) \($0.lastError ?? "")" })\n\(log.suffix(4000))",
            sourceLocation: sourceLocation)
        throw HarnessError("timed out waiting for: \(what)")
    }

    func waitUntilDone(_ ids: [String], within seconds: Double = 60, sourceLocation: SourceLocation = #_sourceLocation)
        throws
    {
        try waitForQueue("\(ids.count) scans done", within: seconds, sourceLocation: sourceLocation) { queue in
            ids.allSatisfy { id in queue.contains { $0.id == id && $0.state == "done" } }
        }
    }

    struct LibraryBook: Decodable {
        var isbn13: String?
        var title: String
        var scanId: String?
        var source: String?
        var enrichmentStatus: String?
    }

    func library() throws -> [LibraryBook] {
        let result = run(["library", "--json"] + commonArguments)
        guard result.status == 0 else { throw HarnessError("library --json failed: \(result.error)") }
        struct Listing: Decodable { var books: [LibraryBook] }
        return try JSONDecoder().decode(Listing.self, from: Data(result.output.utf8)).books
    }

    func statusJSON() -> [String: Any] {
        let output = run(["status", "--json"] + commonArguments).output
        return (try? JSONSerialization.jsonObject(with: Data(output.utf8))) as? [String: Any] ?? [:]
    }

    var connectivity: String? {
        ((statusJSON()["daemon"] as? [String: Any])?["uplink"] as? [String: Any])?["connectivity"] as? String
    }
}
