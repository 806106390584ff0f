import Foundation
import Testing

@testable import Talaria

@Suite("SSE parser: WHATWG event stream rules")
struct SSEParserTests {
    private func events(_ text: String, chunks: [Int] = []) -> [SSEEvent] {
        parse(text.bytes, chunkSizes: chunks).events
    }

    @Test("a data line and a blank line make one message event")
    func simplest() {
        #expect(events("data: hello\n\n") == [SSEEvent(type: "message", data: "hello")])
        #expect(events("data: hello\n").isEmpty)  // no blank line yet: not dispatched
    }

    @Test("one leading BOM is dropped, a second one is content")
    func bom() {
        #expect(events("\u{FEFF}data: x\n\n") == [SSEEvent(data: "x")])
        // The second BOM makes the field name "\u{FEFF}data": an unknown field, so nothing is dispatched.
        #expect(events("\u{FEFF}\u{FEFF}data: x\n\n").isEmpty)
        // A BOM in the middle of the stream is not dropped either.
        #expect(events("data: a\n\n\u{FEFF}data: b\n\n") == [SSEEvent(data: "a")])
    }

    @Test("a BOM split over chunks is still dropped; a BOM prefix that is not a BOM is kept as content")
    func bomSplit() {
        let stream = "\u{FEFF}data: x\n\n".bytes
        for first in 1...3 {
            #expect(parse(stream, chunkSizes: [first, 1, 1]).events == [SSEEvent(data: "x")], "split after \(first)")
        }
        // EF BB, then "data": not a BOM, so the two bytes stay and spoil the field name.
        let notBOM: [UInt8] = [0xEF, 0xBB] + "data: z\n\n".bytes
        #expect(parse(notBOM, chunkSizes: [1, 1]).events.isEmpty)
        #expect(parse(notBOM).events.isEmpty)
        // A BOM after a BOM-looking start of another stream (after finish) is dropped again.
        var parser = SSEParser()
        _ = try? parser.feed("\u{FEFF}data: 1\n\n".bytes)
        parser.finish()
        #expect((try? parser.feed("\u{FEFF}data: 2\n\n".bytes)) == [SSEEvent(data: "2")])
    }

    @Test("CR, LF and CRLF all end lines; a CRLF split over two chunks is one line end")
    func lineEnds() {
        let mixed = "data: a\rdata: b\r\ndata: c\n\r\n"
        #expect(events(mixed) == [SSEEvent(data: "a\nb\nc")])
        // Split between CR and LF: if the LF counted as a second line end, "a" would be dispatched alone.
        let split = "data: a\r\ndata: b\r\n\r\n".bytes
        let crIndex = split.firstIndex(of: 0x0D)!
        #expect(parse(split, chunkSizes: [crIndex + 1, 1]).events == [SSEEvent(data: "a\nb")])
        #expect(parse(split, chunkSizes: Array(repeating: 1, count: split.count)).events == [SSEEvent(data: "a\nb")])
        // CR at the end of one chunk, then something else than LF: two line ends... only one here.
        #expect(parse("data: a\rdata: b\r\r".bytes, chunkSizes: [8, 8]).events == [SSEEvent(data: "a\nb")])
        // CR CR is a line end and an empty line.
        #expect(events("data: a\r\rdata: b\r\r") == [SSEEvent(data: "a"), SSEEvent(data: "b")])
    }

    @Test("comments are ignored, also between fields of one event")
    func comments() {
        #expect(events(": hello\ndata: x\n:another\ndata: y\n\n") == [SSEEvent(data: "x\ny")])
        #expect(events(":\n\n").isEmpty)
    }

    @Test("a field without colon has an empty value")
    func fieldWithoutColon() {
        #expect(events("data\n\n") == [SSEEvent(data: "")])
        #expect(events("data\ndata\n\n") == [SSEEvent(data: "\n")])
        #expect(events("event\ndata: x\n\n") == [SSEEvent(type: "message", data: "x")])
    }

    @Test("exactly one space after the colon is removed")
    func leadingSpace() {
        #expect(events("data:  two\n\n") == [SSEEvent(data: " two")])
        #expect(events("data:none\n\n") == [SSEEvent(data: "none")])
        #expect(events("data: \n\n") == [SSEEvent(data: "")])
        #expect(events("data:\tx\n\n") == [SSEEvent(data: "\tx")])  // only a space is removed
    }

    @Test("data lines are joined with LF, with no trailing LF")
    func dataJoined() {
        #expect(events("data: {\"a\":\ndata: 1}\n\n") == [SSEEvent(data: "{\"a\":\n1}")])
    }

