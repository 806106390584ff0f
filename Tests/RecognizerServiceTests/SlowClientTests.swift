import Foundation
import SwiftWingTesting
import TalariaReferenceServer
import Testing
import swiftwing_recognizer

#if canImport(Glibc)
    import Glibc
#endif

/// What a recognizer does about clients that hold on to what they opened: a sender gone silent or trickling its
/// photo, and event streams opened past need.
extension ServiceTrustTests {
    /// The service with a recognizer that holds every photo until the test ends.
    func withHeldService(
        _ change: (inout RecognitionService.Settings) -> Void, clock: ManualClock = ManualClock(),
        _ body: (URL, HeldRecognizer) async throws -> Void
    ) async throws {
        let recognizer = HeldRecognizer()
        defer { recognizer.releaseAll() }
        var settings = Self.settings
        change(&settings)
        try await withService(settings, recognizer: recognizer, clock: clock) { base in
            try await body(base, recognizer)
        }
    }

    /// Waits until `/_stats` gives `value` for `key` (the server's own time; a generous cap, no bound asserted).
    func awaitStat(_ base: URL, _ key: String, _ value: Int) async throws {
        let stats = base.appendingPathComponent("_stats")
        for _ in 0..<2000 {
            if try json(try await fetch(stats).body)[key] as? Int == value { return }
            try await Task.sleep(for: .milliseconds(5))
        }
        Issue.record("/_stats never gave \(key) = \(value)")
    }

    /// One `read` of `fd` off the concurrency threads: what arrived, empty once the server closed the connection.
    func readSome(_ fd: Int32) async -> [UInt8] {
        await offConcurrencyThreads {
            var buffer = [UInt8](repeating: 0, count: 4096)
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            return Array(buffer[..<max(count, 0)])
        }
    }

