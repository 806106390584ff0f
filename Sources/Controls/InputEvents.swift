import CShim
import SwiftWingCore

/// One `struct input_event` as read from `/dev/input/event*`.
public struct InputEvent: Sendable, Equatable {
    /// The event's timestamp as the kernel wrote it (on the clock set with `EVIOCSCLOCKID`).
    public var time: MonotonicInstant
    public var type: UInt16
    public var code: UInt16
    public var value: Int32

    public init(time: MonotonicInstant, type: UInt16, code: UInt16, value: Int32) {
        self.time = time
        self.type = type
        self.code = code
        self.value = value
    }

    public static let keyType = UInt16(EV_KEY)
    public static let syncType = UInt16(EV_SYN)
    /// `SYN_DROPPED`: the device's buffer overflowed; key states may be stale.
    public static let droppedCode = UInt16(SYN_DROPPED)

    /// What a key event's value means: 1 down, 0 up, 2 autorepeat (ignored: a held key is one press).
    public enum KeyAction: Sendable, Equatable { case down, up, repeated }

    public var keyAction: KeyAction? {
        guard type == Self.keyType else { return nil }
        switch value {
        case 0: return .up
        case 1: return .down
        case 2: return .repeated
        default: return nil
        }
    }
}

/// Decodes the bytes of `read(2)` on an event device into events.
///
/// Layout (little-endian on every target): 64-bit Linux `{ i64 sec; i64 usec; u16 type; u16 code;
/// i32 value }` = 24 bytes; 32-bit with a 32-bit `time_t`: `{ i32 sec; i32 usec; … }` = 16 bytes.
public enum InputEventDecoder {
    /// `sizeof(struct input_event)` on this machine.
    public static let nativeSize = Int(sw_input_event_size())

    /// Whole events in `bytes`; a trailing partial event (never produced by the kernel) is ignored.
    public static func decode(_ bytes: UnsafeRawBufferPointer, eventSize: Int = nativeSize) -> [InputEvent] {
        precondition(eventSize == 24 || eventSize == 16, "struct input_event is 24 or 16 bytes")
        let half = eventSize == 24 ? 8 : 4
        var events: [InputEvent] = []
        events.reserveCapacity(bytes.count / eventSize)
        var offset = 0
        while offset + eventSize <= bytes.count {
            let seconds: Int
            let micros: Int
            if half == 8 {
                seconds = Int(Int64(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: Int64.self)))
                micros = Int(Int64(littleEndian: bytes.loadUnaligned(fromByteOffset: offset + 8, as: Int64.self)))
            } else {
                seconds = Int(Int32(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: Int32.self)))
                micros = Int(Int32(littleEndian: bytes.loadUnaligned(fromByteOffset: offset + 4, as: Int32.self)))
            }
            let base = offset + 2 * half
            events.append(
                InputEvent(
                    time: MonotonicInstant(seconds: seconds, microseconds: micros),
                    type: UInt16(littleEndian: bytes.loadUnaligned(fromByteOffset: base, as: UInt16.self)),
                    code: UInt16(littleEndian: bytes.loadUnaligned(fromByteOffset: base + 2, as: UInt16.self)),
                    value: Int32(littleEndian: bytes.loadUnaligned(fromByteOffset: base + 4, as: Int32.self))))
            offset += eventSize
        }
        return events
    }

    public static func decode(_ bytes: [UInt8], eventSize: Int = nativeSize) -> [InputEvent] {
        bytes.withUnsafeBytes { decode($0, eventSize: eventSize) }
    }
}
