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
        #expect(events("event: progress\ndata: x\n\ndata: y\n\n") == [
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
        #expect(run.events == [
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
        #expect(run.events.map(\.type) == [
            "progress", "progress", "ping", "progress", "result", "result", "enrichment_degraded", "result",
            "vision_debug", "progress", "result", "ping", "completed", "complete",
        ])
        #expect(run.events[7].data.contains("\n"))  // the two-line data event
        #expect(run.events[4].lastEventID == "4")
        #expect(run.events[6].lastEventID == "5")  // an event without id keeps the last one
    }
}

@Suite("SSE parser: any chunking gives the same events")
struct SSEChunkingPropertyTests {
    @Test("500 random chunkings of the recorded stream equal feeding it whole")
    func recordedStreamAnyChunking() {
        let whole = parse(Fixtures.jobStream)
        for seed in 0..<500 as Range<UInt64> {
            var generator = SeededGenerator(seed: seed)
            let sizes = randomChunking(count: Fixtures.jobStream.count, using: &generator)
            let run = parse(Fixtures.jobStream, chunkSizes: sizes)
            #expect(run == whole, "seed \(seed): \(run) vs \(whole)")
            if run != whole { break }
        }
    }

    @Test("the line-end style (CR, LF, CRLF, mixed) does not change the events")
    func lineEndStyleDoesNotMatter() {
        let lf = parse(Fixtures.jobStream).events
        // Normalise the fixture to LF first, then rewrite every LF as a random line end.
        var normalised: [UInt8] = []
        var index = 0
        let source = Fixtures.jobStream
        while index < source.count {
            if source[index] == 0x0D {
                normalised.append(0x0A)
                if index + 1 < source.count, source[index + 1] == 0x0A { index += 1 }
            } else {
                normalised.append(source[index])
            }
            index += 1
        }
        for seed in 0..<100 as Range<UInt64> {
            var generator = SeededGenerator(seed: seed)
            var rewritten: [UInt8] = []
            for byte in normalised {
                if byte == 0x0A {
                    // A bare LF right after a bare CR would read as one CRLF: not allowed there.
                    let afterBareCR = rewritten.last == 0x0D
                    switch Int.random(in: afterBareCR ? 1..<3 : 0..<3, using: &generator) {
                    case 0: rewritten.append(0x0A)
                    case 1: rewritten.append(0x0D)
                    default: rewritten += [0x0D, 0x0A]
                    }
                } else {
                    rewritten.append(byte)
                }
            }
            let sizes = randomChunking(count: rewritten.count, using: &generator)
            #expect(parse(rewritten, chunkSizes: sizes).events == lf, "seed \(seed)")
        }
    }

    @Test("2000 random streams of SSE fragments: same result as a literal reading of the spec, any chunking")
    func differentialAgainstReference() {
        let fragments: [[UInt8]] = [
            "data".bytes, "event".bytes, "id".bytes, "retry".bytes, ":".bytes, ": ".bytes, " ".bytes,
            "\n".bytes, "\n".bytes, "\r".bytes, "\r\n".bytes, "x".bytes, "yz".bytes, "é".bytes, "😀".bytes,
            [0], "7".bytes, "12".bytes, [0xEF, 0xBB, 0xBF], [0xE2], "message".bytes, "\n\n".bytes,
        ]
        for seed in 0..<2000 as Range<UInt64> {
            var generator = SeededGenerator(seed: seed)
            var stream: [UInt8] = []
            if Int.random(in: 0..<4, using: &generator) == 0 { stream += [0xEF, 0xBB, 0xBF] }
            for _ in 0..<Int.random(in: 0...80, using: &generator) {
                stream += fragments.randomElement(using: &generator)!
            }
            let expected = referenceParse(stream)
            let whole = parse(stream)
            let chunked = parse(stream, chunkSizes: randomChunking(count: stream.count, using: &generator))
            #expect(whole.events == expected.events, "seed \(seed) whole")
            #expect(whole.lastEventID == expected.lastEventID, "seed \(seed) last event id")
            #expect(whole.reconnectionTime == expected.retry, "seed \(seed) retry")
            #expect(chunked == whole, "seed \(seed) chunked")
            if whole.events != expected.events || chunked != whole { break }
        }
    }

    /// The spec's algorithm, read literally and written for clarity, not speed: decode the whole
    /// stream, drop one BOM, split lines, discard the unterminated rest, process fields.
    private func referenceParse(_ bytes: [UInt8]) -> (events: [SSEEvent], lastEventID: String, retry: Int?) {
        var scalars = Array(String(decoding: bytes, as: UTF8.self).unicodeScalars)
        if scalars.first == "\u{FEFF}" { scalars.removeFirst() }
        var lines: [[Unicode.Scalar]] = []
        var current: [Unicode.Scalar] = []
        var index = 0
        while index < scalars.count {
            let scalar = scalars[index]
            if scalar == "\r" {
                lines.append(current)
                current = []
                if index + 1 < scalars.count, scalars[index + 1] == "\n" { index += 1 }
            } else if scalar == "\n" {
                lines.append(current)
                current = []
            } else {
                current.append(scalar)
            }
            index += 1
        }
        var events: [SSEEvent] = []
        var data = ""
        var type = ""
        var lastIDBuffer = ""
        var lastID = ""
        var retry: Int?
        for line in lines {
            let text = String(String.UnicodeScalarView(line))
            if text.isEmpty {
                lastID = lastIDBuffer
                if data.isEmpty {
                    type = ""
                    continue
                }
                data.removeLast()
                events.append(SSEEvent(type: type.isEmpty ? "message" : type, data: data, lastEventID: lastID))
                data = ""
                type = ""
                continue
            }
            if text.hasPrefix(":") { continue }
            var field = text
            var value = ""
            if let colon = text.firstIndex(of: ":") {
                field = String(text[..<colon])
                value = String(text[text.index(after: colon)...])
                if value.hasPrefix(" ") { value.removeFirst() }
            }
            switch field {
            case "data": data += value + "\n"
            case "event": type = value
            case "id" where !value.unicodeScalars.contains("\0"): lastIDBuffer = value
            case "retry" where !value.isEmpty && value.unicodeScalars.allSatisfy({ $0.isASCII && ("0"..."9").contains($0) }):
                retry = Int(value) ?? Int.max
            default: break
            }
        }
        return (events, lastID, retry)
    }
}

