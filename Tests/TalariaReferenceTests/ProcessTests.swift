import Foundation
import Testing

/// The real `talaria-reference` executable: the one stdout line, the port file, flags, clean SIGTERM.
@Suite struct ProcessTests {
    /// The executable beside the test bundle (`swift test` builds every product into the same directory).
    static let notBuilt: Comment =
        "talaria-reference is not built beside the tests (swift build --build-tests builds it)"
    static var executable: URL? {
        let directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for candidate in [directory, directory.deletingLastPathComponent()] {
            let url = candidate.appendingPathComponent("talaria-reference")
            if FileManager.default.isExecutableFile(atPath: url.path) { return url }
        }
        return nil
    }

    @Test
    func runsPrintsOneLineAndStopsOnSIGTERM() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "talaria-ref-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let keyFile = directory.appendingPathComponent("api-key")
        try "k3y\n".write(to: keyFile, atomically: true, encoding: .utf8)
        let portFile = directory.appendingPathComponent("port")

        let process = Process()
        let executable = try #require(Self.executable, Self.notBuilt)
        process.executableURL = executable
        process.arguments = [
            "--port", "0", "--port-file", portFile.path, "--api-key-file", keyFile.path, "--recognition-delay-ms", "50",
            "--envelope", "sse-absolute", "--fault", "status:500", "--log-level", "warning",
        ]
        let stdout = Pipe()
        process.standardOutput = stdout
        process.standardError = FileHandle.nullDevice
        try process.run()
        defer { if process.isRunning { process.terminate() } }

        let reader = stdout.fileHandleForReading
        let firstLine: String = try await withCheckedThrowingContinuation { continuation in
            Thread {
                var bytes: [UInt8] = []
                while !bytes.contains(UInt8(ascii: "\n")) {
                    let chunk = reader.availableData
                    if chunk.isEmpty { break }
                    bytes += chunk
                }
                continuation.resume(returning: String(decoding: bytes, as: UTF8.self))
            }.start()
        }
        let line = firstLine.trimmingCharacters(in: .newlines)
        #expect(line.hasPrefix("talaria-reference listening on http://127.0.0.1:"), "\(line)")
        let port = try #require(Int(line.split(separator: ":").last ?? ""))
        #expect(try String(contentsOf: portFile, encoding: .utf8).trimmingCharacters(in: .newlines) == String(port))

        let server = TestServer(port: port)
        #expect(try await server.upload().status == 401)
        let response = try await server.upload(bearer: "k3y")
        #expect(response.status == 202)
        let data = try #require(response.object?["data"] as? [String: Any])
        #expect((data["sseUrl"] as? String)?.hasPrefix("http://127.0.0.1:\(port)/") == true)
        #expect(try await server.request("GET", "/v3/jobs/scans/\(data["jobId"] as? String ?? "")").status == 500)

        process.terminate()  // SIGTERM
        let deadline = Date().addingTimeInterval(10)
        while process.isRunning, Date() < deadline { try await Task.sleep(for: .milliseconds(20)) }
        #expect(!process.isRunning, "did not stop on SIGTERM")
        #expect(process.terminationStatus == 0)
        let rest = reader.readDataToEndOfFile()
        #expect(rest.isEmpty, "stdout must carry exactly one line; also got: \(String(decoding: rest, as: UTF8.self))")
    }

    @Test
    func rejectsUnknownFaults() throws {
        let process = Process()
        let executable = try #require(Self.executable, Self.notBuilt)
        process.executableURL = executable
        process.arguments = ["--port", "0", "--fault", "upload:teapot"]
        let stderr = Pipe()
        process.standardOutput = FileHandle.nullDevice
        process.standardError = stderr
        try process.run()
        let message = String(decoding: stderr.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus != 0)
        #expect(message.contains("upload:teapot"))
    }
}
