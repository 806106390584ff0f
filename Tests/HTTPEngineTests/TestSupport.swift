import Dispatch
import Foundation
import Logging
import SwiftWingTesting
import Synchronization
import Testing

@testable import HTTPEngine

func makeRequest(
    _ method: HTTPRequest.Method = .get, _ url: String, headers: [HTTPHeader] = [], body: [UInt8] = [],
    timeouts: HTTPTimeouts = patient
) -> HTTPRequest {
    HTTPRequest(method: method, url: URL(string: url)!, headers: headers, body: body, timeouts: timeouts)
}

/// The error `send` threw, or nil when it returned a response.
func sendFailure(_ engine: CurlEngine, _ request: HTTPRequest) async -> HTTPError? {
    do {
        _ = try await engine.send(request)
        return nil
    } catch {
        return error
    }
}

/// Limits for requests whose timeouts are not under test: far beyond any run, so only a hang ends them.
let patient = HTTPTimeouts(connect: .seconds(600), total: .seconds(600), stall: .seconds(600))

/// How long a test waits for something that must happen: it only bounds a hang. The test's task
/// runs on the cooperative pool, which the synchronous suites of the same process can hold for a
/// minute on a busy 2-core machine; a timing claim is measured on the server's or engine's thread.
let hangGuard: Duration = .seconds(300)

/// Waits (polling) until `condition` holds or `timeout` passed; returns whether it held.
func eventually(within timeout: Duration, _ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(10))  // polls the engine's and server's threads
    }
    return condition()
}

/// A one-way signal from a test to a server script.
final class Gate: Sendable {
    private let semaphore = DispatchSemaphore(value: 0)
    func open() { semaphore.signal() }
    /// True if opened within `seconds`.
    func wait(seconds: Double) -> Bool { semaphore.wait(timeout: .now() + seconds) == .success }
}

/// Collects every log line (message and metadata) so tests can look for leaked secrets.
final class LogCapture: Sendable {
    private let lines = Mutex<[String]>([])
    var text: String { lines.withLock { $0.joined(separator: "\n") } }

    func append(_ line: String) { lines.withLock { $0.append(line) } }

    var logger: Logger {
        var logger = Logger(label: "swiftwing.http") { _ in CapturingHandler { self.append($0) } }
        logger.logLevel = .trace
        return logger
    }
}

/// A free loopback TCP port (bound, read, closed).
func freePort() throws -> Int {
    let server = try LoopbackServer { _, _ in }
    server.stop()
    return server.port
}

/// True once something accepts TCP connections on 127.0.0.1:`port`.
func acceptsConnections(port: Int) -> Bool { LoopbackSocket.acceptsConnections(port: port) }

/// The executable's path if it is on PATH (or in /usr/sbin, where nghttpd lives).
func findTool(_ name: String) -> String? {
    let path = (ProcessInfo.processInfo.environment["PATH"] ?? "") + ":/usr/sbin:/usr/bin:/sbin:/bin"
    return path.split(separator: ":").map { "\($0)/\(name)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
}

/// The repository root (this file is Tests/HTTPEngineTests/TestSupport.swift).
let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()

/// Runs blocking work (process launches, waits) on a thread of its own: the cooperative pool has
/// as many threads as cores (two here), and blocking them stalls every other test.
func offThePool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try body() }) }.start()
    }
}