@Suite("SSE parser: bounded memory")
struct SSELimitTests {
    @Test("a 10 MB single line fed in 64 KiB chunks ends the stream with lineTooLong, memory bounded")
    func tenMegabyteLineInChunks() {
        var parser = SSEParser()
        let chunk = [UInt8](repeating: 0x61, count: 64 * 1024)
        var fed = 0
        var caught: SSEError?
        _ = try? parser.feed("data: ".bytes)
        while fed < 10_000_000 {
            do throws(SSEError) {
                try parser.feed(chunk) { _ in }
            } catch {
                caught = error
                break
            }
            fed += chunk.count
            #expect(parser.bufferedByteCapacity <= 1 << 21, "buffer grew to \(parser.bufferedByteCapacity) bytes")
        }
        #expect(caught == .lineTooLong(limit: 1 << 20))
        #expect(fed <= (1 << 20) + chunk.count)  // gave up right after the limit, not at 10 MB
        #expect(parser.bufferedByteCapacity == 0)  // released at once
        // The stream is over: more bytes are refused with the same error until finish().
        #expect(throws: SSEError.lineTooLong(limit: 1 << 20)) { try parser.feed("\n\n".bytes) }
        parser.finish()
        #expect((try? parser.feed("data: next stream\n\n".bytes)) == [SSEEvent(data: "next stream")])
    }

    @Test("a 10 MB single line in one chunk is refused without copying it")
    func tenMegabyteLineWhole() {
        var bytes = "data: ok\n\ndata: ".bytes
        bytes += [UInt8](repeating: 0x62, count: 10_000_000)
        bytes += "\n\n".bytes
        var parser = SSEParser()
        var seen: [SSEEvent] = []
        #expect(throws: SSEError.lineTooLong(limit: 1 << 20)) {
            try parser.feed(bytes) { seen.append($0) }
        }
        #expect(seen == [SSEEvent(data: "ok")])  // the event before the long line was delivered
        #expect(parser.bufferedByteCapacity == 0)
    }

    @Test("an event whose data lines add up past the limit ends the stream with eventTooLarge")
    func eventTooLarge() {
        let limits = SSEParser.Limits(maximumLineBytes: 100, maximumEventBytes: 1000)
        let line = "data: " + String(repeating: "z", count: 90) + "\n"
        let stream = "data: first\n\n" + String(repeating: line, count: 20) + "\n"
        let run = parse(stream.bytes, chunkSizes: [7, 300, 5], limits: limits)
        #expect(run.events == [SSEEvent(data: "first")])
        #expect(run.error == .eventTooLarge(limit: 1000))
        // Just under the limit passes.
        let fits = "data: first\n\n" + String(repeating: line, count: 10) + "\n"
        #expect(parse(fits.bytes, limits: limits).events.count == 2)
        #expect("\(SSEError.eventTooLarge(limit: 1000))".contains("Last-Event-ID"))
    }

    @Test("a line exactly at the limit is accepted, one byte more is not")
    func lineLimitBoundary() {
        let limits = SSEParser.Limits(maximumLineBytes: 16, maximumEventBytes: 1024)
        let atLimit = "data: " + String(repeating: "a", count: 10)  // 16 bytes
        #expect(parse((atLimit + "\n\n").bytes, chunkSizes: [3, 3, 3], limits: limits).events.count == 1)
        #expect(parse((atLimit + "a\n\n").bytes, chunkSizes: [3, 3, 3], limits: limits).error == .lineTooLong(limit: 16))
        #expect(parse((atLimit + "a\n\n").bytes, limits: limits).error == .lineTooLong(limit: 16))
    }
}

@Suite("SSE parser: the eight-bytes-at-a-time line-end search")
struct LineEndSearchTests {
    @Test("agrees with a byte-by-byte search on random buffers, at every start offset")
    func agreesWithNaiveSearch() {
        let alphabet: [UInt8] = [0x0A, 0x0D, 0x8A, 0x8D, 0x00, 0x01, 0x0B, 0x0C, 0x09, 0xFF, 0x61, 0xE2, 0x1A, 0x2D]
        for seed in 0..<300 as Range<UInt64> {
            var generator = SeededGenerator(seed: seed)
            let count = Int.random(in: 0...40, using: &generator)
            let lineEnds = Int.random(in: 0..<4, using: &generator)  // some buffers have none
            let buffer: [UInt8] = (0..<count).map { _ in
                let byte = alphabet.randomElement(using: &generator)!
                return lineEnds == 0 && (byte == 0x0A || byte == 0x0D) ? 0x61 : byte
            }
            buffer.withUnsafeBufferPointer { pointer in
                guard let base = pointer.baseAddress else { return }
                for start in 0...count {
                    let naive = buffer[start...].firstIndex { $0 == 0x0A || $0 == 0x0D } ?? count
                    #expect(SSEParser.indexOfLineEnd(base, from: start, count: count) == naive, "seed \(seed) start \(start)")
                }
            }
        }
    }
}
