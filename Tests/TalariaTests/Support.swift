import Foundation
import SwiftWingTesting

@testable import Talaria

/// The seeded generator the chunking tests replay from.
typealias SeededGenerator = SwiftWingTesting.SeededGenerator

enum Fixtures {
    /// The recorded job stream (progress, results with books, pings, malformed and unknown events,
    /// CR/CRLF/LF line ends, a duplicate terminal event).
    static let jobStream: [UInt8] = {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("Fixtures/talaria-job-stream.sse")
        guard let data = FileManager.default.contents(atPath: url.path) else {
            fatalError("missing test fixture \(url.path)")
        }
        return Array(data)
    }()
}

extension String {
    var bytes: [UInt8] { Array(utf8) }
}

/// Everything a parser produced for one stream: events, final state, error.
struct ParseRun: Equatable, CustomStringConvertible {
    var events: [SSEEvent] = []
    var lastEventID = ""
    var reconnectionTime: Int?
    var error: SSEError?
    var discardedAtEnd = false

    var description: String {
        "\(events.count) events, lastEventID \(lastEventID), retry \(reconnectionTime.map(String.init) ?? "-"), "
            + "error \(error.map { "\($0)" } ?? "-")"
    }
}

/// Feeds `bytes` in the given chunk sizes (the rest in one chunk), then finishes.
func parse(_ bytes: [UInt8], chunkSizes: [Int] = [], limits: SSEParser.Limits = .default) -> ParseRun {
    var parser = SSEParser(limits: limits)
    var run = ParseRun()
    var offset = 0
    var sizes = chunkSizes[...]
    while offset < bytes.count {
        let size = min(sizes.popFirst() ?? bytes.count, bytes.count - offset)
        do throws(SSEError) {
            try parser.feed(bytes[offset..<(offset + size)]) { run.events.append($0) }
        } catch {
            run.error = error
            break
        }
        offset += size
    }
    run.lastEventID = parser.lastEventID
    run.reconnectionTime = parser.reconnectionTime
    run.discardedAtEnd = parser.finish()
    return run
}

/// Random chunk sizes covering `count` bytes: mostly tiny (1–8), sometimes large.
func randomChunking(count: Int, using generator: inout SeededGenerator) -> [Int] {
    var sizes: [Int] = []
    var total = 0
    while total < count {
        let size =
            Bool.random(using: &generator)
            ? Int.random(in: 1...8, using: &generator)
            : Int.random(in: 1...max(1, count / 4), using: &generator)
        sizes.append(size)
        total += size
    }
    return sizes
}
