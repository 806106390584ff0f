import CCairo
import Synchronization

// The one Swift layer over Cairo and fontconfig: every cairo_* and Fc* call of the panel lives in
// PanelFont.swift, PanelImage.swift and Canvas.swift, and everything unsafe stays inside them. Callers
// get typed values and `PanelError`s.

/// Serializes text drawing and measuring across the process. The daemon draws on one thread, but
/// tests render several panels at once, and cairo 1.16's FreeType backend then drew some glyphs
/// differently now and then (the golden tests failed in about one run in three under load).
private let textLock = Mutex(())

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

    /// Many rectangles in one colour, filled as one path (the modules of a QR code).
    func fill(_ rects: [PanelRect], _ color: PanelColor) {
        setColor(color)
        for rect in rects {
            cairo_rectangle(cr, Double(rect.x), Double(rect.y), Double(rect.width), Double(rect.height))
        }
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
                cr, font.family, CAIRO_FONT_SLANT_NORMAL,
                font.isBold ? CAIRO_FONT_WEIGHT_BOLD : CAIRO_FONT_WEIGHT_NORMAL)
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
