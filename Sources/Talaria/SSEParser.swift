import Foundation

/// One event dispatched by ``SSEParser``: what a browser's `EventSource` would hand to a
/// `MessageEvent` listener.
public struct SSEEvent: Hashable, Sendable, CustomStringConvertible {
    /// The `event` field, or `"message"` when the event had none (or an empty one).
    public var type: String
    /// The `data` lines of the event joined with LF (no trailing LF).
    public var data: String
    /// The stream's last event id when this event was dispatched (kept across events; `""` until
    /// the server sent an `id`). This is what a reconnection sends as `Last-Event-ID`.
    public var lastEventID: String

    public init(type: String = "message", data: String, lastEventID: String = "") {
        self.type = type
        self.data = data
        self.lastEventID = lastEventID
    }

    public var description: String {
        let shown = data.count > 80 ? data.prefix(80) + "…" : Substring(data)
        return "SSEEvent(type: \(type), id: \(lastEventID.isEmpty ? "-" : lastEventID), data: \(shown))"
    }
}

/// Why ``SSEParser`` gave up on a stream. The stream is over; the job is not: reconnect with
/// `Last-Event-ID` or poll the job's status.
public enum SSEError: Error, Hashable, Sendable, CustomStringConvertible {
    /// A single line grew past the limit without a line end.
    case lineTooLong(limit: Int)
    /// The `data` of one event grew past the limit before the blank line that ends it.
    case eventTooLarge(limit: Int)

    public var description: String {
        switch self {
        case .lineTooLong(let limit):
            "the event stream sent a line longer than \(limit) bytes; the stream was closed to keep memory bounded "
                + "(reconnect with Last-Event-ID, or poll the job's status instead)"
        case .eventTooLarge(let limit):
            "the event stream sent an event larger than \(limit) bytes; the stream was closed to keep memory bounded "
                + "(reconnect with Last-Event-ID, or poll the job's status instead)"
        }
    }
}

/// A Server-Sent Events parser written to the WHATWG HTML "event stream interpretation" rules
/// (§9.2.6), fed bytes in chunks of any size and boundary.
///
/// - One leading UTF-8 BOM is dropped, even when it arrives split over chunks.
/// - Lines end with CR, LF or CRLF; a CRLF split over two chunks is one line end.
/// - `:` lines are comments; a line without a colon is a field with an empty value; one space
///   after the colon is removed; `data` lines are joined with LF; an empty `event` is `message`;
///   an `id` containing NUL is ignored; `retry` is taken only when it is all ASCII digits.
/// - Bytes are decoded as UTF-8 only once a whole line or event is in, so a character split over
///   chunks decodes correctly; invalid UTF-8 becomes U+FFFD, as in a browser.
/// - An event not ended by a blank line before the end of the stream is discarded (``finish()``).
/// - Memory is bounded: a line or an event's data over the limits ends the stream with
///   ``SSEError`` (the parser then refuses more bytes until ``finish()``).
///
/// A value type with no locks: one parser per stream, owned by whoever reads that stream.
public struct SSEParser: Sendable {
    /// The largest line and the largest event `data` accepted, in bytes.
    public struct Limits: Hashable, Sendable {
        public var maximumLineBytes: Int
        public var maximumEventBytes: Int

        public init(maximumLineBytes: Int = 1 << 20, maximumEventBytes: Int = 1 << 20) {
            precondition(maximumLineBytes > 0 && maximumEventBytes > 0, "SSE limits must be positive")
            self.maximumLineBytes = maximumLineBytes
            self.maximumEventBytes = maximumEventBytes
        }

        /// 1 MiB per line and per event.
        public static let `default` = Limits()
    }

    public let limits: Limits

    /// The last event id seen (kept across events and across ``finish()``, for `Last-Event-ID`).
    public private(set) var lastEventID: String = ""
    /// The reconnection time the server asked for with `retry:`, in milliseconds (`nil` until then).
    public private(set) var reconnectionTime: Int?
    /// Set once the stream broke a limit; every later ``feed(_:emit:)`` throws it until ``finish()``.
    public private(set) var failure: SSEError?

    // Bytes of a line whose end has not arrived yet (only lines crossing a chunk boundary land here).
    private var partialLine: [UInt8] = []
    // The data buffer: each `data` value followed by LF.
    private var data: [UInt8] = []
    private var eventType: [UInt8] = []
    private var lastEventIDBuffer: [UInt8] = []
    private var lastEventIDChanged = false
    // The previous chunk ended with CR: an LF at the start of this one belongs to it.
    private var pendingCR = false
    // How many bytes of a leading BOM have been matched (the BOM may be split over chunks).
    private var bomMatched = 0
    private var bomChecked = false

