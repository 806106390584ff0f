import Foundation
import Testing

@testable import swiftwing_recognizer

/// What `serve` checks before it listens: a catalogue it cannot use stops it with the file and line.
@Suite struct ServeStartupTests {
    func write(_ text: String) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("catalogue-\(UUID().uuidString).csv")
            .path
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    func failure(_ text: String) throws -> String {
        let path = try write(text)
        defer { try? FileManager.default.removeItem(atPath: path) }
        do {
            try CatalogueFileCheck.check(path)
            return "accepted"
        } catch {
            #expect(error.description.hasPrefix(path), "\(error)")
            return String(error.description.dropFirst(path.count))
        }
    }

    @Test func emptyAndMalformedCataloguesAreRefusedWithTheirLine() throws {
        #expect(try failure("").hasPrefix(":1: the catalogue is empty"))
        #expect(try failure("\n\n").hasPrefix(":1: the catalogue is empty"))
        #expect(
            try failure("name,isbn\nDune,9780441172719\n").hasPrefix(
                ":1: the header has no 'title' column (it has: name, isbn)"))
        #expect(try failure("title,author,isbn\n").hasPrefix(":2: the catalogue has a header but no books"))
        #expect(
            try failure("title,author,isbn\nDune,\"Herbert, Frank\",9780441172719\n\"Unclosed,Someone,1\n").hasPrefix(
                ":3: a quoted field is not closed"))
        #expect(try failure("title,author\nDune,Herbert, Frank\n").hasPrefix(":2: 3 fields where the header has 2"))
        #expect(try failure("title,author\n\"A \"quoted\" title\",X\n").hasPrefix(":2: text after a closing quote"))
        #expect(try failure("title,author\n\"Two\nlines\",X\nDune,Herbert, Frank\n").hasPrefix(":4: 3 fields"))
        #expect(try failure("Title,Author\r\nDune,\"Herbert, Frank\"\r\n") == "accepted")
    }

    @Test func theDatasetCatalogueIsAccepted() throws {
        let books = try CatalogueFileCheck.check(
            repositoryRoot.appendingPathComponent("Fixtures/library-dataset/catalogue.csv").path)
        #expect(books > 15_000)
    }

    static var executable: URL? {
        let directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for candidate in [directory, directory.deletingLastPathComponent()] {
            let url = candidate.appendingPathComponent("swiftwing-recognizer")
            if FileManager.default.isExecutableFile(atPath: url.path) { return url }
        }
        return nil
    }

    /// Runs `serve` on an empty catalogue (it stops at once): its exit status and standard error.
    func serveOnAnEmptyCatalogue(_ arguments: [String]) throws -> (status: Int32, stderr: String, catalogue: String) {
        let path = try write("")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let process = Process()
        let executable = try #require(Self.executable, "swiftwing-recognizer is not built beside the tests")
        process.executableURL = executable
        process.arguments = ["serve", "--catalogue", path, "--port", "0"] + arguments
        let stderr = Pipe()
        process.standardOutput = FileHandle.nullDevice
        process.standardError = stderr
        try process.run()
        let message = String(decoding: stderr.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, message, path)
    }

    @Test func serveRefusesToStartOnAnEmptyCatalogue() throws {
        let (status, message, path) = try serveOnAnEmptyCatalogue([])
        #expect(status != 0)
        #expect(message.contains("\(path):1: the catalogue is empty"), "\(message)")
        #expect(!message.contains("anyone on that network"), "\(message)")
    }

    @Test func serveWarnsOnceWhenItListensBeyondLoopbackWithNoKey() throws {
        let (_, message, _) = try serveOnAnEmptyCatalogue(["--host", "0.0.0.0"])
        let warnings = message.split(separator: "\n").filter { $0.contains("anyone on that network can upload photos") }
        #expect(warnings.count == 1 && warnings.first?.contains("warning") == true, "\(message)")
        #expect(warnings.first?.contains("--api-key-file") == true)
    }

    @Test func theLimitsOfServeAreOptionsWithTheirDefaults() throws {
        let defaults = try ServeCommand.parse(["--catalogue", "c.csv"])
            .settings(catalogues: ["c.csv"], books: 1, apiKey: nil)
        #expect(defaults.idleTimeout == .seconds(30) && defaults.uploadDeadline == .seconds(120))
        #expect(defaults.maxStreamsPerJob == 4 && defaults.busyRetryAfterSeconds == 10)
        #expect(defaults.finishedJobRetention == .seconds(24 * 3600))

        let given = try ServeCommand.parse([
            "--catalogue", "c.csv", "--idle-timeout-seconds", "5", "--upload-deadline-seconds", "60",
            "--max-streams-per-job", "2", "--busy-retry-after-seconds", "3", "--forget-finished-jobs-after-hours", "2",
        ]).settings(catalogues: ["c.csv"], books: 1, apiKey: nil)
        #expect(given.idleTimeout == .seconds(5) && given.uploadDeadline == .seconds(60))
        #expect(given.maxStreamsPerJob == 2 && given.busyRetryAfterSeconds == 3)
        #expect(given.finishedJobRetention == .seconds(2 * 3600))
    }

    @Test func aLimitOutOfItsRangeIsRefusedWithAdvice() {
        let limits = [
            ("--idle-timeout-seconds", 86_400), ("--upload-deadline-seconds", 86_400), ("--max-streams-per-job", 1000),
            ("--busy-retry-after-seconds", 86_400), ("--forget-finished-jobs-after-hours", 8760),
            ("--max-waiting-photos", 1000), ("--max-megapixels", 1000), ("--recognition-timeout-seconds", 86_400),
        ]
        for (option, most) in limits {
            // Int.max: a product with it (pixels, nanoseconds, milliseconds) would trap.
            for value in [0, most + 1, Int.max] {
                do {
                    _ = try ServeCommand.parse(["--catalogue", "c.csv", option, "\(value)"])
                    Issue.record("\(option) \(value) was accepted")
                } catch {
                    let message = ServeCommand.message(for: error)
                    #expect(message.contains("\(option) must be from 1 to \(most) (got \(value)): "), "\(message)")
                }
            }
            #expect(throws: Never.self) { try ServeCommand.parse(["--catalogue", "c.csv", option, "\(most)"]) }
        }
    }
}
