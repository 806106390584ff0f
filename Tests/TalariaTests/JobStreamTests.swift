import Foundation
import Testing

@testable import Talaria

@Suite("Following one job's stream")
struct JobStreamTests {
    private let base = URL(string: "https://api.example.org/")!
    private let t0 = Date(timeIntervalSince1970: 1_800_000_000)

    private func completions(_ actions: [JobStream.Action]) -> [[TalariaBook]] {
        actions.compactMap { if case .complete(let books, _) = $0 { books } else { nil } }
    }

    @Test("the recorded stream in random chunks: progress, warnings, then exactly one completion with six books")
    func recordedStream() {
        for seed in 0..<50 as Range<UInt64> {
            var generator = SeededGenerator(seed: seed)
            var stream = JobStream(jobID: "j", base: base)
            stream.connected(now: t0)
            var actions: [JobStream.Action] = []
            var offset = 0
            for size in randomChunking(count: Fixtures.jobStream.count, using: &generator) {
                let end = min(offset + size, Fixtures.jobStream.count)
                actions += stream.receive(Fixtures.jobStream[offset..<end], now: t0 + 30)
                offset = end
            }
            let done = completions(actions)
            #expect(done.count == 1, "seed \(seed)")
            #expect(done.first?.count == 6)
            #expect(stream.finished)
            #expect(stream.reconnectDelay == 5)
            #expect(stream.lastEventID == "9")  // the duplicate terminal (id 10) was not read
            let progress = actions.compactMap { if case .progress(let f, _) = $0 { f } else { nil } }
            #expect(progress == [0, 0.1, 0.35, 0.8])
            #expect(actions.contains { if case .warning = $0 { true } else { false } })
        }
    }

    @Test("a stripped completion uses the books of result events, else asks for the results")
    func strippedCompletion() {
        var stream = JobStream(jobID: "j", base: base)
        stream.connected(now: t0)
        let withResults = """
            event: result
            data: {"title":"Dune","isbn":"9780441013593"}

            event: completed
            data: {"status":"completed"}


            """
        let result1 = stream.receive(withResults.bytes, now: t0)
        #expect(completions(result1).first?.map(\.title) == ["Dune"])

        var bare = JobStream(jobID: "j", base: base)
        bare.connected(now: t0)
        let actions = bare.receive(
            "event: complete\ndata: {\"resultsUrl\":\"/v3/jobs/scans/j/results\"}\n\n".bytes, now: t0)
        #expect(actions == [.fetchResults(url: URL(string: "https://api.example.org/v3/jobs/scans/j/results"))])
        var empty = JobStream(jobID: "j", base: base)
        let result2 = empty.receive("event: completed\ndata: {\"books\":[]}\n\n".bytes, now: t0)
        #expect(result2 == [.complete(books: [])])
    }

    @Test("failed and timeout end the stream; later bytes are ignored")
    func terminalFailures() {
        var failed = JobStream(jobID: "j", base: base)
        let actions = failed.receive(
            "event: error\ndata: {\"code\":\"CANCELED\",\"message\":\"by user\"}\n\n".bytes, now: t0)
        #expect(actions == [.failed(JobFailure(code: "CANCELED", message: "by user", retryable: false))])
        let result3 = failed.receive("event: completed\ndata: {\"books\":[]}\n\n".bytes, now: t0)
        #expect(result3.isEmpty)
        let result4 = failed.disconnected()
        #expect(!result4)  // nothing to resume

        var timedOut = JobStream(jobID: "j", base: base)
        let timeout = timedOut.receive(
            "event: timeout\ndata: {\"error\":{\"code\":\"STREAM_TIMEOUT\",\"retryable\":true}}\n\n".bytes, now: t0)
        guard case .pollStatus(let reason) = timeout.first else {
            Issue.record("\(timeout)")
            return
        }
        #expect(reason.contains("STREAM_TIMEOUT"))
    }

    @Test("a drop mid-event: the half event is discarded, the stream resumes with Last-Event-ID")
    func resume() {
        var stream = JobStream(jobID: "j", base: base)
        stream.connected(now: t0)
        let first =
            "retry: 2000\nid: 1\nevent: progress\ndata: {\"progress\":0.5}\n\nid: 2\nevent: completed\ndata: {\"books\":[{\"ti"
        let result5 = stream.receive(first.bytes, now: t0)
        #expect(result5 == [.progress(fraction: 0.5, message: nil)])
        let result6 = stream.disconnected()
        #expect(result6)
        #expect(stream.lastEventID == "1")
        #expect(stream.reconnectDelay == 2)
        stream.connected(now: t0 + 3)
        let replay = "id: 2\nevent: completed\ndata: {\"books\":[{\"title\":\"Emma\",\"author\":\"Jane Austen\"}]}\n\n"
        let result7 = stream.receive(replay.bytes, now: t0 + 3)
        #expect(completions(result7).first?.map(\.title) == ["Emma"])
    }

    @Test("five minutes without a terminal event, pings or not: poll the status")
    func abandonment() {
        var stream = JobStream(jobID: "j", base: base)
        stream.connected(now: t0)
        let result8 = stream.receive("event: ping\ndata: {}\n\n".bytes, now: t0 + 299)
        #expect(result8.isEmpty)
        let result9 = stream.tick(now: t0 + 299)
        #expect(result9 == nil)
        stream.connected(now: t0 + 200)  // a reconnection does not restart the clock
        guard case .pollStatus = stream.receive("event: ping\ndata: {}\n\n".bytes, now: t0 + 300).last else {
            Issue.record("no poll after 300 s")
            return
        }
        #expect(stream.finished)
        let again = stream.tick(now: t0 + 301)
        #expect(again == nil)  // once
        var quiet = JobStream(jobID: "j", base: base)
        quiet.connected(now: t0)
        guard case .pollStatus = quiet.tick(now: t0 + 300) else {
            Issue.record("tick")
            return
        }
        let resume = quiet.disconnected()
        #expect(!resume)  // polled, not resumed
    }

    @Test("a 10 MB line ends the stream with a poll, events before it are kept")
    func overLimit() {
        var stream = JobStream(jobID: "j", base: base)
        stream.connected(now: t0)
        var bytes = "event: progress\ndata: {\"progress\":0.2}\n\ndata: ".bytes
        bytes += [UInt8](repeating: 0x78, count: 10_000_000)
        let actions = stream.receive(bytes, now: t0)
        #expect(actions.first == .progress(fraction: 0.2, message: nil))
        guard case .pollStatus(let reason) = actions.last else {
            Issue.record("\(actions)")
            return
        }
        #expect(reason.contains("longer than 1048576 bytes"))
        let result10 = stream.disconnected()
        #expect(!result10)  // not resumed: the job's status is polled instead
    }
}
