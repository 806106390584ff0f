/// The modules of a QR code, without its quiet zone: Identify encodes one (with zxing-cpp) and the panel
/// draws it, neither knowing the other.
public struct QRModules: Sendable, Hashable {
    /// Modules per side (21 for version 1, 4 more per version).
    public let side: Int
    /// Row by row, `true` for a dark module.
    public let dark: [Bool]

    /// Nil unless `dark` holds `side * side` modules.
    public init?(side: Int, dark: [Bool]) {
        guard side > 0, dark.count == side * side else { return nil }
        self.side = side
        self.dark = dark
    }

    /// Rows of `#` (dark) and `.` (light), all `side` long; nil when they are not a square.
    public init?(rows: [String]) {
        let side = rows.count
        guard rows.allSatisfy({ $0.count == side }) else { return nil }
        self.init(side: side, dark: rows.flatMap { $0.map { $0 == "#" } })
    }

    public func isDark(x: Int, y: Int) -> Bool { dark[y * side + x] }
}
