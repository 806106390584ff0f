import Foundation
import Logging
import SwiftWingCore
import Synchronization
import Testing

@testable import Appliance

@Suite struct ControlSocketTests {
    private func socketPath() -> String { NSTemporaryDirectory() + "sw-\(UUID().uuidString.prefix(8)).sock" }

    @Test func aRequestIsAnsweredOverARealUnixSocketWithMode0660() async throws {
        let path = socketPath()
        let server = try ControlSocketServer(path: path, logger: Logger(label: "test")) { request in
            #expect(request.command == .shutter)
            return ControlReply(ok: true, scanId: "abc")
        }
        let thread = Thread { server.serve() }
        thread.start()
        defer { server.stop() }
        var status = stat()
        #expect(stat(path, &status) == 0)
        #expect(status.st_mode & 0o777 == 0o660)
        let reply = try await offThePool { try ControlClient.send(ControlRequest(command: .shutter), to: path) }
        #expect(reply == ControlReply(ok: true, scanId: "abc"))
    }

    @Test func aSecondServerOnALiveSocketIsRefused() throws {
        let path = socketPath()
        let server = try ControlSocketServer(path: path, logger: Logger(label: "test")) { _ in ControlReply(ok: true) }
        let thread = Thread { server.serve() }
        thread.start()
        defer { server.stop() }
        #expect(throws: ControlSocketError.self) {
            _ = try ControlSocketServer(path: path, logger: Logger(label: "test")) { _ in ControlReply(ok: true) }
        }
    }

    @Test func aStaleSocketFileIsReplaced() async throws {
        let path = socketPath()
        _ = FileManager.default.createFile(atPath: path, contents: nil)
        let server = try ControlSocketServer(path: path, logger: Logger(label: "test")) { _ in ControlReply(ok: true) }
        let thread = Thread { server.serve() }
        thread.start()
        defer { server.stop() }
        #expect(try await offThePool { try ControlClient.send(ControlRequest(command: .status), to: path) }.ok)
    }

    @Test func noDaemonGivesAdviceNamingTheSocket() {
        let path = socketPath()
        do {
            _ = try ControlClient.send(ControlRequest(command: .shutter), to: path)
            Issue.record("expected an error")
        } catch {
            #expect(error.description.contains(path))
            #expect(error.description.contains("swiftwing run"))
        }
    }
}
