import Foundation
import Testing

@testable import Talaria

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
        #expect(
            parse((atLimit + "a\n\n").bytes, chunkSizes: [3, 3, 3], limits: limits).error == .lineTooLong(limit: 16))
        #expect(parse((atLimit + "a\n\n").bytes, limits: limits).error == .lineTooLong(limit: 16))
    }
}
