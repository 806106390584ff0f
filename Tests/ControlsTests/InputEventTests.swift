import Controls
import SwiftWingCore
import Testing

/// Bytes as `read(2)` returns them from `/dev/input/eventN` on a 64-bit machine: a foot pedal's
/// KEY_ENTER down, two autorepeats, up, each followed by SYN_REPORT (laid out by hand from
/// `struct input_event`; little-endian).
func record(_ seconds: Int64, _ micros: Int64, _ type: UInt16, _ code: UInt16, _ value: Int32, size: Int = 24)
    -> [UInt8]
{
    var bytes: [UInt8] = []
    if size == 24 {
        withUnsafeBytes(of: seconds.littleEndian) { bytes += $0 }
        withUnsafeBytes(of: micros.littleEndian) { bytes += $0 }
    } else {
        withUnsafeBytes(of: Int32(seconds).littleEndian) { bytes += $0 }
        withUnsafeBytes(of: Int32(micros).littleEndian) { bytes += $0 }
    }
    withUnsafeBytes(of: type.littleEndian) { bytes += $0 }
    withUnsafeBytes(of: code.littleEndian) { bytes += $0 }
    withUnsafeBytes(of: value.littleEndian) { bytes += $0 }
    return bytes
}

@Suite struct InputEventTests {
    let pedal: [UInt8] =
        record(1234, 500_000, 1, 28, 1) + record(1234, 500_000, 0, 0, 0)
        + record(1234, 750_000, 1, 28, 2) + record(1234, 750_000, 0, 0, 0)
        + record(1234, 783_000, 1, 28, 2) + record(1234, 783_000, 0, 0, 0)
        + record(1235, 100_250, 1, 28, 0) + record(1235, 100_250, 0, 0, 0)

    @Test func decodesTheNativeLayout() {
        #expect(InputEventDecoder.nativeSize == 24)
        let events = InputEventDecoder.decode(pedal)
        #expect(events.count == 8)
        #expect(
            events[0]
                == InputEvent(time: MonotonicInstant(seconds: 1234, microseconds: 500_000), type: 1, code: 28, value: 1)
        )
        #expect(events.map(\.keyAction) == [.down, nil, .repeated, nil, .repeated, nil, .up, nil])
        #expect(events[6].time.nanoseconds == 1_235_100_250_000)
    }

    @Test func decodesThe32BitLayoutAndIgnoresAPartialTail() {
        let bytes = record(7, 1, 1, 212, 1, size: 16) + record(7, 2, 1, 212, 0, size: 16) + [1, 2, 3]
        let events = InputEventDecoder.decode(bytes, eventSize: 16)
        #expect(events.map(\.code) == [212, 212])
        #expect(events.map(\.value) == [1, 0])
    }

    @Test func aPedalHeldWithAutorepeatIsOnePressAndOneLongPress() {
        // The key shutter feeds down/up into a detector with no glitch filter and ignores repeats.
        var detector = PressDetector(timing: .keys(longPressMilliseconds: 500), source: .key)
        var events: [ShutterEvent] = []
        for event in InputEventDecoder.decode(pedal) {
            switch event.keyAction {
            case .down?: events += detector.edge(active: true, at: event.time)
            case .up?: events += detector.edge(active: false, at: event.time)
            default: events += detector.advance(to: event.time)
            }
        }
        let t0 = MonotonicInstant(seconds: 1234, microseconds: 500_000)
        #expect(
            events == [.press(ShutterPress(time: t0, source: .key)), .longPress(ShutterPress(time: t0, source: .key))])
    }

    @Test func keyNamesAndCodesParse() throws {
        #expect(try KeyCodes.parse("KEY_CAMERA, KEY_ENTER,key_space , 115") == [212, 28, 57, 115])
        #expect(try KeyCodes.parse("none") == [])
        #expect(try KeyCodes.parse("") == [])
        #expect(KeyCodes.defaultShutterKeys == [212, 28, 57, 115])
        #expect(KeyCodes.name(of: 212) == "KEY_CAMERA")
        let error = #expect(throws: KeyCodeError.self) { try KeyCodes.parse("KEY_CAMERA, KEY_SHUTTER") }
        #expect(error?.description.contains("\"KEY_SHUTTER\" is not a key") == true)
        #expect(throws: KeyCodeError.self) { try KeyCodes.parse("0") }
    }
}
