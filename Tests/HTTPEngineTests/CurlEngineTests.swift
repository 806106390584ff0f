import Foundation
import SwiftWingCore
import Synchronization
import Testing

@testable import HTTPEngine

/// Real HTTP over loopback against ``LoopbackServer``: no mocks.
@Suite struct CurlEngineTests {
    // MARK: Round trips

    @Test func getReturnsStatusHeadersAndBodyAndSendsTheRequestHeaders() async throws {
        let server = try LoopbackServer { connection, _ in
            connection.respond(
                status: 200, reason: "OK", headers: ["X-Reply: yes", "X-Reply: twice"], body: Array("hello".utf8))
        }
        defer { server.stop() }
        let engine = CurlEngine()
        defer { engine.shutdown() }

        let response = try await engine.send(
            makeRequest(
                .get, "\(server.url)/v3/books?isbn=9780000000002",
                headers: [HTTPHeader(name: "X-Device-ID", value: "dev-1")]))

        #expect(response.status == 200)
        #expect(response.body == Array("hello".utf8))
        #expect(response.header("x-reply") == "yes")
        #expect(response.head.headers.filter { $0.name == "X-Reply" }.map(\.value) == ["yes", "twice"])
        #expect(response.head.version == .http1_1)
        let recorded = try #require(server.requests.first)
        #expect(recorded.method == "GET")
        #expect(recorded.target == "/v3/books?isbn=9780000000002")
        #expect(recorded.header("X-Device-ID") == "dev-1")
        #expect(recorded.header("User-Agent") == "swiftwing/\(SwiftWingVersion.string)")
    }

