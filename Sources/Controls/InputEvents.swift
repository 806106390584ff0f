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

/// Key codes by their `<linux/input-event-codes.h>` names, for the configuration.
public enum KeyCodes {
    /// The keys a shutter usually sends: the camera key (gpio-keys overlays), Enter and Space (USB foot
    /// pedals, which mostly pose as keyboards), Volume Up (Bluetooth camera remotes such as "AB Shutter3").
    public static let defaultShutterKeys: [UInt16] = [
        UInt16(KEY_CAMERA), UInt16(KEY_ENTER), UInt16(KEY_SPACE), UInt16(KEY_VOLUMEUP),
    ]

    static let byName: [String: UInt16] = [
        "KEY_CAMERA": UInt16(KEY_CAMERA), "KEY_ENTER": UInt16(KEY_ENTER), "KEY_KPENTER": UInt16(KEY_KPENTER),
        "KEY_SPACE": UInt16(KEY_SPACE), "KEY_VOLUMEUP": UInt16(KEY_VOLUMEUP), "KEY_VOLUMEDOWN": UInt16(KEY_VOLUMEDOWN),
        "KEY_PLAYPAUSE": UInt16(KEY_PLAYPAUSE), "KEY_NEXTSONG": UInt16(KEY_NEXTSONG),
        "KEY_PREVIOUSSONG": UInt16(KEY_PREVIOUSSONG), "KEY_PAGEUP": UInt16(KEY_PAGEUP),
        "KEY_PAGEDOWN": UInt16(KEY_PAGEDOWN),
        "KEY_UP": UInt16(KEY_UP), "KEY_DOWN": UInt16(KEY_DOWN), "KEY_LEFT": UInt16(KEY_LEFT),
        "KEY_RIGHT": UInt16(KEY_RIGHT),
        "KEY_CAMERA_FOCUS": UInt16(KEY_CAMERA_FOCUS), "KEY_SELECT": UInt16(KEY_SELECT), "KEY_OK": UInt16(KEY_OK),
        "KEY_F5": UInt16(KEY_F5), "KEY_B": UInt16(KEY_B), "KEY_S": UInt16(KEY_S),
        "BTN_0": UInt16(BTN_0), "BTN_1": UInt16(BTN_1), "BTN_LEFT": UInt16(BTN_LEFT),
        "BTN_TRIGGER": UInt16(BTN_TRIGGER),
    ]

    /// Parses `"KEY_CAMERA, KEY_ENTER, 212"` (names or decimal codes); `""` or `"none"` is no keys.
    public static func parse(_ text: String) throws(KeyCodeError) -> [UInt16] {
        let trimmed = text.trimmingSpaces
        if trimmed.isEmpty || trimmed == "none" { return [] }
        var codes: [UInt16] = []
        for part in trimmed.split(separator: ",") {
            let item = String(part).trimmingSpaces
            if let code = byName[item.uppercased()] ?? UInt16(item), code > 0, code < UInt16(KEY_CNT) {
                if !codes.contains(code) { codes.append(code) }
            } else {
                throw KeyCodeError(item: item)
            }
        }
        return codes
    }

    /// `KEY_CAMERA` for 212; the number when it has no name here.
    public static func name(of code: UInt16) -> String {
        byName.first { $0.value == code }?.key ?? String(code)
    }
}

public struct KeyCodeError: Error, Sendable, Equatable, CustomStringConvertible {
    public var item: String
    public var description: String {
        "\"\(item)\" is not a key: use names such as KEY_CAMERA, KEY_ENTER, KEY_SPACE, KEY_VOLUMEUP, or decimal codes "
            + "from <linux/input-event-codes.h> (evtest shows a device's codes)"
    }
}

extension String {
    var trimmingSpaces: String {
        var slice = Substring(self)
        while slice.first?.isWhitespace == true { slice.removeFirst() }
        while slice.last?.isWhitespace == true { slice.removeLast() }
        return String(slice)
    }
}
