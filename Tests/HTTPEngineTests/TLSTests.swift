import Foundation
import Testing

@testable import HTTPEngine

/// TLS against real processes: `scripts/tls-front.sh` (openssl + socat) in front of the loopback
/// server, and nghttpd for HTTP/2. A missing tool fails the test with the package to install.
@Suite(.serialized) struct TLSTests {
    /// A running helper process; `stop()` ends exactly that process.
    final class Helper: @unchecked Sendable {
        let process: Process
        let port: Int
        let directory: URL

        init(process: Process, port: Int, directory: URL) {
            self.process = process
            self.port = port
            self.directory = directory
        }

        var certificate: String { directory.appendingPathComponent("cert.pem").path }

        func stop() {
            // SIGKILL: the test runner's threads block SIGTERM and children inherit that mask.
            // Not waited for: Foundation reaps the child.
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            try? FileManager.default.removeItem(at: directory)
        }
    }

    /// Fails the test, naming the Debian package, unless every tool is installed.
    static func requireTools(_ tools: [(tool: String, package: String)]) -> Bool {
        let missing = tools.filter { findTool($0.tool) == nil }
        for (tool, package) in missing {
            Issue.record(
                "\(tool) is missing: install the Debian package \(package) (sudo scripts/install-deps.sh test)")
        }
        return missing.isEmpty
    }

    static func temporaryDirectory() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "swiftwing-tls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    static func launch(_ executable: String, _ arguments: [String], port: Int, directory: URL) async throws -> Helper {
        try await offThePool { try launchBlocking(executable, arguments, port: port, directory: directory) }
    }

    private static func launchBlocking(_ executable: String, _ arguments: [String], port: Int, directory: URL) throws
        -> Helper
    {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        let helper = Helper(process: process, port: port, directory: directory)
        let deadline = ContinuousClock.now + .seconds(300)
        while !acceptsConnections(port: port) {
            guard process.isRunning, ContinuousClock.now < deadline else {
                helper.stop()
                throw HelperFailed(command: ([executable] + arguments).joined(separator: " "))
            }
            Thread.sleep(forTimeInterval: 0.02)  // polls a real server process
        }
        return helper
    }

    struct HelperFailed: Error, CustomStringConvertible {
        let command: String
        var description: String { "\(command) did not start listening within 300 s" }
    }

    /// socat terminating TLS with a fresh self-signed certificate, relaying to `backendPort`.
    static func tlsFront(backendPort: Int) async throws -> Helper {
        let script = repositoryRoot.appendingPathComponent("scripts/tls-front.sh").path
        let directory = try temporaryDirectory()
        let port = try freePort()
        return try await launch(
            "/bin/bash", [script, directory.path, "\(port)", "\(backendPort)"], port: port, directory: directory)
    }

    static func helloServer() throws -> LoopbackServer {
        try LoopbackServer { connection, _ in connection.respond(status: 200, body: Array("hello over TLS".utf8)) }
    }

    @Test func aSelfSignedServerIsRefusedWithoutTheCAFile() async throws {
        guard Self.requireTools([("openssl", "openssl"), ("socat", "socat")]) else { return }
        let backend = try Self.helloServer()
        defer { backend.stop() }
        let front = try await Self.tlsFront(backendPort: backend.port)
        defer { front.stop() }
        let engine = CurlEngine()
        defer { engine.shutdown() }

        let error = await sendFailure(engine, makeRequest(.get, "https://127.0.0.1:\(front.port)/v3/books"))

        guard case .tls(let host, _) = error else {
            Issue.record("expected tls, got \(String(describing: error))")
            return
        }
        #expect(host == "127.0.0.1")
        #expect(error?.isTransient == false)
        #expect(backend.requests.isEmpty, "no request may pass an unverified connection")
    }

    @Test func theSelfSignedServerIsTrustedWithItsCertificateAsCAFile() async throws {
        guard Self.requireTools([("openssl", "openssl"), ("socat", "socat")]) else { return }
        let backend = try Self.helloServer()
        defer { backend.stop() }
        let front = try await Self.tlsFront(backendPort: backend.port)
        defer { front.stop() }
        let engine = CurlEngine(configuration: .init(caFile: front.certificate))
        defer { engine.shutdown() }

        let response = try await engine.send(makeRequest(.get, "https://127.0.0.1:\(front.port)/v3/books"))
        let byName = try await engine.send(makeRequest(.get, "https://localhost:\(front.port)/v3/books"))

        #expect(response.status == 200)
        #expect(response.body == Array("hello over TLS".utf8))
        #expect(response.head.version == .http1_1)  // socat offers no ALPN
        #expect(byName.status == 200)
        #expect(backend.requests.first?.target == "/v3/books")
    }

    @Test func anHTTP2ServerIsSpokenToInHTTP2() async throws {
        guard Self.requireTools([("openssl", "openssl"), ("nghttpd", "nghttp2-server")]) else { return }
        let directory = try Self.temporaryDirectory()
        let status = try await offThePool { () throws -> Int32 in
            let certificate = Process()
            certificate.executableURL = URL(fileURLWithPath: "/bin/bash")
            certificate.arguments = [
                repositoryRoot.appendingPathComponent("scripts/tls-front.sh").path, "--cert-only", directory.path,
            ]
            try certificate.run()
            certificate.waitUntilExit()
            return certificate.terminationStatus
        }
        #expect(status == 0)
        let documents = directory.appendingPathComponent("htdocs")
        try FileManager.default.createDirectory(at: documents, withIntermediateDirectories: true)
        try Data("hello over h2".utf8).write(to: documents.appendingPathComponent("hello.txt"))
        let port = try freePort()
        let server = try await Self.launch(
            findTool("nghttpd")!,
            [
                "-a", "127.0.0.1", "-d", documents.path, "\(port)", directory.appendingPathComponent("key.pem").path,
                directory.appendingPathComponent("cert.pem").path,
            ], port: port, directory: directory)
        defer { server.stop() }
        let engine = CurlEngine(configuration: .init(caFile: server.certificate))
        defer { engine.shutdown() }

        let response = try await engine.send(makeRequest(.get, "https://127.0.0.1:\(port)/hello.txt"))

        #expect(response.status == 200)
        #expect(response.head.version == .http2)
        #expect(response.body == Array("hello over h2".utf8))
    }
}