    @Test func postSendsTheExactBodyWithoutExpectContinue() async throws {
        let server = try LoopbackServer { connection, request in
            connection.respond(
                status: 201, headers: ["Content-Type: application/json"], body: Array("{\"jobId\":\"j1\"}".utf8))
        }
        defer { server.stop() }
        let engine = CurlEngine()
        defer { engine.shutdown() }
        // Multipart with binary JPEG-like bytes, large enough that curl would otherwise ask `Expect: 100-continue`.
        let boundary = "swiftwing-boundary-1"
        var body = Array("--\(boundary)\r\nContent-Disposition: form-data; name=\"image\"; filename=\"p.jpg\"\r\n".utf8)
        body += Array("Content-Type: image/jpeg\r\n\r\n".utf8)
        body += (0..<(2 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        body += Array("\r\n--\(boundary)--\r\n".utf8)

        let response = try await engine.send(
            makeRequest(
                .post, "\(server.url)/v3/jobs/scans",
                headers: [
                    HTTPHeader(name: "Content-Type", value: "multipart/form-data; boundary=\(boundary)"),
                    HTTPHeader(name: "Authorization", value: "Bearer s3cret"),
                ], body: body))

        #expect(response.status == 201)
        #expect(String(decoding: response.body, as: UTF8.self) == "{\"jobId\":\"j1\"}")
        let recorded = try #require(server.requests.first)
        #expect(recorded.method == "POST")
        #expect(recorded.header("Expect") == nil)
        #expect(recorded.header("Content-Length") == "\(body.count)")
        #expect(recorded.header("Content-Type") == "multipart/form-data; boundary=\(boundary)")
        #expect(recorded.header("Authorization") == "Bearer s3cret")
        #expect(recorded.body == body)
    }

    @Test func deleteUsesTheDeleteMethod() async throws {
        let server = try LoopbackServer { connection, _ in connection.respond(status: 204, reason: "No Content") }
        defer { server.stop() }
        let engine = CurlEngine()
        defer { engine.shutdown() }

        let response = try await engine.send(makeRequest(.delete, "\(server.url)/v3/jobs/j1"))

        #expect(response.status == 204)
        #expect(response.body.isEmpty)
        #expect(server.requests.first?.method == "DELETE")
        #expect(server.requests.first?.target == "/v3/jobs/j1")
    }

    @Test func clientAndServerErrorStatusesAreResponsesNotErrors() async throws {
        let server = try LoopbackServer { connection, request in
            if request.target == "/missing" {
                connection.respond(status: 404, reason: "Not Found", body: Array("no such job".utf8))
            } else {
                connection.respond(status: 503, reason: "Unavailable", headers: ["Retry-After: 7"])
            }
        }
        defer { server.stop() }
        let engine = CurlEngine()
        defer { engine.shutdown() }

        let missing = try await engine.send(makeRequest(.get, "\(server.url)/missing"))
        let busy = try await engine.send(makeRequest(.post, "\(server.url)/busy", body: Array("x".utf8)))

        #expect(missing.status == 404)
        #expect(missing.body == Array("no such job".utf8))
        #expect(busy.status == 503)
        #expect(busy.header("retry-after") == "7")
    }

    @Test func redirectsAreNotFollowed() async throws {
        let server = try LoopbackServer { connection, _ in
            connection.respond(status: 302, reason: "Found", headers: ["Location: https://example.org/elsewhere"])
        }
        defer { server.stop() }
        let engine = CurlEngine()
        defer { engine.shutdown() }

        let response = try await engine.send(makeRequest(.get, "\(server.url)/moved"))

        #expect(response.status == 302)
        #expect(response.header("location") == "https://example.org/elsewhere")
        #expect(server.requests.count == 1)
    }

    // MARK: Failures

    @Test func refusedConnectionIsCouldNotConnect() async throws {
        let port = try freePort()
        let engine = CurlEngine()
        defer { engine.shutdown() }

        let error = await sendFailure(engine, makeRequest(.get, "http://127.0.0.1:\(port)/"))

        guard case .couldNotConnect(let host, _) = error else {
            Issue.record("expected couldNotConnect, got \(String(describing: error))")
            return
        }
        #expect(host == "127.0.0.1")
        #expect(error?.isTransient == true)
    }

    @Test func partialBodyIsConnectionLost() async throws {
        let server = try LoopbackServer { connection, _ in
            connection.write("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n0123456789")
        }
        defer { server.stop() }
        let engine = CurlEngine()
        defer { engine.shutdown() }

        let error = await sendFailure(engine, makeRequest(.get, "\(server.url)/"))

        guard case .connectionLost = error else {
            Issue.record("expected connectionLost, got \(String(describing: error))")
            return
        }
    }

    @Test func serverClosingWithoutAnAnswerIsConnectionLost() async throws {
        let server = try LoopbackServer { connection, _ in connection.close() }
        defer { server.stop() }
        let engine = CurlEngine()
        defer { engine.shutdown() }

        let error = await sendFailure(
            engine, makeRequest(.post, "\(server.url)/", body: Array(repeating: 7, count: 1000)))

        guard case .connectionLost = error else {
            Issue.record("expected connectionLost, got \(String(describing: error))")
            return
        }
    }

    @Test func serverClosingWhileTheBodyIsStillUploadingIsConnectionLost() async throws {
        let server = try LoopbackServer(readsBodies: false) { connection, _ in connection.close() }
        defer { server.stop() }
        let engine = CurlEngine()
        defer { engine.shutdown() }

        let error = await sendFailure(
            engine, makeRequest(.post, "\(server.url)/", body: Array(repeating: 7, count: 8 << 20)))

        guard case .connectionLost = error else {
            Issue.record("expected connectionLost, got \(String(describing: error))")
            return
        }
    }

    @Test func onlyTheFinalResponseHeadersAreKeptAfterAnInterim100() async throws {
        let server = try LoopbackServer { connection, _ in
            connection.write("HTTP/1.1 100 Continue\r\nX-Interim: yes\r\n\r\n")
            connection.respond(status: 200, headers: ["X-Final: yes"], body: Array("done".utf8))
        }
        defer { server.stop() }
        let engine = CurlEngine()
        defer { engine.shutdown() }

        let response = try await engine.send(makeRequest(.post, "\(server.url)/", body: Array("x".utf8)))

        #expect(response.status == 200)
        #expect(response.header("X-Interim") == nil)
        #expect(response.header("X-Final") == "yes")
        #expect(response.body == Array("done".utf8))
    }

    // The timeout tests time the transfer on threads a busy test process cannot hold up: the server's
    // and the engine's (the server notes when the engine hangs up). The test's own task runs on the
    // cooperative pool, which synchronous suites in the same process may occupy for many seconds.

    @Test func stalledResponseTimesOutAfterTheStallTime() async throws {
        let stalledAt = Mutex<ContinuousClock.Instant?>(nil)
        let server = try LoopbackServer { connection, _ in
            connection.write("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n0123456789")
            stalledAt.withLock { $0 = .now }
            _ = connection.wait(.seconds(600))
        }
        defer { server.stop() }
        let engine = CurlEngine()
        defer { engine.shutdown() }

        let error = await sendFailure(
            engine,
            makeRequest(
                .get, "\(server.url)/", timeouts: HTTPTimeouts(connect: .seconds(600), total: nil, stall: .seconds(1))))

        guard case .timedOut = error else {
            Issue.record("expected timedOut, got \(String(describing: error))")
            return
        }
        #expect(
            await eventually(within: hangGuard) { !server.peerCloseTimes.isEmpty }, "the engine kept the connection")
        let stalled = try #require(stalledAt.withLock { $0 })
        let hungUp = try #require(server.peerCloseTimes.first) - stalled
        // Not before the stall time; long before the server's 600 s (`.timedOut` names the limit that fired).
        #expect(hungUp >= .milliseconds(900))
        #expect(hungUp < .seconds(30), "the 1 s stall limit took \(hungUp)")
    }

    @Test func totalTimeoutEndsASlowButMovingTransfer() async throws {
        let startedAt = Mutex<ContinuousClock.Instant?>(nil)
        let server = try LoopbackServer { connection, _ in
            startedAt.withLock { $0 = .now }
            connection.write("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
            for _ in 0..<12_000 {
                guard connection.write("1\r\nx\r\n"), connection.wait(.milliseconds(50)) else { return }
            }
        }
        defer { server.stop() }
        let engine = CurlEngine()
        defer { engine.shutdown() }

        let error = await sendFailure(
            engine,
            makeRequest(
                .get, "\(server.url)/",
                timeouts: HTTPTimeouts(connect: .seconds(600), total: .milliseconds(700), stall: nil)))

        guard case .timedOut = error else {
            Issue.record("expected timedOut, got \(String(describing: error))")
            return
        }
        #expect(
            await eventually(within: hangGuard) { !server.peerCloseTimes.isEmpty }, "the engine kept the connection")
        let started = try #require(startedAt.withLock { $0 })
        let hungUp = try #require(server.peerCloseTimes.first) - started
        // The server keeps the transfer moving for 10 minutes: ending this early is the total limit.
        #expect(hungUp >= .milliseconds(500))
        #expect(hungUp < .seconds(30), "the 0.7 s total limit took \(hungUp)")
    }

    @Test func bodyOverTheLimitIsResponseTooLarge() async throws {
        let server = try LoopbackServer { connection, _ in
            connection.respond(status: 200, body: Array(repeating: 65, count: 5000))
        }
        defer { server.stop() }
        let engine = CurlEngine(configuration: .init(maximumBodyBytes: 1000))
        defer { engine.shutdown() }

        let error = await sendFailure(engine, makeRequest(.get, "\(server.url)/"))

        #expect(error == .responseTooLarge(limit: 1000))
    }

    @Test func plainHTTPToANonLoopbackHostIsRefusedWithoutConnecting() async throws {
        let engine = CurlEngine()
        defer { engine.shutdown() }

        // 192.0.2.1 is TEST-NET-1: a connection attempt would end as couldNotConnect or timedOut, not this.
        let error = await sendFailure(engine, makeRequest(.get, "http://192.0.2.1/v3/books"))

        #expect(error == .insecureURL("192.0.2.1"))
        #expect(await sendFailure(engine, makeRequest(.get, "http://example.org/")) == .insecureURL("example.org"))
        guard case .invalidURL = await sendFailure(engine, makeRequest(.get, "ftp://127.0.0.1/file")) else {
            Issue.record("ftp:// must be an invalid URL")
            return
        }
        var parts = engine.stream(makeRequest(.get, "http://10.0.0.1/events")).makeAsyncIterator()
        await #expect(throws: HTTPError.insecureURL("10.0.0.1")) { _ = try await parts.next() }
    }

    @Test func loopbackHostsAreRecognised() {
        for host in ["localhost", "LOCALHOST", "127.0.0.1", "127.1.2.3", "::1", "::ffff:127.0.0.1"] {
            #expect(TransferTarget.isLoopback(host), "\(host)")
        }
        for host in ["192.0.2.1", "10.0.0.1", "example.org", "localhost.example.org", "::2", "128.0.0.1", ""] {
            #expect(!TransferTarget.isLoopback(host), "\(host)")
        }
    }

    @Test func targetsAreRedactedForLogsAndIPv6LoopbackIsAllowed() throws {
        let secret = try TransferTarget(URL(string: "https://user:pw@example.org:8443/v3/jobs?token=abc#frag")!)
        #expect(secret.redacted == "https://example.org:8443/v3/jobs")
        #expect(secret.host == "example.org")
        #expect(secret.query == "token=abc")
        let loopback = try TransferTarget(URL(string: "http://[::1]:8080/health")!)
        #expect(loopback.host == "::1")
        #expect(loopback.redacted == "http://[::1]:8080/health")
        #expect(throws: HTTPError.insecureURL("2001:db8::1")) {
            try TransferTarget(URL(string: "http://[2001:db8::1]/")!)
        }
        // A Punycode host stays as written (decoding it would run ICU's IDNA code in the daemon).
        let punycode = try TransferTarget(URL(string: "https://xn--bcher-kva.example/v3")!)
        #expect(punycode.host == "xn--bcher-kva.example")
        #expect(punycode.redacted == "https://xn--bcher-kva.example/v3")
    }

