import CCairo
import Glibc
import Synchronization

// The one Swift layer over Cairo and fontconfig: every cairo_* and Fc* call of the panel lives in
// this file, and everything unsafe stays inside it. Callers get typed values and `PanelError`s.

/// A rectangle in panel pixels (origin top left).
public struct PanelRect: Hashable, Sendable, CustomStringConvertible {
    public var x: Int
    public var y: Int
    public var width: Int
    public var height: Int

    public init(x: Int, y: Int, width: Int, height: Int) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }

    public var isEmpty: Bool { width <= 0 || height <= 0 }
    public var maxX: Int { x + width }
    public var maxY: Int { y + height }
    public var area: Int { isEmpty ? 0 : width * height }

    /// The part of this rectangle inside `other` (empty when they do not overlap).
    public func intersection(_ other: PanelRect) -> PanelRect {
        let x0 = max(x, other.x), y0 = max(y, other.y)
        let x1 = min(maxX, other.maxX), y1 = min(maxY, other.maxY)
        return PanelRect(x: x0, y: y0, width: max(0, x1 - x0), height: max(0, y1 - y0))
    }

    /// The smallest rectangle holding both.
    public func union(_ other: PanelRect) -> PanelRect {
        if isEmpty { return other }
        if other.isEmpty { return self }
        let x0 = min(x, other.x), y0 = min(y, other.y)
        return PanelRect(x: x0, y: y0, width: max(maxX, other.maxX) - x0, height: max(maxY, other.maxY) - y0)
    }

    /// This rectangle shrunk by `amount` on every side.
    public func inset(by amount: Int) -> PanelRect {
        PanelRect(x: x + amount, y: y + amount, width: width - 2 * amount, height: height - 2 * amount)
    }

    public var description: String { "\(width)x\(height)+\(x)+\(y)" }
}

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

/// Serializes text drawing and measuring across the process. The daemon draws on one thread, but
/// tests render several panels at once, and cairo 1.16's FreeType backend then drew some glyphs
/// differently now and then (the golden tests failed in about one run in three under load).
private let textLock = Mutex(())

private func statusText(_ status: cairo_status_t) -> String {
    String(cString: cairo_status_to_string(status))
}

/// An off-screen picture: a Cairo image surface in `CAIRO_FORMAT_RGB24` (32 bits per pixel,
/// native-endian `0x00RRGGBB`), the panel's drawing target and the source of every output.
public final class PanelImage {
    let surface: OpaquePointer
    public let width: Int
    public let height: Int
    /// Bytes per row of ``withPixels(_:)``.
    public let stride: Int

    /// A black picture of `width` x `height`.
    ///
    /// The corresponding C function is `cairo_image_surface_create`.
    public init(width: Int, height: Int) throws(PanelError) {
        precondition(width > 0 && height > 0, "a panel has at least one pixel")
        guard let surface = cairo_image_surface_create(CAIRO_FORMAT_RGB24, Int32(width), Int32(height)) else {
            throw .cairo(call: "cairo_image_surface_create", status: "no surface")
        }
        let status = cairo_surface_status(surface)
        guard status == CAIRO_STATUS_SUCCESS else {
            cairo_surface_destroy(surface)
            throw .cairo(call: "cairo_image_surface_create \(width)x\(height)", status: statusText(status))
        }
        self.surface = surface
        self.width = width
        self.height = height
        self.stride = Int(cairo_image_surface_get_stride(surface))
    }

    /// Reads a PNG file (for golden images); alpha is dropped onto black.
    ///
    /// The corresponding C function is `cairo_image_surface_create_from_png`.
    public convenience init(contentsOfPNG path: String) throws(PanelError) {
        guard let loaded = cairo_image_surface_create_from_png(path) else {
            throw .cairo(call: "cairo_image_surface_create_from_png \(path)", status: "no surface")
        }
        defer { cairo_surface_destroy(loaded) }
        let status = cairo_surface_status(loaded)
        guard status == CAIRO_STATUS_SUCCESS else {
            throw .cairo(call: "cairo_image_surface_create_from_png \(path)", status: statusText(status))
        }
        try self.init(width: Int(cairo_image_surface_get_width(loaded)), height: Int(cairo_image_surface_get_height(loaded)))
        let cr = cairo_create(surface)
        cairo_set_source_surface(cr, loaded, 0, 0)
        cairo_paint(cr)
        cairo_destroy(cr)
        cairo_surface_flush(surface)
    }

