import Foundation
import SwiftWingCore
import SwiftWingTesting
import Testing

/// The recognizer service (`swiftwing-recognizer serve`) as a real process on loopback, with the real daemon
/// uploading to it through its uplink: the books on the shelf photos land in the library.
final class RecognizerHarness: @unchecked Sendable {
    private(set) var port: Int
    let root: URL
    let logPath: String
    private(set) var process: Process?

    static let binary: String = {
        URL(fileURLWithPath: DaemonHarness.binary).deletingLastPathComponent().appendingPathComponent(
            "swiftwing-recognizer"
        ).path
    }()
    static let catalogue = ShippedFiles.sourceTree + "/Fixtures/library-dataset/catalogue.csv"

    /// Whether this machine can read photos: `serve --check` loads the catalogue and starts the OCR worker.
    static let readiness: (ready: Bool, reason: String) = {
        // Swift Testing evaluates every suite's enabled(if:) while planning, filtered out or not: the VM rig's guest,
        // which runs only the hardware suites of this bundle, would otherwise start the recognizer under emulation
        // and wait on it (it held camera-swift and gpio-kernel past their timeouts).
        if ProcessInfo.processInfo.environment["SWIFTWING_VM_GUEST"] == "1" {
            return (false, "not checked inside the VM rig's guest (these tests run on the host)")
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = ["serve", "--catalogue", catalogue, "--check", "--log-level", "error"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        do { try process.run() } catch { return (false, "\(binary) does not run: \(error)") }
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus == 0, text.trimmingCharacters(in: .whitespacesAndNewlines))
    }()

    init() throws {
        root = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent(
            "recognizer-it-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        logPath = root.appendingPathComponent("recognizer.log").path
        port = try BackendHarness.freePort()
    }

    deinit {
        if let process, process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(at: root)
    }

    var url: String { "http://127.0.0.1:\(port)/" }
    var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    /// Starts the service. The port was free when chosen, but the service binds it only after loading the catalogue
    /// and starting its OCR worker (seconds in a debug build), and a test running beside it may take it meanwhile:
    /// then it starts again on another port, up to three times.
    func start() throws {
        for attempt in 1...3 {
            _ = FileManager.default.createFile(atPath: logPath, contents: nil)
            do {
                process = try ServerLaunch.start(
                    "swiftwing-recognizer", executable: Self.binary,
                    arguments: ["serve", "--catalogue", Self.catalogue, "--host", "127.0.0.1", "--port", "\(port)"],
                    port: port, logPath: logPath, within: 120)
                return
            } catch let failure as ServerLaunch.Failure {
                guard case .exited = failure.reason, attempt < 3, failure.output.contains("Address already in use")
                else { throw HarnessError("\(failure)") }
            }
            port = try BackendHarness.freePort()
        }
        throw HarnessError("swiftwing-recognizer found its port taken three times:\n\(self.log)")
    }

    func stats() throws -> [String: Any] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
        process.arguments = ["-sS", "--max-time", "5", url + "_stats"]
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return try JSONSerialization.jsonObject(with: data) as? [String: Any] ?? [:]
    }
}

@Suite(.serialized) struct RecognizerServiceIntegrationTests {
    @Test(
        .enabled(
            if: RecognizerHarness.readiness.ready,
            "the recognizer cannot read photos on this machine (swiftwing-recognizer serve --check): \(RecognizerHarness.readiness.reason)"
        ))
    func pressesOnTheShelfPhotosBecomeCatalogueBooksThroughTheRecognizer() throws {
        let recognizer = try RecognizerHarness()
        try recognizer.start()
        let harness = try DaemonHarness(extraArguments: ["--backend", recognizer.url])
        harness.configText = """
            [backend]
            url = "\(recognizer.url)"
            probe_interval_seconds = 0.5
            round_interval_seconds = 2.0
            """
        // Full-size frames of the shelf photos: the daemon scales them to its upload size as on a kiosk.
        try harness.startDaemon(width: 4624, height: 3468)
        let (id, result) = harness.press()
        let scan = try #require(id, "press refused: \(result.error)")
        try harness.waitUntilDone([scan], within: 300)

        let stats = try recognizer.stats()
        #expect(stats["jobsCreated"] as? Int == 1)
        #expect(stats["jobsCompleted"] as? Int == 1, "\(recognizer.log.suffix(3000))")
        // Cleaned up by the daemon, the job is forgotten by the service.
        #expect((stats["cleanups"] as? [String])?.count == 1, "the daemon cleaned the job up")
        #expect(stats["jobsForgotten"] as? Int == 1 && (stats["jobStatus"] as? [String: String]) == [:])
        let library = try harness.library()
        #expect(!library.isEmpty, "no book read on a shelf photo; recognizer log:\n\(recognizer.log.suffix(3000))")
        // Every book in the library is a book of the catalogue (the recognizer matches nothing else).
        let catalogue = try String(contentsOfFile: RecognizerHarness.catalogue, encoding: .utf8)
        for book in library {
            #expect(
                catalogue.contains(book.title.trimmingCharacters(in: .whitespaces)),
                "\(book.title) is not in the catalogue")
        }

        let doctor = harness.run(["doctor", "--camera", "synthetic:\(Fixtures.shelves)"] + harness.commonArguments)
        #expect(
            doctor.output.contains(
                "ok   recognizer: \(recognizer.url) is a swiftwing-recognizer (catalogue catalogue.csv"),
            "\(doctor.output)")
    }

    @Test func doctorTellsARecognizerFromAnotherBackendAndSaysWhenTheLocalOneIsDown() throws {
        let backend = try BackendHarness()
        try backend.start()
        let harness = try DaemonHarness.forBackend(backend)
        harness.configText += "\nurl = \"\(backend.url)\"\n"
        let other = harness.run(["doctor", "--camera", "synthetic:\(Fixtures.shelves)"] + harness.commonArguments)
        #expect(
            other.output.contains("ok   recognizer: \(backend.url) is not a swiftwing-recognizer"), "\(other.output)")

        backend.stop()
        let down = harness.run(["doctor", "--camera", "synthetic:\(Fixtures.shelves)"] + harness.commonArguments)
        #expect(down.status == 1)
        #expect(down.output.contains("FAIL recognizer: nothing answers at \(backend.url)"), "\(down.output)")
        #expect(down.output.contains("systemctl enable --now swiftwing-recognizer"))
    }
}
