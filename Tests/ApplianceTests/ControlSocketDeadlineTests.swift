import Foundation
import Logging
import SwiftWingCore
import Testing

@testable import Appliance

#if canImport(Glibc)
    import Glibc
#endif

/// Issue 36, point 4: the control socket's timeout is one deadline per request, not one per read, so a
/// client sending one byte at a time just inside the read timeout cannot hold a place for ever.
@Suite struct ControlSocketDeadlineTests {
    @Test func aClientTricklingOneByteAtATimeIsDroppedAtTheRequestsDeadline() throws {
        let path = NSTemporaryDirectory() + "sw-\(UUID().uuidString.prefix(8)).sock"
        var limits = ControlSocketServer.Limits()
        limits.ioTimeout = .milliseconds(400)
        let server = try ControlSocketServer(path: path, logger: Logger(label: "test"), limits: limits) { _ in
            ControlReply(ok: true)
        }
        Thread { server.serve() }.start()
        defer { server.stop() }
        let fd = try connectedSocket(to: path)
        defer { close(fd) }
        // One byte of a valid-looking request every 150 ms (well inside the 400 ms per read), never a newline.
        // Counted, not timed: 60 bytes is 9 s, over twenty deadlines; the server must have hung up long before.
        var sent = 0
        var dropped = false
        let request = Array(#"{"command":"status","padding":""#.utf8) + Array(repeating: UInt8(ascii: "x"), count: 64)
        while sent < 60 {
            var byte = request[sent]
            if send(fd, &byte, 1, Int32(MSG_NOSIGNAL)) != 1 {
                dropped = true
                break
            }
            sent += 1
            usleep(150_000)  // the client's pace: the thing under test
            var probe: UInt8 = 0
            let got = recv(fd, &probe, 1, Int32(MSG_DONTWAIT))
            if got == 0 || (got < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
                dropped = true
                break
            }
        }
        #expect(dropped, "the server still read after \(sent) bytes")
        var waited = 0
        while server.activeConnections > 0, waited < 1000 {
            usleep(5_000)
            waited += 1
        }
        #expect(server.activeConnections == 0)
    }
}
