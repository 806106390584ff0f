import Foundation
import Testing

@testable import Talaria

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
            case "retry"
            where !value.isEmpty && value.unicodeScalars.allSatisfy({ $0.isASCII && ("0"..."9").contains($0) }):
                retry = Int(value) ?? Int.max
            default: break
            }
        }
        return (events, lastID, retry)
    }
}
