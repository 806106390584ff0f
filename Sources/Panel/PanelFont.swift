import CCairo

/// The faces the panel writes in: JetBrains Mono for data, DejaVu Sans for labels.
public enum PanelFont: Sendable, CaseIterable {
    case data, dataBold, label, labelBold

    /// The fontconfig family name.
    public var family: String {
        switch self {
        case .data, .dataBold: "JetBrains Mono"
        case .label, .labelBold: "DejaVu Sans"
        }
    }

    var isBold: Bool { self == .dataBold || self == .labelBold }

    /// The family fontconfig actually picks for this face (another one when the font is not
    /// installed: `apt install fonts-jetbrains-mono fonts-dejavu-core`).
    ///
    /// The corresponding C function is `FcFontMatch`.
    public var resolvedFamily: String? {
        guard fontconfigReady, let pattern = FcNameParse(family) else { return nil }
        defer { FcPatternDestroy(pattern) }
        FcConfigSubstitute(nil, pattern, FcMatchPattern)
        FcDefaultSubstitute(pattern)
        var result = FcResultNoMatch
        guard let match = FcFontMatch(nil, pattern, &result) else { return nil }
        defer { FcPatternDestroy(match) }
        var name: UnsafeMutablePointer<FcChar8>?
        guard FcPatternGetString(match, "family", 0, &name) == FcResultMatch, let name else { return nil }
        return String(cString: UnsafeRawPointer(name).assumingMemoryBound(to: CChar.self))
    }
}

/// Loads fontconfig's configuration once, before any drawing or font query. Left to happen lazily,
/// the first cairo_show_text on one thread and an FcFontMatch on another could race to initialize
/// it, and one test run in a few drew text slightly differently (hinting) from the next.
let fontconfigReady: Bool = {
    FcInit() != 0
}()
