import Foundation
import Testing

@testable import TalariaReferenceServer

@Suite struct StreamTests {
    @Test func streamTextShape() async throws {
        try await withServer { server in
            let job = try await server.createJob(image: jpeg("shape"))
            let response = try await server.stream(job.stream, token: job.token)
            #expect(response.status == 200 && response.complete)
            #expect(response.header("content-type") == "text/event-stream")
            #expect(response.text.hasPrefix(": connection established\nretry: 50\n\n"))
            let (_, retry, allEvents) = parseSSE(response.text)
            #expect(retry == "50")
            // A ping (no id) comes only when the server was held up for a ping interval: a loaded machine, not the shape.
            let events = allEvents.filter { $0.event != "ping" }
            let ids = events.compactMap { $0.id.flatMap { Int($0) } }
            #expect(ids == Array(1...events.count), "ids must increment from 1: \(ids)")
            #expect(events.allSatisfy { $0.json != nil })

            let progress = events.filter { $0.event == "progress" }
            let first = try #require(progress.first?.json)
            #expect(first["message"] == nil, "the first progress event has no message")
            for key in ["jobId", "status", "progress", "processedCount", "totalCount", "timestamp"] {
                #expect(first[key] != nil, "\(key)")
            }
            #expect(progress.dropFirst().allSatisfy { $0.json?["message"] is String })
            let values = progress.compactMap { $0.json?["progress"] as? Double }
            #expect(values == values.sorted() && values.allSatisfy { (0...1).contains($0) })

            let expected = Catalog.recognise(jpeg("shape"))
            let results = events.filter { $0.event == "result" }
            #expect(results.count == expected.count + 1)
            let bookResults = results.filter { $0.json?["book"] != nil || $0.json?["books"] != nil }
            #expect(bookResults.count == expected.count)
            #expect(results.contains { $0.json?["status"] as? String == "processing" && $0.json?["message"] is String })

            let terminal = try #require(events.last)
            #expect(terminal.event == "completed")
            let data = try #require(terminal.json)
            #expect(data["status"] as? String == "completed" && data["jobId"] as? String == job.id)
            let books = try #require(data["books"] as? [[String: Any]])
            #expect(books.compactMap { ($0["isbn"] as? String).flatMap(ISBN.isbn13) } == expected.map(\.book.isbn13))
            #expect((data["summary"] as? [String: Any])?["totalBooks"] as? Int == expected.count)
            let stats = try await server.stats()
            #expect(stats["streamsOpened"] as? Int == 1 && stats["resumes"] as? Int == 0)
            #expect((stats["booksByJob"] as? [String: [String]])?[job.id] == expected.map(\.book.isbn13))
        }
    }

    @Test func streamNeedsTheJobToken() async throws {
        try await withServer { server in
            let job = try await server.createJob()
            #expect(try await server.stream(job.stream, token: "wrong").status == 401)
            #expect(try await server.request("GET", job.stream).status == 401)
            #expect(try await server.stream("/v3/jobs/scans/nope/stream", token: job.token).status == 404)
        }
    }

    @Test func resumeWithLastEventIDReplaysOnlyLaterEvents() async throws {
        try await withServer { server in
            let job = try await server.createJob()
            // Pings (no id) come only when the server was held up for a ping interval: not part of the replay.
            let full = parseSSE(try await server.stream(job.stream, token: job.token).text).events.filter {
                $0.event != "ping"
            }
            let resumed = try await server.stream(job.stream, token: job.token, lastEventID: "3")
            let events = parseSSE(resumed.text).events.filter { $0.event != "ping" }
            #expect(events == Array(full.dropFirst(3)))
            // Everything already seen: a finished job replays its terminal event.
            let again = parseSSE(try await server.stream(job.stream, token: job.token, lastEventID: full.last?.id).text)
                .events
            #expect(again == [full.last!])
            let stats = try await server.stats()
            #expect(stats["streamsOpened"] as? Int == 3 && stats["resumes"] as? Int == 2)
        }
    }

