import Appliance
import Foundation
import Store
import Testing

@testable import WebInterface

#if canImport(Glibc)
    import Glibc
#endif

/// Issue 36: the web process's live-status places, pairing per client address, and the Host check, over
/// real HTTP on loopback.
@Suite struct TrustTests {
    /// Runs blocking socket work on a thread of its own (never the cooperative pool).
    func onThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try body() }) }.start()
        }
    }

    /// Sends `GET /events` and resets the connection at once (SO_LINGER 0), before any answer is read.
    func resetEarly(port: Int, cookie: String) throws {
        let fd = try RawHTTP.connectedSocket(port: port)
        RawHTTP.sendAll(fd, Array("GET /events HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nCookie: \(cookie)\r\n\r\n".utf8))
        var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
        setsockopt(fd, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
        close(fd)
    }

    /// Sends `GET /events`, reads the response head only and resets: the status code.
    func eventsStatus(port: Int, cookie: String) throws -> Int {
        let fd = try RawHTTP.connectedSocket(port: port)
        defer {
            var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
            setsockopt(fd, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
            close(fd)
        }
        var timeout = timeval(tv_sec: 30, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        RawHTTP.sendAll(fd, Array("GET /events HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nCookie: \(cookie)\r\n\r\n".utf8))
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while received.firstRange(of: Array("\r\n\r\n".utf8)) == nil {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count <= 0 { break }
            received += buffer[0..<count]
        }
        return try RawHTTP.parse(received).status
    }

    @Test func earlyResetClientsGiveTheirLiveStatusPlaceBack() async throws {
        try await withWebDevice { device in
            let (cookie, _) = try await device.pair()
            let port = device.port
            let clients = device.app.settings.limits.eventStreams + 4
            for _ in 0..<clients { try await onThread { try self.resetEarly(port: port, cookie: cookie) } }
            // Wait (by count, not by time) until the server has answered every one of them ...
            var polls = 0
            while device.app.eventRequests.load(ordering: .relaxed) < clients, polls < 2000 {
                try await Task.sleep(for: .milliseconds(10))
                polls += 1
            }
            #expect(device.app.eventRequests.load(ordering: .relaxed) == clients)
            // ... and has given their places back (before the fix they stayed taken until a restart).
            polls = 0
            while device.app.openStreams.load(ordering: .relaxed) > 0, polls < 500 {
                try await Task.sleep(for: .milliseconds(10))
                polls += 1
            }
            #expect(device.app.openStreams.load(ordering: .relaxed) == 0)
            #expect(try await onThread { try self.eventsStatus(port: port, cookie: cookie) } == 200)
        }
    }

    @Test func aNeighboursWrongCodesDoNotLockAnotherAddress() async throws {
        try await withWebDevice { device in
            let printed = try WebPairing.pair(configuration: device.configuration, now: device.clock.now)
            let code = String(printed.split(separator: " ")[1])
            let wrong = code == "000000" ? "111111" : "000000"
            for remaining in (1...4).reversed() {
                let answer = try await device.post("/pair", [("code", wrong)], source: "127.0.0.2")
                #expect(answer.status == 403)
                #expect(answer.text.contains("\(remaining) more wrong"), "\(answer.text)")
            }
            let fifth = try await device.post("/pair", [("code", wrong)], source: "127.0.0.2")
            #expect(fifth.text.contains("Pairing is locked for this browser"), "\(fifth.text)")
            // The neighbour is locked out, even with the right code ...
            let neighbour = try await device.post("/pair", [("code", code)], source: "127.0.0.2")
            #expect(neighbour.status == 403)
            #expect(neighbour.header("Set-Cookie") == nil)
            // ... the owner at another address pairs with the same code.
            let owner = try await device.post("/pair", [("code", code)], source: "127.0.0.1")
            #expect(owner.status == 303, "\(owner.text)")
            #expect(owner.header("Set-Cookie")?.hasPrefix("swiftwing_session=") == true)
        }
    }

    @Test func wrongCodesFromManyAddressesStillBurnTheCode() async throws {
        try await withWebDevice { device in
            let printed = try WebPairing.pair(configuration: device.configuration, now: device.clock.now)
            let code = String(printed.split(separator: " ")[1])
            let wrong = code == "000000" ? "111111" : "000000"
            let addresses = WebApp.wrongCodesAcrossAddresses / WebAccess.wrongCodesBeforeLock
            for address in 0..<addresses {
                for _ in 0..<WebAccess.wrongCodesBeforeLock {
                    _ = try await device.post("/pair", [("code", wrong)], source: "127.0.1.\(address + 2)")
                }
            }
            let right = try await device.post("/pair", [("code", code)], source: "127.0.0.1")
            #expect(right.status == 403)
            #expect(right.text.contains("Pairing is locked after \(WebApp.wrongCodesAcrossAddresses) wrong codes"))
            #expect(throws: ApplianceError.self) {
                try WebPairing.pair(configuration: device.configuration, now: device.clock.now)
            }
        }
    }

    @Test func aRequestForAnotherHostIsRefused() async throws {
        try await withWebDevice { device in
            func status(_ host: String) async throws -> Int {
                try await RawHTTP.send(
                    port: device.port, method: "GET", path: "/pair", headers: [], body: [], host: host
                ).status
            }
            for foreign in [
                "evil.example", "evil.example:\(device.port)", "127.0.0.1.evil.example", "", "[::1", "1.2.3",
            ] {
                #expect(try await status(foreign) == 421, "Host: \(foreign)")
            }
            for own in [
                "127.0.0.1:\(device.port)", "localhost", "localhost:\(device.port)", "[::1]:\(device.port)",
                "192.168.1.20",
            ] {
                #expect(try await status(own) == 200, "Host: \(own)")
            }
            // A rebinding page's pairing form is refused before a code is tried.
            let printed = try WebPairing.pair(configuration: device.configuration, now: device.clock.now)
            let code = String(printed.split(separator: " ")[1])
            let form = Array("code=\(code)".utf8)
            let rebound = try await RawHTTP.send(
                port: device.port, method: "POST", path: "/pair",
                headers: [("Content-Type", "application/x-www-form-urlencoded")], body: form, host: "evil.example")
            #expect(rebound.status == 421)
            #expect(rebound.header("Set-Cookie") == nil)
            #expect(try await device.post("/pair", [("code", code)]).status == 303, "the code was not spent")
        }
    }

    @Test func theHostCheckReadsAuthorities() {
        let check = HostCheck(extra: ["kiosk.lan"])
        #expect(check.allows("kiosk.lan:8080"))
        #expect(check.allows("KIOSK.LAN"))
        #expect(check.allows("10.0.0.7"))
        #expect(check.allows("[fe80::1]"))
        #expect(!check.allows("kiosk.lan.evil.example"))
        #expect(!check.allows("300.1.1.1"))
        #expect(!check.allows("10.0.0.7:80x"))
        #expect(!check.allows(nil))
    }
}