    // MARK: Concurrency, cancellation, shutdown

    @Test func eightConcurrentTransfersAllComplete() async throws {
        // Each answer waits until all eight requests are in: one transfer after the other could not
        // pass this barrier, however fast or slow the machine is.
        let arrived = Atomic<Int>(0)
        let server = try LoopbackServer { connection, request in
            arrived.add(1, ordering: .acquiringAndReleasing)
            let deadline = ContinuousClock.now + hangGuard
            while arrived.load(ordering: .acquiring) < 8, ContinuousClock.now < deadline,
                connection.wait(.milliseconds(5))
            {}
            let together = arrived.load(ordering: .acquiring) == 8
            connection.respond(status: 200, body: Array((together ? request.target : "alone").utf8))
        }
        defer { server.stop() }
        let engine = CurlEngine()
        defer { engine.shutdown() }

        let bodies = try await withThrowingTaskGroup(of: String.self) { group in
            for index in 0..<8 {
                group.addTask {
                    let response = try await engine.send(makeRequest(.get, "\(server.url)/item/\(index)"))
                    return String(decoding: response.body, as: UTF8.self)
                }
            }
            return try await group.reduce(into: Set<String>()) { $0.insert($1) }
        }

        #expect(bodies == Set((0..<8).map { "/item/\($0)" }), "every request was in flight with the seven others")
    }