    deinit {
        cairo_surface_destroy(surface)
    }

    /// Calls `body` with the pixels (rows of `stride` bytes, each pixel a native-endian `UInt32`
    /// `0x00RRGGBB`); Cairo is told afterwards that they may have changed.
    ///
    /// The corresponding C functions are `cairo_surface_flush`, `cairo_image_surface_get_data`
    /// and `cairo_surface_mark_dirty`.
    public func withPixels<R, E: Error>(_ body: (UnsafeMutableRawPointer) throws(E) -> R) throws(E) -> R {
        cairo_surface_flush(surface)
        defer { cairo_surface_mark_dirty(surface) }
        return try body(UnsafeMutableRawPointer(cairo_image_surface_get_data(surface)!))
    }

    /// Read-only access to the pixels, without invalidating Cairo's caches.
    public func withPixelsReadOnly<R, E: Error>(_ body: (UnsafeRawPointer) throws(E) -> R) throws(E) -> R {
        cairo_surface_flush(surface)
        return try body(UnsafeRawPointer(cairo_image_surface_get_data(surface)!))
    }

    /// The colour at (`x`, `y`).
    public func pixel(x: Int, y: Int) -> PanelColor {
        precondition(x >= 0 && x < width && y >= 0 && y < height)
        let value = withPixelsReadOnly { $0.load(fromByteOffset: y * stride + x * 4, as: UInt32.self) }
        return PanelColor(hex: value & 0xFF_FFFF)
    }

    /// Writes the picture to `path` as a PNG, atomically: a temporary file beside it, then
    /// `rename(2)`, so a reader never sees half a picture.
    ///
    /// The corresponding C function is `cairo_surface_write_to_png`.
    public func writePNG(to path: String) throws(PanelError) {
        let temporary = path + ".tmp-\(getpid())"
        let status = cairo_surface_write_to_png(surface, temporary)
        guard status == CAIRO_STATUS_SUCCESS else {
            unlink(temporary)
            throw .pngWrite(path: path, reason: statusText(status))
        }
        guard rename(temporary, path) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporary)
            throw .pngWrite(path: path, reason: reason)
        }
    }
}

/// Drawing on a ``PanelImage``: the few Cairo operations the renderer needs.
final class Canvas {
    private let cr: OpaquePointer
    let image: PanelImage

    /// The corresponding C function is `cairo_create`.
    init(_ image: PanelImage) {
        _ = fontconfigReady
        self.image = image
        self.cr = cairo_create(image.surface)
        let options = cairo_font_options_create()
        cairo_font_options_set_antialias(options, CAIRO_ANTIALIAS_GRAY)
        // Explicit, not fontconfig's defaults: the same picture on every machine and in every process.
        cairo_font_options_set_hint_style(options, CAIRO_HINT_STYLE_NONE)
        cairo_font_options_set_hint_metrics(options, CAIRO_HINT_METRICS_OFF)
        cairo_font_options_set_subpixel_order(options, CAIRO_SUBPIXEL_ORDER_DEFAULT)
        cairo_set_font_options(cr, options)
        cairo_font_options_destroy(options)
    }

    deinit {
        cairo_destroy(cr)
    }

    func setColor(_ color: PanelColor) {
        cairo_set_source_rgb(cr, Double(color.red) / 255, Double(color.green) / 255, Double(color.blue) / 255)
    }

    func fill(_ rect: PanelRect, _ color: PanelColor) {
        setColor(color)
        cairo_rectangle(cr, Double(rect.x), Double(rect.y), Double(rect.width), Double(rect.height))
        cairo_fill(cr)
    }

