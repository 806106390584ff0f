import Foundation
import SwiftWingCore
import Testing

/// Runs the real `swiftwing` binary: the daemon as a child process, CLI commands to completion.
/// Everything on real files, a real Unix socket and a real SQLite database in a temp directory.
final class DaemonHarness: @unchecked Sendable {
    let root: URL
    let stateDirectory: String
    let socketPath: String
    var extraArguments: [String]
    private(set) var daemon: Process?
    private var daemonLog: FileHandle?
    let logPath: String

    static let binary: String = {
        if let path = ProcessInfo.processInfo.environment["SWIFTWING_BINARY"] { return path }
        let products = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for candidate in [products, products.deletingLastPathComponent()] {
            let path = candidate.appendingPathComponent("swiftwing").path
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        let package = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        return package.appendingPathComponent(".build/debug/swiftwing").path
    }()

    init(stateDirectory: String? = nil, extraArguments: [String] = []) throws {
        root = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent(
            "swiftwing-it-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        self.stateDirectory = stateDirectory ?? root.appendingPathComponent("state").path
        socketPath = root.appendingPathComponent("control.sock").path
        logPath = root.appendingPathComponent("daemon.log").path
        self.extraArguments = extraArguments
    }

    deinit {
        if let daemon, daemon.isRunning {
            kill(daemon.processIdentifier, SIGKILL)
            daemon.waitUntilExit()
        }
        try? FileManager.default.removeItem(at: root)
    }

    /// Arguments that point a command at this harness's state directory and socket, with no config file.
    var commonArguments: [String] {
        ["--config", configPath, "--state-dir", stateDirectory, "--control-socket", socketPath]
    }

    /// TOML for the daemon's config file (set before the first command).
    var configText = "# test\n"

    /// The config file (only `configText`), so a config in /etc on the test machine never leaks in.
    lazy var configPath: String = {
        let path = root.appendingPathComponent("swiftwing.toml").path
        _ = FileManager.default.createFile(atPath: path, contents: Data(configText.utf8))
        return path
    }()

    /// Starts `swiftwing run` on the synthetic camera and waits until the control socket answers.
    /// Waits for the camera to stream too unless `waitForCamera` is false (a camera meant to be missing).
    func startDaemon(
        camera: String = "synthetic:\(Fixtures.shelves)", width: Int = 1280, height: Int = 720,
        waitForCamera: Bool = true
    ) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.binary)
        process.arguments = ["run"] + commonArguments + ["--camera", camera, "--panel", "none"] + extraArguments
        var environment = ProcessInfo.processInfo.environment
        environment["SWIFTWING_CAMERA_WIDTH"] = "\(width)"
        environment["SWIFTWING_CAMERA_HEIGHT"] = "\(height)"
        environment["SWIFTWING_CAMERA_FRAMES_PER_SECOND"] = "30"
        // Tests never reach a public catalogue: barcode-only books are looked up on loopback, where
        // nothing listens unless a test sets its own catalogue (the device is then "offline" for it).
        if environment["SWIFTWING_ENRICHMENT_BASE_URL"] == nil && !configText.contains("[enrichment]") {
            environment["SWIFTWING_ENRICHMENT_BASE_URL"] = "http://127.0.0.1:9/"
        }
        environment.removeValue(forKey: "NOTIFY_SOCKET")
        process.environment = environment
        if !FileManager.default.fileExists(atPath: logPath) {
            _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        }
        let log = try FileHandle(forWritingTo: URL(fileURLWithPath: logPath))
        log.seekToEndOfFile()
        process.standardOutput = log
        process.standardError = log
        try process.run()
        daemon = process
        daemonLog = log
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline {
            if !process.isRunning {
                throw HarnessError("daemon exited with \(process.terminationStatus) during start:\n\(self.log)")
            }
            let status = run(["status", "--json"] + commonArguments).output
            if status.contains("\"running\" : true"), !waitForCamera || status.contains("streaming") { return }
            Thread.sleep(forTimeInterval: 0.1)
        }
        throw HarnessError("daemon did not answer on \(socketPath) within 60 s:\n\(self.log)")
    }

    func killDaemon(signal: Int32 = SIGKILL) {
        guard let daemon else { return }
        kill(daemon.processIdentifier, signal)
        daemon.waitUntilExit()
        self.daemon = nil
        try? daemonLog?.close()
        daemonLog = nil
    }

    var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    struct Result {
        var status: Int32
        var output: String
        var error: String
    }

    /// Runs a `swiftwing` command (or `executable`) to completion.
    @discardableResult
    func run(_ arguments: [String], environment extra: [String: String] = [:], executable: String? = nil) -> Result {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable ?? Self.binary)
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        environment.merge(extra) { $1 }
        process.environment = environment
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        do { try process.run() } catch { return Result(status: -1, output: "", error: "\(error)") }
        let output = out.fileHandleForReading.readDataToEndOfFile()
        let errors = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Result(
            status: process.terminationStatus, output: String(decoding: output, as: UTF8.self),
            error: String(decoding: errors, as: UTF8.self))
    }

    /// Presses the shutter; the scan id on success.
    func press() -> (id: String?, result: Result) {
        let result = run(["shutter"] + commonArguments)
        let id = result.output.trimmingCharacters(in: .whitespacesAndNewlines)
        return (result.status == 0 && UUID(uuidString: id) != nil ? id.lowercased() : nil, result)
    }

    struct QueueEntry: Decodable {
        var id: String
        var state: String
        var lastError: String?
        var jobId: String?
        var cleanupPending: Bool?
        var discardedAt: String?
        var imagePath: String
        var imageSize: Int
        var width: Int
        var height: Int
        var barcodes: [Barcode]?

        struct Barcode: Decodable {
            var format: String
            var text: String
        }
    }

    func queue() throws -> [QueueEntry] {
        let result = run(["queue", "--json"] + commonArguments)
        guard result.status == 0 else { throw HarnessError("queue --json failed: \(result.error)") }
        struct Listing: Decodable { var scans: [QueueEntry] }
        return try JSONDecoder().decode(Listing.self, from: Data(result.output.utf8)).scans
    }

    var spoolDirectory: String { stateDirectory + "/spool" }

    func spoolFiles() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: spoolDirectory)) ?? []).filter {
            !$0.hasPrefix(".") && $0 != "quarantine"
        }.sorted()
    }
}

struct HarnessError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

enum Fixtures {
    /// The shipped shelf photographs the synthetic camera replays.
    static let shelves = ShippedFiles.sourceTree + "/Fixtures/shelves"
}

let isRoot = getuid() == 0
