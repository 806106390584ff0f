// SSE parser throughput on a recorded Talaria job stream.
//
// `swift run -c release TalariaBench` measures Talaria's SSEParser alone and the whole client
// side of a stream (parser + tolerant event and book decoding). `compare-eventsource.sh` compiles
// this same file with -D SSE_COMPARISON together with mattt/EventSource 1.1.1 and measures both
// parsers in one process on the same bytes. Method and figures: Benchmarks/README.md, "SSE parser".
import Foundation

#if !SSE_COMPARISON
    import Talaria
#endif

// MARK: The stream

/// The recorded job stream (Tests/TalariaTests/Fixtures), repeated with distinct job ids to
/// `targetBytes`: progress events, results with books, pings, comments, a malformed event, a
/// completed with six books, CR/LF/CRLF line ends, Cyrillic, Japanese and emoji in titles.
func makeStream(targetBytes: Int) -> (bytes: [UInt8], jobs: Int, recordBytes: Int) {
    let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../Tests/TalariaTests/Fixtures/talaria-job-stream.sse").standardized
    guard let data = FileManager.default.contents(atPath: fixture.path), let text = String(data: data, encoding: .utf8)
    else {
        fatalError("cannot read the recorded stream at \(fixture.path): run from a checkout of the repository")
    }
    let jobID = "7f3c9a2e-5b1d-4c8e-9f00-2a6b8c4d1e01"
    var out: [UInt8] = []
    out.reserveCapacity(targetBytes + data.count)
    var job = 0
    while out.count < targetBytes {
        let id = String(format: "%08x-5b1d-4c8e-9f00-%012x", job, job)
        out += Array(text.replacingOccurrences(of: jobID, with: id).utf8)
        job += 1
    }
    return (out, job, data.count)
}

// MARK: Measuring

struct Figures {
    var label: String
    var seconds: [Double]
    var bytes: Int
    var events: Int

    var median: Double { seconds.sorted()[seconds.count / 2] }
    var megabytesPerSecond: Double { Double(bytes) / median / 1_000_000 }
    var eventsPerSecond: Double { Double(events) / median }

    var line: String {
        String(
            format: "%@: %.1f MB/s, %.0f events/s (median of %d runs, %.4f s per run; min %.4f s, max %.4f s)",
            label, megabytesPerSecond, eventsPerSecond, seconds.count, median, seconds.min()!, seconds.max()!)
    }
}

func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
}

/// What a parser produced: the check that both parsers read the same events.
struct Digest: Equatable {
    var events = 0
    var dataBytes = 0
    var types: [String: Int] = [:]
}

let chunkSize = 16 * 1024  // curl's CURL_MAX_WRITE_SIZE: what a write callback hands over at most
let stream = makeStream(targetBytes: 4_000_000)
let chunks: [ArraySlice<UInt8>] = stride(from: 0, to: stream.bytes.count, by: chunkSize).map {
    stream.bytes[$0..<min($0 + chunkSize, stream.bytes.count)]
}

func runTalaria() -> Digest {
    var parser = SSEParser()
    var digest = Digest()
    for chunk in chunks {
        do throws(SSEError) {
            try parser.feed(chunk) { event in
                digest.events += 1
                digest.dataBytes += event.data.utf8.count
                digest.types[event.type, default: 0] += 1
            }
        } catch {
            fatalError("the recorded stream broke a limit: \(error)")
        }
    }
    parser.finish()
    return digest
}

func measure(_ label: String, runs: Int, events: Int, _ body: () async -> Void) async -> Figures {
    await body()  // warm-up
    var times: [Double] = []
    let clock = ContinuousClock()
    for _ in 0..<runs {
        let start = clock.now
        await body()
        times.append(seconds(clock.now - start))
    }
    return Figures(label: label, seconds: times, bytes: stream.bytes.count, events: events)
}