    @Test func resumeWhileRunningContinuesLive() async throws {
        try await withServer({ $0.recognitionDelayMs = 400 }) { server in
            let job = try await server.createJob()
            try await server.queueFaults(["stream:drop-after:2"])
            let dropped = try await server.stream(job.stream, token: job.token)
            #expect(!dropped.complete, "drop-after must cut the transfer")
            let firstEvents = parseSSE(dropped.text).events
            #expect(firstEvents.map(\.id) == ["1", "2"])
            #expect(!firstEvents.contains { $0.event == "completed" })
            let rest = parseSSE(try await server.stream(job.stream, token: job.token, lastEventID: "2").text).events
            #expect(rest.first?.id == "3" && rest.last?.event == "completed")
        }
    }

    @Test func duplicateTerminal() async throws {
        try await withServer { server in
            let job = try await server.createJob()
            try await server.queueFaults(["stream:duplicate-terminal"])
            let events = parseSSE(try await server.stream(job.stream, token: job.token).text).events
            #expect(events.filter { $0.event == "completed" }.count == 2)
            #expect(events.suffix(2).first == events.last)
        }
    }

    @Test func strippedTerminalPointsToResults() async throws {
        try await withServer({ $0.recognitionDelayMs = 1000 }) { server in
            let job = try await server.createJob(image: jpeg("stripped"))
            let early = try await server.request("GET", "/v3/jobs/scans/\(job.id)/results")
            #expect(early.status == 404, "results are 404 until the job finishes")
            try await server.queueFaults(["stream:stripped"])
            let events = parseSSE(try await server.stream(job.stream, token: job.token).text).events
            let terminal = try #require(events.last?.json)
            #expect(events.last?.event == "completed")
            #expect(terminal["books"] == nil && terminal["results"] == nil)
            let resultsURL = try #require(terminal["resultsUrl"] as? String)
            let results = try await server.request("GET", resultsURL)
            #expect(results.status == 200)
            let data = try #require(results.object?["data"] as? [String: Any])
            #expect(data["status"] as? String == "completed" && data["jobId"] as? String == job.id)
            let books = try #require(data["results"] as? [[String: Any]])
            #expect(
                books.compactMap { ($0["isbn"] as? String).flatMap(ISBN.isbn13) }
                    == Catalog.recognise(jpeg("stripped")).map(\.book.isbn13))
            #expect(try await server.stats()["resultsFetches"] as? Int == 2)
        }
    }

    @Test func terminalVariants() async throws {
        try await withServer { server in
            try await server.queueFaults(["stream:results-key", "stream:complete-alias", "stream:progress-100"])
            let a = try await server.createJob(key: "a")
            let resultsKey = parseSSE(try await server.stream(a.stream, token: a.token).text).events
            #expect(
                resultsKey.last?.event == "completed" && resultsKey.last?.json?["results"] is [Any]
                    && resultsKey.last?.json?["books"] == nil)

            let b = try await server.createJob(key: "b")
            let alias = parseSSE(try await server.stream(b.stream, token: b.token).text).events
            #expect(alias.last?.event == "complete" && alias.last?.json?["books"] is [Any])

            let c = try await server.createJob(key: "c")
            let percent = parseSSE(try await server.stream(c.stream, token: c.token).text).events
            let values = percent.filter { $0.event == "progress" }.compactMap { $0.json?["progress"] as? Double }
            #expect(values.contains { $0 > 1 } && values.allSatisfy { (0...100).contains($0) })
        }
    }

    @Test func malformedEventAndBookThenTheRest() async throws {
        try await withServer { server in
            let job = try await server.createJob()
            try await server.queueFaults(["stream:malformed"])
            let events = parseSSE(try await server.stream(job.stream, token: job.token).text).events
            #expect(events.contains { $0.json == nil }, "one event must be invalid JSON")
            let withBadBook = try #require(
                events.first { ($0.json?["books"] as? [[String: Any]])?.first?["title"] is [Any] })
            #expect(withBadBook.id == nil)
            #expect(events.last?.event == "completed")
        }
    }

    @Test func badISBN() async throws {
        try await withServer { server in
            let job = try await server.createJob(image: jpeg("bad isbn"))
            try await server.queueFaults(["stream:bad-isbn"])
            let events = parseSSE(try await server.stream(job.stream, token: job.token).text).events
            let books = try #require(events.last?.json?["books"] as? [[String: Any]])
            let isbns = books.compactMap { $0["isbn"] as? String }
            #expect(ISBN.isbn13(isbns[0]) == nil, "the first book's ISBN must fail its checksum")
            #expect(isbns.dropFirst().allSatisfy { ISBN.isbn13($0) != nil })
        }
    }

    @Test func wrongTypes() async throws {
        try await withServer { server in
            let job = try await server.createJob(image: jpeg("wrong types"))
            try await server.queueFaults(["stream:wrong-types"])
            let events = parseSSE(try await server.stream(job.stream, token: job.token).text).events
            let books = try #require(events.last?.json?["books"] as? [[String: Any]])
            #expect(books[0]["confidence"] as? String == "high" && books[0]["authors"] as? Int == 3)
            #expect(books[0]["author"] == nil && books[0]["title"] is String)
            #expect(books.dropFirst().allSatisfy { $0["confidence"] is Double })
        }
    }

    @Test func timeoutEventThenJobStillFinishes() async throws {
        try await withServer({ $0.recognitionDelayMs = 200 }) { server in
            let job = try await server.createJob()
            try await server.queueFaults(["stream:timeout-event"])
            let response = try await server.stream(job.stream, token: job.token)
            let events = parseSSE(response.text).events
            #expect(events.last?.event == "timeout")
            let error = try #require(events.last?.json?["error"] as? [String: Any])
            #expect(error["code"] as? String == "STREAM_TIMEOUT" && error["retryable"] as? Bool == true)
            #expect(try await server.waitFinished(job.id) == "completed")
        }
    }

    @Test func failedAndRetryableFailed() async throws {
        // Long enough that the stream surely connects while the job runs, even on a loaded machine.
        try await withServer({ $0.recognitionDelayMs = 3000 }) { server in
            try await server.queueFaults(["stream:failed", "stream:failed-retryable"])
            for (key, retryable) in [("f1", false), ("f2", true)] {
                let job = try await server.createJob(key: key)
                let events = parseSSE(try await server.stream(job.stream, token: job.token).text).events
                #expect(events.last?.event == "failed")
                let error = try #require(events.last?.json?["error"] as? [String: Any])
                #expect(error["retryable"] as? Bool == retryable && error["code"] is String)
                let final = try await server.waitFinished(job.id)
                #expect(final == "failed")
            }
        }
    }

    @Test func neverEndSendsOnlyPings() async throws {
        try await withServer({ $0.pingIntervalMs = 50 }) { server in
            let job = try await server.createJob()
            try await server.queueFaults(["stream:never-end"])
            // Read for 3 s: 60 ping intervals, so a machine that holds the server up for a while still sees two.
            let response = try await server.stream(job.stream, token: job.token, timeout: 3)
            #expect(!response.complete)
            let events = parseSSE(response.text).events
            #expect(events.count >= 2, "pings every 50 ms for 3 s: \(response.text)")
            #expect(events.allSatisfy { $0.event == "ping" && $0.id == nil })
        }
    }

    @Test func pingsWhileIdle() async throws {
        try await withServer({
            $0.pingIntervalMs = 30
            $0.recognitionDelayMs = 400
        }) { server in
            let job = try await server.createJob()
            let events = parseSSE(try await server.stream(job.stream, token: job.token).text).events
            #expect(events.contains { $0.event == "ping" && $0.json?["timestamp"] is String })
            #expect(events.last?.event == "completed")
        }
    }

    @Test func hugeLine() async throws {
        try await withServer { server in
            let job = try await server.createJob()
            try await server.queueFaults(["stream:huge-line"])
            let response = try await server.stream(job.stream, token: job.token, timeout: 20)
            #expect(response.body.count > 10_000_000)
            let tail = response.body.suffix(1000)
            #expect(!tail.contains(UInt8(ascii: "\n")), "the huge line has no line end")
        }
    }
}