    /// - Parameter lastEventID: the id a resumed stream continues after (persisted across a restart).
    public init(limits: Limits = .default, lastEventID: String = "") {
        self.limits = limits
        self.lastEventID = lastEventID
    }

    /// Parses `chunk`, calling `emit` for each event completed by it, in order. Events completed
    /// before a limit is broken are emitted before the error is thrown.
    public mutating func feed(_ chunk: UnsafeRawBufferPointer, emit: (SSEEvent) -> Void) throws(SSEError) {
        if let failure { throw failure }
        guard let raw = chunk.baseAddress, !chunk.isEmpty else { return }
        let base = raw.assumingMemoryBound(to: UInt8.self)
        let count = chunk.count
        var index = 0

        if !bomChecked {
            while index < count, bomMatched < 3, base[index] == Self.bom[bomMatched] {
                bomMatched += 1
                index += 1
            }
            if bomMatched == 3 {
                bomChecked = true
            } else if index == count {
                return  // a BOM prefix so far: the next chunk decides
            } else {
                // Not a BOM: the bytes matched so far are content of the first line.
                bomChecked = true
                partialLine.append(contentsOf: Self.bom.prefix(bomMatched))
            }
            if index == count { return }
        }

        if pendingCR {
            pendingCR = false
            if base[index] == Self.lf { index += 1 }
        }

        while index < count {
            let end = Self.indexOfLineEnd(base, from: index, count: count)
            if end == count {
                // No line end in the rest of the chunk: keep the bytes for the next one.
                let length = count - index
                if partialLine.count + length > limits.maximumLineBytes {
                    throw fail(.lineTooLong(limit: limits.maximumLineBytes))
                }
                partialLine.append(contentsOf: UnsafeBufferPointer(start: base + index, count: length))
                return
            }
            let length = end - index
            if partialLine.isEmpty {
                if length > limits.maximumLineBytes { throw fail(.lineTooLong(limit: limits.maximumLineBytes)) }
                try processLine(UnsafeBufferPointer(start: base + index, count: length), emit: emit)
            } else {
                if partialLine.count + length > limits.maximumLineBytes {
                    throw fail(.lineTooLong(limit: limits.maximumLineBytes))
                }
                partialLine.append(contentsOf: UnsafeBufferPointer(start: base + index, count: length))
                var line: [UInt8] = []
                swap(&line, &partialLine)
                try line.withUnsafeBufferPointer { (bytes) throws(SSEError) in try processLine(bytes, emit: emit) }
                if line.capacity <= Self.keptCapacity {
                    line.removeAll(keepingCapacity: true)
                    swap(&line, &partialLine)
                }
            }
            if base[end] == Self.cr {
                if end + 1 < count {
                    index = base[end + 1] == Self.lf ? end + 2 : end + 1
                } else {
                    pendingCR = true
                    index = end + 1
                }
            } else {
                index = end + 1
            }
        }
    }

    /// Parses `bytes` (an array or a slice of one), calling `emit` for each completed event.
    public mutating func feed<Bytes: Collection<UInt8>>(
        _ bytes: Bytes, emit: (SSEEvent) -> Void
    ) throws(SSEError) {
        var thrown: SSEError?
        let contiguous: Void? = bytes.withContiguousStorageIfAvailable { buffer in
            do throws(SSEError) { try feed(UnsafeRawBufferPointer(buffer), emit: emit) } catch { thrown = error }
        }
        if contiguous == nil {
            Array(bytes).withUnsafeBytes { raw in
                do throws(SSEError) { try feed(raw, emit: emit) } catch { thrown = error }
            }
        }
        if let thrown { throw thrown }
    }

    /// Parses `bytes` and returns the events they completed. When a limit is broken the events
    /// completed before it are lost with the thrown error; use ``feed(_:emit:)`` to keep them.
    public mutating func feed<Bytes: Collection<UInt8>>(_ bytes: Bytes) throws(SSEError) -> [SSEEvent] {
        var events: [SSEEvent] = []
        try feed(bytes) { events.append($0) }
        return events
    }

    /// Ends the stream: an event not yet ended by a blank line is discarded (as the spec says),
    /// and the parser is ready for the next connection's stream (a new leading BOM is dropped
    /// again). ``lastEventID`` and ``reconnectionTime`` are kept for that reconnection.
    ///
    /// - Returns: true when an unterminated event or line was discarded (worth a log line).
    @discardableResult
    public mutating func finish() -> Bool {
        let discarded = !partialLine.isEmpty || !data.isEmpty || !eventType.isEmpty
        partialLine = []
        data = []
        eventType = []
        pendingCR = false
        bomMatched = 0
        bomChecked = false
        failure = nil
        return discarded
    }