    /// Whether the server closes `fd` before the socket's read timeout passes (what it sends meanwhile is dropped).
    func closedByServer(_ fd: Int32) async -> Bool {
        await offConcurrencyThreads {
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                if count <= 0 { return count == 0 }
            }
        }
    }

    /// Opens the job's event stream on a socket of its own; returns the socket and what arrived: for a stream, its
    /// head and first comment, for a refusal, the whole response.
    func openStream(_ base: URL, _ job: (id: String, token: String)) async throws -> (fd: Int32, head: String) {
        let fd = try LoopbackSocket.connect(port: try #require(base.port), readTimeout: 10)
        try LoopbackSocket.send(
            Array(
                ("GET /v3/jobs/scans/\(job.id)/stream HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
                    + "Accept: text/event-stream\r\nAuthorization: Bearer \(job.token)\r\n\r\n").utf8), to: fd)
        var received: [UInt8] = []
        while true {
            let text = String(decoding: received, as: UTF8.self)
            if text.contains("\r\n\r\n") {
                if !text.hasPrefix("HTTP/1.1 200") {
                    return (fd, text + String(decoding: await readToEnd(fd), as: UTF8.self))
                }
                if text.contains("retry:") { return (fd, text) }
            }
            let more = await readSome(fd)
            if more.isEmpty { return (fd, text) }
            received += more
        }
    }

    /// Closes `fd` with a reset rather than a FIN: the client is plainly gone.
    func reset(_ fd: Int32) {
        var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
        setsockopt(fd, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
        close(fd)
    }

    @Test func aSenderGoneSilentIsCutOffByTheIdleTimeoutAndGivesItsPlaceBack() async throws {
        try await withHeldService({
            $0.idleTimeout = .milliseconds(200)
            $0.maxWaitingPhotos = 1
        }) { base, _ in
            // Given half a photo sent, then nothing (no FIN, no RST: a kiosk whose Wi-Fi died). Its place is not
            // awaited in /_stats: on a loaded machine the 200 ms may pass before a look sees it.
            let (head, _) = halfUpload(photo: tinyJPEG("silent"), key: "silent")
            let silent = try LoopbackSocket.connect(port: try #require(base.port), readTimeout: 10)
            defer { close(silent) }
            try LoopbackSocket.send(head, to: silent)
            try await awaitStat(base, "uploads", 1)

            // Then the server closes the connection and the one place is free for the next photo.
            #expect(await closedByServer(silent))
            try await awaitStat(base, "photosReceiving", 0)
            #expect(try await upload(base, photo: tinyJPEG("next"), key: "next").status == 202)
        }
    }

    @Test func aQuietEventStreamOutlivesTheIdleTimeout() async throws {
        try await withHeldService({ $0.idleTimeout = .milliseconds(200) }) { base, recognizer in
            let job = try job(try await upload(base, photo: tinyJPEG("quiet"), key: "quiet"))
            let (stream, head) = try await openStream(base, job)
            defer { close(stream) }
            #expect(head.hasPrefix("HTTP/1.1 200"), "\(head)")

            // Two idle connections opened one after the other are closed by the timeout: by then the stream, opened
            // first, has been quiet through two timeouts (the photo is held: no event, no ping for 15 s).
            for _ in 0..<2 {
                let idle = try LoopbackSocket.connect(port: try #require(base.port), readTimeout: 10)
                defer { close(idle) }
                #expect(await closedByServer(idle))
            }

            // The stream is still open: it carries the job to its end.
            recognizer.release(tinyJPEG("quiet"))
            let events = String(decoding: await readToEnd(stream), as: UTF8.self)
            #expect(events.contains("event: completed"), "\(events)")
        }
    }

    @Test func aTricklingSenderIsAnswered408AtTheUploadDeadline() async throws {
        let clock = ManualClock()
        try await withHeldService({ $0.maxWaitingPhotos = 2 }, clock: clock) { base, _ in
            let port = try #require(base.port)
            // Before the deadline, a slow sender keeps its place and its photo, once whole, makes a job.
            let (head, rest) = halfUpload(photo: tinyJPEG("slow"), key: "slow")
            let slow = try LoopbackSocket.connect(port: port, readTimeout: 10)
            defer { close(slow) }
            try LoopbackSocket.send(head, to: slow)
            try await awaitStat(base, "photosReceiving", 1)
            clock.advance(by: .seconds(119))
            try LoopbackSocket.send(Array(rest.prefix(1)), to: slow)
            try await awaitStat(base, "photosReceiving", 1)
            try LoopbackSocket.send(Array(rest.dropFirst()), to: slow)
            let made = String(decoding: await readToEnd(slow), as: UTF8.self)
            #expect(made.hasPrefix("HTTP/1.1 202"), "\(made)")

            // Past it, a sender still trickling is answered 408 and its place is freed.
            let (trickleHead, trickleRest) = halfUpload(photo: tinyJPEG("trickle"), key: "trickle")
            let trickle = try LoopbackSocket.connect(port: port, readTimeout: 10)
            defer { close(trickle) }
            try LoopbackSocket.send(trickleHead, to: trickle)
            try await awaitStat(base, "photosReceiving", 1)
            try LoopbackSocket.send(Array(trickleRest.prefix(1)), to: trickle)
            clock.advance(by: .seconds(120))
            let answer = String(decoding: await readToEnd(trickle), as: UTF8.self)
            #expect(answer.hasPrefix("HTTP/1.1 408"), "\(answer)")
            let body = try #require(answer.range(of: "\r\n\r\n")).upperBound
            let problem = try json(Data(answer[body...].utf8))
            #expect(problem["code"] as? String == "UPLOAD_TIMEOUT" && problem["retryable"] as? Bool == true)
            #expect((problem["detail"] as? String)?.contains("send it again") == true, "\(problem)")
            try await awaitStat(base, "photosReceiving", 0)
            #expect(try await upload(base, photo: tinyJPEG("next"), key: "next").status == 202)
        }
    }

    @Test func streamsOfOneJobPastTheLimitAreRefusedUntilOneCloses() async throws {
        try await withHeldService({ $0.maxStreamsPerJob = 4 }) { base, recognizer in
            let job = try job(try await upload(base, photo: tinyJPEG("watched"), key: "watched"))
            var streams: [Int32] = []
            defer { for fd in streams { close(fd) } }
            for _ in 0..<4 {
                let (fd, head) = try await openStream(base, job)
                streams.append(fd)
                #expect(head.hasPrefix("HTTP/1.1 200"), "\(head)")
            }

            // The fifth is refused, and says why and when to try again.
            let (fifth, refused) = try await openStream(base, job)
            close(fifth)
            #expect(refused.hasPrefix("HTTP/1.1 429"), "\(refused)")
            #expect(refused.lowercased().contains("\r\nretry-after: 15\r\n"), "\(refused)")
            let body = try #require(refused.range(of: "\r\n\r\n")).upperBound
            let problem = try json(Data(refused[body...].utf8))
            #expect(problem["code"] as? String == "STREAM_ALREADY_OPEN" && problem["retryable"] as? Bool == true)
            #expect((problem["detail"] as? String)?.contains("already open") == true, "\(problem)")

            // A client gone gives its place back; the next stream is accepted.
            reset(streams.removeFirst())
            try await awaitStat(base, "streamsOpen", 3)
            let (fd, head) = try await openStream(base, job)
            streams.append(fd)
            #expect(head.hasPrefix("HTTP/1.1 200"), "\(head)")

            // Streams that end with their job give theirs back too.
            recognizer.release(tinyJPEG("watched"))
            try await awaitStat(base, "streamsOpen", 0)
        }
    }

    @Test func aConnectionGivesUpOnDataUnacknowledgedForAMinute() async throws {
        try await withHeldService({ _ in }) { base, _ in
            let port = try #require(base.port)
            let client = try LoopbackSocket.connect(port: port, readTimeout: 10)
            defer { close(client) }
            // Once a response came back, the server's end of the connection has been set up.
            try LoopbackSocket.send(Array("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8), to: client)
            #expect(String(decoding: await readSome(client), as: UTF8.self).hasPrefix("HTTP/1.1 200"))

            var address = sockaddr_in()
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            _ = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(client, $0, &length) }
            }
            let clientPort = Int(UInt16(bigEndian: address.sin_port))
            let server = try #require(try Self.descriptor(localPort: port, remotePort: clientPort))
            #expect(try Self.userTimeoutMilliseconds(server) == 60_000)
            #expect(try Self.userTimeoutMilliseconds(client) == 0, "the system's default, read the same way")
        }
    }

    /// This process's descriptor of the TCP socket from `localPort` to `remotePort` (found by its inode).
    static func descriptor(localPort: Int, remotePort: Int) throws -> Int32? {
        // Read to its end: a /proc file says it is empty, and a long table comes in several reads.
        let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: "/proc/net/tcp"))
        defer { try? handle.close() }
        let table = String(decoding: try handle.readToEnd() ?? Data(), as: UTF8.self)
        let inode = table.split(separator: "\n").dropFirst().lazy.map { $0.split(separator: " ") }.first { fields in
            fields.count > 9 && Int(fields[1].split(separator: ":").last ?? "", radix: 16) == localPort
                && Int(fields[2].split(separator: ":").last ?? "", radix: 16) == remotePort
        }?[9]
        guard let inode else { return nil }
        let files = FileManager.default
        return try files.contentsOfDirectory(atPath: "/proc/self/fd").first { entry in
            (try? files.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(entry)")) == "socket:[\(inode)]"
        }.flatMap { Int32($0) }
    }

    static func userTimeoutMilliseconds(_ fd: Int32) throws -> CInt {
        var value: CInt = -1
        var length = socklen_t(MemoryLayout<CInt>.size)
        guard getsockopt(fd, CInt(IPPROTO_TCP), TCP_USER_TIMEOUT, &value, &length) == 0 else {
            throw POSIXError(.init(rawValue: errno) ?? .EINVAL)
        }
        return value
    }
}
