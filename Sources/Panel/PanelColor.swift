/// An sRGB colour, 8 bits per channel.
public struct PanelColor: Hashable, Sendable {
    public var red: UInt8
    public var green: UInt8
    public var blue: UInt8

    public init(red: UInt8, green: UInt8, blue: UInt8) {
        self.red = red
        self.green = green
        self.blue = blue
    }

    /// `0xRRGGBB`.
    public init(hex: UInt32) {
        self.init(red: UInt8(hex >> 16 & 0xFF), green: UInt8(hex >> 8 & 0xFF), blue: UInt8(hex & 0xFF))
    }

    public static let black = PanelColor(hex: 0x000000)
    public static let white = PanelColor(hex: 0xFFFFFF)
    /// International Orange, the panel's accent: #FF3B30.
    public static let orange = PanelColor(hex: 0xFF3B30)
    /// Labels and quiet text.
    public static let dim = PanelColor(hex: 0x8E8E93)
    /// Boxes and rules.
    public static let rule = PanelColor(hex: 0x3A3A3C)

    // Scan state borders.
    public static let waiting = PanelColor(hex: 0x8E8E93)
    public static let uploading = PanelColor(hex: 0xFFCC00)
    public static let analyzing = PanelColor(hex: 0x0A84FF)
    public static let done = PanelColor(hex: 0x30D158)
    public static let failed = PanelColor(hex: 0xFF3B30)
}
