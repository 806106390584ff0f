import FuzzSupport
import Talaria

/// The SSE parser on arbitrary bytes: fed whole and fed in chunks of a size the input chooses,
/// both must give the same events, the same failure and the same last event id.
func fuzzSSE(_ input: UnsafeRawBufferPointer) {
    let (selector, bytes) = FuzzInput.selector(input)
    let limits = SSEParser.Limits(maximumLineBytes: 4096, maximumEventBytes: 8192)
    var whole = SSEParser(limits: limits)
    var wholeEvents: [SSEEvent] = []
    let wholeError: SSEError?
    do {
        try whole.feed(bytes) { wholeEvents.append($0) }
        wholeError = nil
    } catch { wholeError = error }
    let wholeFinished = whole.finish()

    let chunkSize = Int(selector % 17) + 1
    var chunked = SSEParser(limits: limits)
    var chunkedEvents: [SSEEvent] = []
    var chunkedError: SSEError?
    var offset = 0
    while offset < bytes.count, chunkedError == nil {
        let end = min(offset + chunkSize, bytes.count)
        do {
            try chunked.feed(UnsafeRawBufferPointer(rebasing: bytes[offset..<end])) { chunkedEvents.append($0) }
        } catch {
            chunkedError = error
        }
        offset = end
    }
    let chunkedFinished = chunked.finish()

    precondition(wholeEvents == chunkedEvents, "chunks of \(chunkSize) bytes gave other events than the whole input")
    precondition(wholeError == chunkedError, "chunks of \(chunkSize) bytes failed otherwise")
    precondition(whole.lastEventID == chunked.lastEventID, "chunks of \(chunkSize) bytes ended on another event id")
    precondition(wholeFinished == chunkedFinished, "chunks of \(chunkSize) bytes finished otherwise")
    for event in wholeEvents {
        precondition(event.data.utf8.count <= limits.maximumEventBytes, "an event larger than the limit was emitted")
    }
}

@main enum FuzzMain { static func main() { FuzzInput.main(fuzzSSE) } }