print(
    "stream: \(stream.bytes.count) bytes = \(stream.jobs) × the recorded job stream (\(stream.recordBytes) bytes, "
        + "14 events each), fed in \(chunkSize / 1024) KiB chunks")

let talariaDigest = runTalaria()
let talaria = await measure("Talaria SSEParser", runs: 15, events: talariaDigest.events) {
    let digest = runTalaria()
    precondition(digest == talariaDigest)
}
print(talaria.line)

#if SSE_COMPARISON
    // mattt/EventSource 1.1.1: `EventSource.Parser` is an actor fed one byte per call
    // (`consume(_:)`); events are taken with `getNextEvent()`.

    /// Counts every event the parser has ready into `digest`.
    func drain(_ parser: EventSource.Parser, into digest: inout Digest) async {
        while let event = await parser.getNextEvent() {
            digest.events += 1
            digest.dataBytes += event.data.utf8.count
            digest.types[event.event ?? "message", default: 0] += 1
        }
    }

    /// As EventSource's own connection loop uses it: consume a byte, then drain the queue.
    func runEventSourceAsShipped() async -> Digest {
        let parser = EventSource.Parser()
        var digest = Digest()
        for chunk in chunks {
            for byte in chunk {
                await parser.consume(byte)
                await drain(parser, into: &digest)
            }
        }
        await parser.finish()
        await drain(parser, into: &digest)
        return digest
    }

    /// Kinder to it: drain the queue once per chunk instead of after every byte.
    func runEventSourcePerChunk() async -> Digest {
        let parser = EventSource.Parser()
        var digest = Digest()
        for chunk in chunks {
            for byte in chunk {
                await parser.consume(byte)
            }
            await drain(parser, into: &digest)
        }
        await parser.finish()
        await drain(parser, into: &digest)
        return digest
    }

    let shippedDigest = await runEventSourceAsShipped()
    let perChunkDigest = await runEventSourcePerChunk()
    if shippedDigest != talariaDigest || perChunkDigest != talariaDigest {
        print("NOTE: the parsers disagree on this stream — Talaria \(talariaDigest), EventSource \(shippedDigest)")
    } else {
        print("both parsers read the same \(talariaDigest.events) events (\(talariaDigest.dataBytes) bytes of data)")
    }
    let shipped = await measure(
        "mattt/EventSource 1.1.1 Parser, as its connection loop uses it", runs: 5,
        events: shippedDigest.events
    ) { _ = await runEventSourceAsShipped() }
    print(shipped.line)
    let perChunk = await measure(
        "mattt/EventSource 1.1.1 Parser, queue drained once per chunk", runs: 5,
        events: perChunkDigest.events
    ) { _ = await runEventSourcePerChunk() }
    print(perChunk.line)
    print(
        String(
            format: "ratio (Talaria ÷ EventSource, MB/s): %.1fx as shipped, %.1fx against the per-chunk variant",
            talaria.megabytesPerSecond / shipped.megabytesPerSecond,
            talaria.megabytesPerSecond / perChunk.megabytesPerSecond))
#else
    // The whole client side of a stream: parse, then decode each event and its books tolerantly.
    func runPipeline() -> Int {
        var parser = SSEParser()
        var decoder = TalariaStreamDecoder(base: URL(string: "https://api.example.org/")!)
        var decoded = 0
        for chunk in chunks {
            do throws(SSEError) {
                try parser.feed(chunk) { event in
                    if decoder.decode(event).event != nil { decoded += 1 }
                }
            } catch {
                fatalError("the recorded stream broke a limit: \(error)")
            }
        }
        return decoded
    }
    let pipeline = await measure("parser + TalariaStreamDecoder (JSON, books)", runs: 5, events: talariaDigest.events) {
        _ = runPipeline()
    }
    print(pipeline.line)
    print("for mattt/EventSource 1.1.1 on the same bytes, run Benchmarks/TalariaBench/compare-eventsource.sh")
#endif