    @Test("an empty event type is message; the type does not carry over to the next event")
    func eventType() {
        #expect(events("event:\ndata: x\n\n") == [SSEEvent(type: "message", data: "x")])
        #expect(
            events("event: progress\ndata: x\n\ndata: y\n\n") == [
                SSEEvent(type: "progress", data: "x"), SSEEvent(type: "message", data: "y"),
            ])
        // An event with a type but no data is not dispatched, and its type is forgotten.
        #expect(events("event: ping\n\ndata: z\n\n") == [SSEEvent(type: "message", data: "z")])
        // The last event field wins.
        #expect(events("event: a\nevent: b\ndata: x\n\n") == [SSEEvent(type: "b", data: "x")])
    }

    @Test("id sets the last event id, kept across events; an id with NUL is ignored; an empty id resets")
    func ids() {
        let run = parse("id: 1\ndata: a\n\ndata: b\n\nid: 2\u{0}x\ndata: c\n\nid\ndata: d\n\n".bytes)
        #expect(
            run.events == [
                SSEEvent(data: "a", lastEventID: "1"), SSEEvent(data: "b", lastEventID: "1"),
                SSEEvent(data: "c", lastEventID: "1"), SSEEvent(data: "d", lastEventID: ""),
            ])
        // An id in an event without data still updates the last event id (the spec sets it first).
        let idOnly = parse("id: 42\n\n".bytes)
        #expect(idOnly.events.isEmpty)
        #expect(idOnly.lastEventID == "42")
        // An id in an unterminated event is not taken.
        #expect(parse("id: 1\ndata: a\n\nid: 2\ndata: b\n".bytes).lastEventID == "1")
    }

    @Test("retry is taken only when it is all ASCII digits")
    func retry() {
        #expect(parse("retry: 5000\n".bytes).reconnectionTime == 5000)
        #expect(parse("retry: 5000\nretry: 50a0\n".bytes).reconnectionTime == 5000)
        #expect(parse("retry: -1\n".bytes).reconnectionTime == nil)
        #expect(parse("retry:  300\n".bytes).reconnectionTime == nil)  // " 300" after one space is removed
        #expect(parse("retry:\n".bytes).reconnectionTime == nil)
        #expect(parse("retry: 1.5\n".bytes).reconnectionTime == nil)
        #expect(parse("retry: 99999999999999999999999\n".bytes).reconnectionTime == Int.max)
        #expect(events("retry: 10\n\n").isEmpty)  // retry alone dispatches nothing
    }

    @Test("unknown fields are ignored")
    func unknownFields() {
        #expect(events("foo: bar\ndata: x\nDATA: y\n\n") == [SSEEvent(data: "x")])
    }

    @Test("an unterminated final event is discarded at the end of the stream")
    func unterminated() {
        let run = parse("data: a\n\ndata: b\n".bytes)
        #expect(run.events == [SSEEvent(data: "a")])
        #expect(run.discardedAtEnd)
        let partialLine = parse("data: a\n\ndata: b".bytes)
        #expect(partialLine.events == [SSEEvent(data: "a")])
        #expect(partialLine.discardedAtEnd)
        #expect(parse("data: a\n\n".bytes).discardedAtEnd == false)
        // After finish, the next connection's stream starts clean (no half event leaks into it).
        var parser = SSEParser()
        _ = try? parser.feed("data: stale\n".bytes)
        parser.finish()
        #expect((try? parser.feed("data: fresh\n\n".bytes)) == [SSEEvent(data: "fresh")])
    }

    @Test("UTF-8 split over chunks at every byte decodes correctly")
    func utf8Split() {
        let text = "event: résumé\ndata: é€😀 ノルウェイの森 Мастер\n\n"
        let whole = parse(text.bytes).events
        #expect(whole == [SSEEvent(type: "résumé", data: "é€😀 ノルウェイの森 Мастер")])
        for cut in 1..<text.utf8.count {
            #expect(parse(text.bytes, chunkSizes: [cut]).events == whole, "cut at \(cut)")
        }
        #expect(parse(text.bytes, chunkSizes: Array(repeating: 1, count: text.utf8.count)).events == whole)
    }

    @Test("invalid UTF-8 becomes U+FFFD instead of failing")
    func invalidUTF8() {
        let bytes = "data: a".bytes + [0xE2, 0x82] + "b\n\n".bytes
        #expect(parse(bytes).events == [SSEEvent(data: "a\u{FFFD}b")])
    }

    @Test("the recorded job stream: the expected events, ids and retry")
    func recordedStream() {
        let run = parse(Fixtures.jobStream)
        #expect(run.error == nil)
        #expect(run.reconnectionTime == 5000)
        #expect(run.lastEventID == "10")
        #expect(
            run.events.map(\.type) == [
                "progress", "progress", "ping", "progress", "result", "result", "enrichment_degraded", "result",
                "vision_debug", "progress", "result", "ping", "completed", "complete",
            ])
        #expect(run.events[7].data.contains("\n"))  // the two-line data event
        #expect(run.events[4].lastEventID == "4")
        #expect(run.events[6].lastEventID == "5")  // an event without id keeps the last one
    }
}
