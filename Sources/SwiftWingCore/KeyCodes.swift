import CLinux

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
    fileprivate var trimmingSpaces: String {
        var slice = Substring(self)
        while slice.first?.isWhitespace == true { slice.removeFirst() }
        while slice.last?.isWhitespace == true { slice.removeLast() }
        return String(slice)
    }
}