    /// A border of `lineWidth` pixels drawn inside `rect`.
    func frame(_ rect: PanelRect, _ color: PanelColor, lineWidth: Int) {
        let w = max(1, lineWidth)
        fill(PanelRect(x: rect.x, y: rect.y, width: rect.width, height: w), color)
        fill(PanelRect(x: rect.x, y: rect.maxY - w, width: rect.width, height: w), color)
        fill(PanelRect(x: rect.x, y: rect.y, width: w, height: rect.height), color)
        fill(PanelRect(x: rect.maxX - w, y: rect.y, width: w, height: rect.height), color)
    }

    /// Restricts drawing to `rect` while `body` runs.
    func clipped(to rect: PanelRect, _ body: () -> Void) {
        cairo_save(cr)
        cairo_rectangle(cr, Double(rect.x), Double(rect.y), Double(rect.width), Double(rect.height))
        cairo_clip(cr)
        body()
        cairo_restore(cr)
    }

    func setFont(_ font: PanelFont, size: Double) {
        textLock.withLock { _ in
            cairo_select_font_face(
                cr, font.family, CAIRO_FONT_SLANT_NORMAL, font.isBold ? CAIRO_FONT_WEIGHT_BOLD : CAIRO_FONT_WEIGHT_NORMAL)
            cairo_set_font_size(cr, size)
        }
    }

    /// The advance width of `text` in the current font.
    func width(of text: String) -> Double {
        textLock.withLock { _ in
            var extents = cairo_text_extents_t()
            cairo_text_extents(cr, text, &extents)
            return extents.x_advance
        }
    }

    /// Ascent and descent of the current font.
    func fontMetrics() -> (ascent: Double, descent: Double) {
        textLock.withLock { _ in
            var extents = cairo_font_extents_t()
            cairo_font_extents(cr, &extents)
            return (extents.ascent, extents.descent)
        }
    }

    /// Writes `text` with its baseline at `baseline`, starting at `x`; returns the advance.
    @discardableResult
    func text(_ text: String, x: Double, baseline: Double, color: PanelColor) -> Double {
        setColor(color)
        textLock.withLock { _ in
            cairo_move_to(cr, x.rounded(), baseline.rounded())
            cairo_show_text(cr, text)
        }
        return width(of: text)
    }

    /// `text` cut to fit `maxWidth` with an ellipsis, in the current font.
    func fitted(_ text: String, maxWidth: Double) -> String {
        if width(of: text) <= maxWidth { return text }
        var characters = Array(text)
        while !characters.isEmpty {
            characters.removeLast()
            let candidate = String(characters).trimmingTrailingSpaces() + "…"
            if width(of: candidate) <= maxWidth { return candidate }
        }
        return ""
    }

    /// `text` broken into at most `maxLines` lines of `maxWidth` at spaces; the last is cut with an ellipsis.
    func wrapped(_ text: String, maxWidth: Double, maxLines: Int) -> [String] {
        var lines: [String] = []
        var current = ""
        let words = text.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
        var index = 0
        while index < words.count {
            let word = words[index]
            let candidate = current.isEmpty ? word : current + " " + word
            if width(of: candidate) <= maxWidth || current.isEmpty {
                current = candidate
                index += 1
            } else {
                lines.append(current)
                current = ""
                if lines.count == maxLines - 1 {
                    current = words[index...].joined(separator: " ")
                    break
                }
            }
        }
        if !current.isEmpty { lines.append(current) }
        return lines.prefix(maxLines).map { fitted($0, maxWidth: maxWidth) }
    }
}

extension String {
    fileprivate func trimmingTrailingSpaces() -> String {
        var result = self
        while result.last == " " { result.removeLast() }
        return result
    }
}

/// The linked Cairo, for `swiftwing doctor`.
public enum LibCairo {
    /// The corresponding C function is `cairo_version_string`.
    public static var version: String { String(cString: cairo_version_string()) }
}
