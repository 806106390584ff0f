import Foundation
import SwiftWingTesting
import Testing

/// `ServerLaunch`, which starts the reference backend and the recognizer for these tests: a server counts as up
/// only once it has written its own "listening" line in this start and its port accepts connections.
@Suite struct ServerLaunchTests {
    private static func temporaryLog(_ text: String = "") throws -> String {
        let path = NSTemporaryDirectory() + "server-launch-\(UUID().uuidString.prefix(8)).log"
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    private static func launch(_ script: String, port: Int, logPath: String) throws -> Process {
        try ServerLaunch.start(
            "test server", executable: "/bin/sh", arguments: ["-c", script], port: port, logPath: logPath, within: 1)
    }

    @Test("the reference backend is up when the launch returns")
    func theBackendAnswersOnceStarted() throws {
        let backend = try BackendHarness()
        try backend.start()
        defer { backend.stop() }
        #expect(LoopbackSocket.acceptsConnections(port: backend.port))
        #expect(backend.log.contains("listening on"))
    }

    @Test("a server that exits during its start: its status and what it wrote in this start, not before")
    func anExitIsReportedWithItsOutput() throws {
        let logPath = try Self.temporaryLog("an earlier start's line\n")
        defer { try? FileManager.default.removeItem(atPath: logPath) }
        let port = try LoopbackSocket.freePort()
        let failure = #expect(throws: ServerLaunch.Failure.self) {
            try Self.launch("echo 'port taken' >&2; exit 3", port: port, logPath: logPath)
        }
        #expect(failure?.reason == .exited(status: 3))
        #expect(failure?.output == "port taken\n")
        #expect(try String(contentsOfFile: logPath, encoding: .utf8) == "an earlier start's line\nport taken\n")
    }

    @Test("its line without its port answering is not up")
    func theLineAloneIsNotEnough() throws {
        let logPath = try Self.temporaryLog()
        defer { try? FileManager.default.removeItem(atPath: logPath) }
        let port = try LoopbackSocket.freePort()
        let failure = #expect(throws: ServerLaunch.Failure.self) {
            try Self.launch("echo 'listening on'; exec sleep 10", port: port, logPath: logPath)
        }
        #expect(failure?.reason == .notListening(seconds: 1))
    }

    @Test("the port answering for another server, with a line from an earlier start in the log, is not up")
    func anotherServersPortIsNotEnough() throws {
        let logPath = try Self.temporaryLog("test server listening on 127.0.0.1 (an earlier start)\n")
        defer { try? FileManager.default.removeItem(atPath: logPath) }
        let (fd, port) = try LoopbackSocket.listen()
        defer { close(fd) }
        #expect(LoopbackSocket.acceptsConnections(port: port))
        let failure = #expect(throws: ServerLaunch.Failure.self) {
            try Self.launch("exec sleep 10", port: port, logPath: logPath)
        }
        #expect(failure?.reason == .notListening(seconds: 1))
    }
}