    @Test func cancellingASendEndsItPromptlyWithCancelled() async throws {
        let server = try LoopbackServer { connection, _ in _ = connection.wait(.seconds(600)) }
        defer { server.stop() }
        let engine = CurlEngine()
        defer { engine.shutdown() }

        let task = Task { await sendFailure(engine, makeRequest(.get, "\(server.url)/slow")) }
        #expect(await eventually(within: hangGuard) { !server.requests.isEmpty })
        let cancelledAt = ContinuousClock.now
        task.cancel()
        let error = await task.value

        // Cancelling hangs up from the engine's thread, which the test pool cannot delay; nothing else
        // would end this request before 600 s.
        #expect(error == .cancelled)
        #expect(await eventually(within: hangGuard) { !server.peerCloseTimes.isEmpty }, "the connection stayed open")
        if let closedAt = server.peerCloseTimes.first { #expect(closedAt - cancelledAt < .seconds(30)) }
    }

    @Test func shutdownFailsInFlightTransfersWithEngineStopped() async throws {
        let server = try LoopbackServer { connection, _ in _ = connection.wait(.seconds(600)) }
        defer { server.stop() }
        let engine = CurlEngine()

        let send = Task { await sendFailure(engine, makeRequest(.get, "\(server.url)/a")) }
        let stream = Task { () -> HTTPError? in
            do {
                for try await _ in engine.stream(makeRequest(.get, "\(server.url)/b")) {}
                return nil
            } catch {
                return error as? HTTPError
            }
        }
        #expect(await eventually(within: hangGuard) { server.requests.count == 2 })
        engine.shutdown()

        #expect(await send.value == .engineStopped)
        #expect(await stream.value == .engineStopped)
        #expect(await sendFailure(engine, makeRequest(.get, "\(server.url)/c")) == .engineStopped)
        engine.shutdown()  // idempotent
    }

    @Test func droppingTheEngineFailsItsStreamsWithEngineStopped() async throws {
        let server = try LoopbackServer { connection, _ in _ = connection.wait(.seconds(600)) }
        defer { server.stop() }
        var engine: CurlEngine? = CurlEngine()
        // A stream does not keep its engine alive (a `send` in flight does: it runs on the engine).
        let stream = engine!.stream(makeRequest(.get, "\(server.url)/events"))
        #expect(await eventually(within: hangGuard) { server.requests.count == 1 })

        engine = nil

        var parts = stream.makeAsyncIterator()
        await #expect(throws: HTTPError.engineStopped) { _ = try await parts.next() }
    }

    @Test func theTransferThreadIsNamedSwiftwingHTTP() async throws {
        let engine = CurlEngine()
        defer { engine.shutdown() }
        func threadNames() -> [String] {
            let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
            return tasks.compactMap {
                try? String(contentsOfFile: "/proc/self/task/\($0)/comm", encoding: .utf8)
                    .trimmingCharacters(in: .whitespacesAndNewlines)
            }
        }
        // The thread names itself once it runs, which a busy machine may put off for a while.
        #expect(await eventually(within: hangGuard) { threadNames().contains("swiftwing-http") }, "\(threadNames())")
    }

    @Test func errorsAndLogsNeverContainTheAuthorizationValueOrTheQuery() async throws {
        let secret = "sk-live-TOPSECRET-1234"
        let querySecret = "QUERYSECRET987"
        let capture = LogCapture()
        let engine = CurlEngine(logger: capture.logger)
        defer { engine.shutdown() }
        let server = try LoopbackServer { connection, _ in
            connection.write("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\npartial")
        }
        defer { server.stop() }
        let refusedPort = try freePort()
        let headers = [HTTPHeader(name: "Authorization", value: "Bearer \(secret)")]

        var errors: [HTTPError] = []
        for url in [
            "http://127.0.0.1:\(refusedPort)/v3/jobs?token=\(querySecret)",
            "\(server.url)/v3/jobs?token=\(querySecret)",
            "https://127.0.0.1:\(refusedPort)/v3/jobs?token=\(querySecret)", "http://192.0.2.1/x?token=\(querySecret)",
        ] {
            if let error = await sendFailure(engine, makeRequest(.get, url, headers: headers)) { errors.append(error) }
        }

        #expect(errors.count == 4)
        for error in errors {
            for text in ["\(error)", String(reflecting: error), error.localizedDescription] {
                #expect(!text.contains(secret) && !text.contains(querySecret), "\(text)")
            }
        }
        let logs = capture.text
        #expect(logs.contains("HTTP transfer ended"), "one debug line per transfer")
        #expect(!logs.contains(secret) && !logs.contains(querySecret), "\(logs)")
    }

    // MARK: Streams

    @Test func streamDeliversTheHeadThenChunksAsTheyArrive() async throws {
        let gate = Gate()
        let gateOpenedByClient = Atomic<Bool>(false)
        let server = try LoopbackServer { connection, _ in
            connection.write("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n")
            connection.write("5\r\nfirst\r\n")
            // The rest goes out only once the client has seen "first" (or after 600 s, failing the test).
            gateOpenedByClient.store(gate.wait(seconds: 600), ordering: .releasing)
            connection.write("6\r\nsecond\r\n0\r\n\r\n")
        }
        defer { server.stop() }
        let engine = CurlEngine()
        defer { engine.shutdown() }

        var parts = engine.stream(makeRequest(.get, "\(server.url)/v3/jobs/j1/stream")).makeAsyncIterator()
        guard case .head(let head) = try await parts.next() else {
            Issue.record("the head comes first")
            return
        }
        #expect(head.status == 200)
        #expect(head.header("content-type") == "text/event-stream")
        guard case .body(let first) = try await parts.next() else {
            Issue.record("then a body chunk")
            return
        }
        #expect(first == Array("first".utf8))
        gate.open()
        var rest: [UInt8] = []
        while let part = try await parts.next() {
            guard case .body(let bytes) = part else {
                Issue.record("a second head")
                return
            }
            rest += bytes
        }

        #expect(rest == Array("second".utf8))
        let openedInTime = gateOpenedByClient.load(ordering: .acquiring)
        #expect(openedInTime, "the first chunk arrived only after the server sent the rest")
    }

    @Test func cancellingTheStreamingTaskClosesTheConnection() async throws {
        let server = try LoopbackServer { connection, _ in
            connection.write("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n")
            while connection.write("c\r\ndata: tick\n\n\r\n"), connection.wait(.milliseconds(50)) {}
        }
        defer { server.stop() }
        let engine = CurlEngine()
        defer { engine.shutdown() }
        let chunks = Atomic<Int>(0)

        let task = Task { () -> HTTPError? in
            do {
                for try await part in engine.stream(makeRequest(.get, "\(server.url)/events", timeouts: .eventStream)) {
                    if case .body = part { chunks.add(1, ordering: .relaxed) }
                }
                return nil
            } catch {
                return error as? HTTPError
            }
        }
        #expect(await eventually(within: hangGuard) { chunks.load(ordering: .relaxed) >= 3 })
        let cancelledAt = ContinuousClock.now
        task.cancel()

        // Like any AsyncThrowingStream, a cancelled loop ends quietly, or with `.cancelled` when it was
        // waiting for data at that moment; either way the transfer must be gone.
        let outcome = await task.value
        #expect(outcome == nil || outcome == .cancelled, "\(String(describing: outcome))")
        // The server streams for ever: only the cancellation closes the connection. A busy pool may hold
        // the consuming task between two chunks, so the bound is the hang guard, not a stopwatch.
        #expect(await eventually(within: hangGuard) { !server.peerCloseTimes.isEmpty }, "the server still streams")
        if let closedAt = server.peerCloseTimes.first { #expect(closedAt - cancelledAt < hangGuard) }
    }

    @Test func leavingTheLoopEarlyClosesTheConnection() async throws {
        let server = try LoopbackServer { connection, _ in
            connection.write("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
            while connection.write("c\r\ndata: tick\n\n\r\n"), connection.wait(.milliseconds(50)) {}
        }
        defer { server.stop() }
        let engine = CurlEngine()
        defer { engine.shutdown() }

        var bodies = 0
        for try await part in engine.stream(makeRequest(.get, "\(server.url)/events", timeouts: .eventStream)) {
            if case .body = part { bodies += 1 }
            if bodies == 2 { break }
        }

        #expect(await eventually(within: hangGuard) { !server.peerCloseTimes.isEmpty }, "the server still streams")
    }

    @Test func aSlowConsumerGetsEveryByteWhileTheTransferPausesAndResumes() async throws {
        let total = 3 << 20
        let server = try LoopbackServer { connection, _ in
            connection.write("HTTP/1.1 200 OK\r\nContent-Length: \(total)\r\nConnection: close\r\n\r\n")
            let block = (0..<65536).map { UInt8(truncatingIfNeeded: $0 % 251) }
            for _ in 0..<(total / block.count) { guard connection.write(block) else { return } }
        }
        defer { server.stop() }
        // A 64 KiB bound forces many pauses while the consumer dawdles.
        let engine = CurlEngine(configuration: .init(streamBufferBytes: 64 << 10))
        defer { engine.shutdown() }

        var received = 0
        var corrupt = false
        var parts = 0
        for try await part in engine.stream(makeRequest(.get, "\(server.url)/big")) {
            guard case .body(let bytes) = part else { continue }
            for (offset, byte) in bytes.enumerated() where byte != UInt8((received + offset) % 65536 % 251) {
                corrupt = true
                break
            }
            received += bytes.count
            parts += 1
            if parts % 16 == 0 { try await Task.sleep(for: .milliseconds(5)) }  // a slow consumer, in real time
        }

        #expect(received == total)
        #expect(!corrupt)
    }

    @Test func versionInfoDescribesTheLinkedLibcurl() {
        let info = CurlEngine.versionInfo
        #expect(info.libcurl.first?.isNumber == true)
        #expect(info.sslBackend.lowercased().contains("ssl") || info.sslBackend.lowercased().contains("tls"))
        #expect(CurlEngine.supportsTLS13("OpenSSL/3.0.19"))
        #expect(!CurlEngine.supportsTLS13("OpenSSL/1.1.0l"))
        #expect(CurlEngine.supportsTLS13("GnuTLS/3.7.9"))
    }
}
