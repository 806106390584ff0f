import Foundation
import Testing

@testable import Talaria

private let base = URL(string: "https://api.example.org/")!

@Suite("Stream events (docs/protocol.md §2)")
struct StreamEventTests {
    private func decodeAll(_ events: [SSEEvent]) -> (events: [TalariaEvent], warnings: [TalariaWarning]) {
        var decoder = TalariaStreamDecoder(base: base)
        var out: [TalariaEvent] = []
        var warnings: [TalariaWarning] = []
        for event in events {
            let decoded = decoder.decode(event)
            warnings += decoded.warnings
            if let event = decoded.event { out.append(event) }
        }
        return (out, warnings)
    }

    @Test("the recorded job stream: every alias, the bad event and bad books skipped, one terminal event")
    func recordedStream() throws {
        let (events, warnings) = decodeAll(parse(Fixtures.jobStream).events)
        // 14 SSE events: the unknown one and the duplicate terminal are dropped, the malformed one skipped.
        #expect(events.count == 11)
        guard case .progress(let first) = events[0], case .progress(let second) = events[1],
            case .progress(let third) = events[3]
        else {
            Issue.record("expected progress events, got \(events)")
            return
        }
        #expect(first.fraction == 0)
        #expect(first.message == nil)
        #expect(second.fraction == 0.1)
        #expect(third.fraction == 0.35)  // 0–100 scale
        #expect(third.totalCount == 5)
        #expect(events[2] == .ping)
        guard case .result(let books, _, _) = events[4] else {
            Issue.record("\(events[4])")
            return
        }
        #expect(books.map(\.title) == ["Dune"])  // a bare book
        guard case .result(let none, let status, let message) = events[5] else {
            Issue.record("\(events[5])")
            return
        }
        #expect(none.isEmpty)  // status-only result
        #expect(status == .processing)
        #expect(message == "Enriching 4 more books")
        guard case .enrichmentDegraded(let isbn, _, let reason, let fallback) = events[6] else { return }
        #expect(isbn == "9780547928227" && reason == "PROVIDER_TIMEOUT" && fallback == "cache")
        guard case .result(let hobbit, _, _) = events[7] else {
            Issue.record("\(events[7])")
            return
        }
        #expect(hobbit.map(\.isbn13) == ["9780547928227"])  // two bad books skipped, the good one kept
        guard case .completed(let completion) = events[10] else {
            Issue.record("\(events[10])")
            return
        }
        #expect(completion.booksIncluded)
        #expect(completion.books.count == 6)
        #expect(
            completion.resultsURL?.absoluteString
                == "https://api.example.org/v3/jobs/scans/7f3c9a2e-5b1d-4c8e-9f00-2a6b8c4d1e01/results")
        let text = warnings.map(\.message).joined(separator: "\n")
        #expect(text.contains("not a JSON object"))  // "not a book"
        #expect(text.contains("neither a title nor a valid ISBN"))  // {"confidence":0.2}
        #expect(text.contains("is not JSON"))  // event id 8
        #expect(text.contains("second terminal event"))
        #expect(text.contains("9780441013594"))  // Children of Dune's bad checksum
    }

    @Test("aliases: complete/completed, error/failed, both failure shapes, timeout, ping")
    func aliases() {
        let (events, _) = decodeAll([
            SSEEvent(type: "complete", data: #"{"status":"completed","books":[]}"#)
        ])
        #expect(
            events == [.completed(JobCompletion(status: .completed, books: [], booksIncluded: true, resultsURL: nil))])
        let (failed, _) = decodeAll([
            SSEEvent(
                type: "error", data: #"{"jobId":"j","error":{"code":"PROVIDER_ERROR","message":"x","retryable":true}}"#)
        ])
        #expect(failed == [.failed(JobFailure(code: "PROVIDER_ERROR", message: "x", retryable: true))])
        let (flat, _) = decodeAll([SSEEvent(type: "failed", data: #"{"code":"CANCELED","message":"by user"}"#)])
        guard case .failed(let failure) = flat.first else {
            Issue.record("\(flat)")
            return
        }
        #expect(failure.isCanceled)
        #expect(!failure.retryable)
        let (timeout, _) = decodeAll([
            SSEEvent(type: "timeout", data: #"{"error":{"code":"STREAM_TIMEOUT","retryable":true}}"#)
        ])
        #expect(timeout == [.timeout(JobFailure(code: "STREAM_TIMEOUT", message: nil, retryable: true))])
        #expect(!TalariaEvent.timeout(JobFailure(code: nil, message: nil, retryable: true)).isTerminal)
        let (ping, warnings) = decodeAll([SSEEvent(type: "ping", data: "")])
        #expect(ping == [.ping])
        #expect(warnings.isEmpty)
    }

    @Test("a stripped completed event says so, so the results are fetched (§4)")
    func strippedCompletion() {
        let (events, _) = decodeAll([
            SSEEvent(type: "completed", data: #"{"jobId":"j","status":"completed","summary":{"total":3}}"#)
        ])
        guard case .completed(let completion) = events.first else {
            Issue.record("\(events)")
            return
        }
        #expect(!completion.booksIncluded)
    }

    @Test("unknown events are ignored without a warning; an event named inside the data is understood")
    func unknownAndNamedInData() {
        let (events, warnings) = decodeAll([
            SSEEvent(type: "vision_debug", data: "{}"),
            SSEEvent(type: "message", data: #"{"type":"progress","progress":0.5}"#),
        ])
        #expect(warnings.isEmpty)
        #expect(events == [.progress(JobProgress(status: nil, fraction: 0.5))])
    }

    @Test("progress: once a value above 1 is seen, 1 means 1 %")
    func progressScale() {
        let (events, _) = decodeAll([
            SSEEvent(type: "progress", data: #"{"progress":50}"#),
            SSEEvent(type: "progress", data: #"{"progress":1}"#),
            SSEEvent(type: "progress", data: #"{"progress":100}"#),
            SSEEvent(type: "progress", data: #"{"progress":250}"#),
        ])
        #expect(events.map { if case .progress(let p) = $0 { p.fraction } else { -1 } } == [0.5, 0.01, 1.0, nil])
    }
}