    /// Bytes held in the parser's buffers (for tests of the memory bound).
    var bufferedByteCapacity: Int { partialLine.capacity + data.capacity + eventType.capacity }

    // MARK: Lines and fields

    private mutating func processLine(_ line: UnsafeBufferPointer<UInt8>, emit: (SSEEvent) -> Void) throws(SSEError) {
        let count = line.count
        if count == 0 {
            dispatch(emit)
            return
        }
        if line[0] == Self.colon { return }  // comment
        var colon = 0
        while colon < count, line[colon] != Self.colon { colon += 1 }
        var valueStart = colon + 1
        if valueStart < count, line[valueStart] == Self.space { valueStart += 1 }
        let value = UnsafeBufferPointer(rebasing: line[min(valueStart, count)..<count])

        switch colon {
        case 4 where line[0] == 0x64 && line[1] == 0x61 && line[2] == 0x74 && line[3] == 0x61:  // data
            if data.count + value.count + 1 > limits.maximumEventBytes {
                throw fail(.eventTooLarge(limit: limits.maximumEventBytes))
            }
            data.append(contentsOf: value)
            data.append(Self.lf)
        // "event"
        case 5 where line[0] == 0x65 && line[1] == 0x76 && line[2] == 0x65 && line[3] == 0x6E && line[4] == 0x74:
            eventType.removeAll(keepingCapacity: true)
            eventType.append(contentsOf: value)
        case 2 where line[0] == 0x69 && line[1] == 0x64:  // id
            if !value.contains(0) {
                lastEventIDBuffer.removeAll(keepingCapacity: true)
                lastEventIDBuffer.append(contentsOf: value)
                lastEventIDChanged = true
            }
        // "retry"
        case 5 where line[0] == 0x72 && line[1] == 0x65 && line[2] == 0x74 && line[3] == 0x72 && line[4] == 0x79:
            guard !value.isEmpty, value.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return }
            var milliseconds = 0
            for digit in value {
                let (times10, overflow1) = milliseconds.multipliedReportingOverflow(by: 10)
                let (sum, overflow2) = times10.addingReportingOverflow(Int(digit - 0x30))
                if overflow1 || overflow2 {
                    milliseconds = Int.max
                    break
                }
                milliseconds = sum
            }
            reconnectionTime = milliseconds
        default:
            break  // unknown fields are ignored
        }
    }

    private mutating func dispatch(_ emit: (SSEEvent) -> Void) {
        if lastEventIDChanged {
            lastEventID = String(decoding: lastEventIDBuffer, as: UTF8.self)
            lastEventIDChanged = false
        }
        guard !data.isEmpty else {
            eventType.removeAll(keepingCapacity: true)
            return
        }
        data.removeLast()  // the LF after the last data line
        let type = eventType.isEmpty ? "message" : String(decoding: eventType, as: UTF8.self)
        emit(SSEEvent(type: type, data: String(decoding: data, as: UTF8.self), lastEventID: lastEventID))
        if data.capacity > Self.keptCapacity { data = [] } else { data.removeAll(keepingCapacity: true) }
        eventType.removeAll(keepingCapacity: true)
    }

    private mutating func fail(_ error: SSEError) -> SSEError {
        failure = error
        partialLine = []
        data = []
        eventType = []
        return error
    }

    // MARK: Bytes

    private static let lf: UInt8 = 0x0A
    private static let cr: UInt8 = 0x0D
    private static let colon: UInt8 = 0x3A
    private static let space: UInt8 = 0x20
    private static let bom: [UInt8] = [0xEF, 0xBB, 0xBF]
    // Buffers that grew past this (one huge event) are released rather than kept for reuse.
    private static let keptCapacity = 64 * 1024

    /// The index of the first CR or LF in `base[from..<count]`, or `count`. Eight bytes at a time
    /// (a zero-byte test on `word ^ 0x0A…` and `word ^ 0x0D…`), then byte by byte.
    @inline(__always)
    static func indexOfLineEnd(_ base: UnsafePointer<UInt8>, from start: Int, count: Int) -> Int {
        var index = start
        let raw = UnsafeRawPointer(base)
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        while index + 8 <= count {
            let word = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: index, as: UInt64.self))
            let lf = word ^ 0x0A0A_0A0A_0A0A_0A0A
            let cr = word ^ 0x0D0D_0D0D_0D0D_0D0D
            let found = ((lf &- ones) & ~lf & highs) | ((cr &- ones) & ~cr & highs)
            if found != 0 { return index + found.trailingZeroBitCount >> 3 }
            index += 8
        }
        while index < count {
            let byte = base[index]
            if byte == lf || byte == cr { return index }
            index += 1
        }
        return count
    }
}
