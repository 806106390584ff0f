import Foundation
import FuzzSupport
import SwiftWingCore
import Talaria

private let eventNames = [
    "message", "progress", "status", "result", "book", "completed", "done", "failed", "error", "canceled", "timeout",
    "ping", "enrichment_degraded", "vision_debug",
]
private let base = URL(string: "http://127.0.0.1:8787/")!

/// One SSE event's data, under an event name the first byte chooses, through the stream decoder;
/// the same bytes as JSON through the book reader. Neither may trap, whatever the bytes.
func fuzzStreamEvents(_ input: UnsafeRawBufferPointer) {
    let (selector, bytes) = FuzzInput.selector(input)
    let data = String(decoding: bytes, as: UTF8.self)
    var decoder = TalariaStreamDecoder(base: base)
    let name = eventNames[Int(selector) % eventNames.count]
    let first = decoder.decode(SSEEvent(type: name, data: data, lastEventID: "7"))
    let second = decoder.decode(SSEEvent(type: name, data: data, lastEventID: "8"))
    if let event = first.event, event.isTerminal {
        precondition(second.event == nil, "a second terminal event was passed on")
    }
    if case .progress(let progress)? = first.event, let fraction = progress.fraction {
        precondition((0...1).contains(fraction), "progress fraction \(fraction) is outside 0...1")
    }
    guard let json = try? JSONValue.parse(bytes, what: "a book") else { return }
    let (book, _) = TalariaBook.decode(json)
    if let isbn = book?.isbn13 {
        precondition(ISBN(isbn13: isbn) != nil, "a book kept the invalid ISBN-13 \(isbn)")
    }
    if case .array(let items) = json {
        _ = TalariaBook.decodeList(items)
    }
}

@main enum FuzzMain { static func main() { FuzzInput.main(fuzzStreamEvents) } }
