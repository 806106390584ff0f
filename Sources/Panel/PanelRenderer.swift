/// Draws a ``PanelModel`` onto an off-screen ``PanelImage`` and says which rectangles changed.
///
/// The screen is split into regions (top bar, latest book, viewfinder, strip); a region is redrawn
/// only when its part of the model changed, so a viewfinder frame redraws the viewfinder box and
/// nothing else. A notice or the flash covers the whole screen. Not thread-safe: one owner.
public final class PanelRenderer {
    public let layout: PanelLayout
    public let image: PanelImage
    private let canvas: Canvas
    private var drawn: PanelModel?

    public init(width: Int, height: Int) throws(PanelError) {
        layout = PanelLayout(width: width, height: height)
        image = try PanelImage(width: width, height: height)
        canvas = Canvas(image)
    }

    /// Forgets what is on the image, so the next ``render(_:)`` draws everything.
    public func invalidate() {
        drawn = nil
    }

    /// Brings the image up to date with `model`; returns the rectangles that changed (empty when
    /// nothing did).
    @discardableResult
    public func render(_ model: PanelModel) -> [PanelRect] {
        defer { drawn = model }
        guard let previous = drawn, previous.flash == model.flash, previous.notice == model.notice, !model.flash,
            model.notice == nil
        else {
            if drawn == model { return [] }
            drawFull(model)
            return [layout.bounds]
        }
        var damage: [PanelRect] = []
        if previous.connectivity != model.connectivity || previous.queued != model.queued
            || previous.library != model.library || previous.toCheck != model.toCheck
        {
            drawTopBar(model)
            damage.append(layout.topBar)
        }
        if previous.latestBook != model.latestBook {
            drawBook(model.latestBook)
            damage.append(layout.book)
        }
        if previous.viewfinder != model.viewfinder, !layout.viewfinder.isEmpty {
            drawViewfinder(model.viewfinder)
            damage.append(layout.viewfinder)
        }
        if previous.strip != model.strip {
            drawStrip(model.strip)
            damage.append(layout.strip)
        }
        return damage
    }

    // MARK: Drawing

    private var unit: Double { layout.unit }

    private func drawFull(_ model: PanelModel) {
        if model.flash {
            canvas.fill(layout.bounds, .white)
            return
        }
        canvas.fill(layout.bounds, .black)
        if let notice = model.notice {
            drawNotice(notice, model: model)
            return
        }
        canvas.fill(layout.rule, .white)
        drawTopBar(model)
        drawBook(model.latestBook)
        if !layout.viewfinder.isEmpty { drawViewfinder(model.viewfinder) }
        drawStrip(model.strip)
    }

    private func drawTopBar(_ model: PanelModel) {
        let bar = layout.topBar
        canvas.fill(bar, .black)
        canvas.clipped(to: bar) {
            canvas.setFont(.labelBold, size: unit * 1.15)
            let metrics = canvas.fontMetrics()
            let baseline = Double(bar.y) + (Double(bar.height) + metrics.ascent - metrics.descent) / 2
            // Counts on the right first ("QUEUED 12   LIBRARY 523": labels small and dim, numbers in
            // mono), then the connectivity on the left in what is left, smaller if it must be.
            var x = Double(bar.maxX)
            // "TO CHECK 5" (spines read but not identified) only when there are some, in orange: the owner's to-do.
            let counts =
                (model.toCheck > 0 ? [("TO CHECK", model.toCheck)] : []) + [
                    ("LIBRARY", model.library), ("QUEUED", model.queued),
                ]
            for (label, value) in counts {
                canvas.setFont(.dataBold, size: unit * 1.15)
                let number = "\(value)"
                x -= canvas.width(of: number)
                canvas.text(
                    number, x: x, baseline: baseline, color: label != "LIBRARY" && value > 0 ? .orange : .white)
                canvas.setFont(.label, size: unit * 0.7)
                x -= canvas.width(of: label) + unit * 0.3
                canvas.text(label, x: x, baseline: baseline, color: .dim)
                x -= unit * 1.1
            }
            // A square marker: white when online, orange for every state that needs attention.
            let online = model.connectivity == .online
            let square = Int(unit * 0.75)
            canvas.fill(
                PanelRect(x: bar.x, y: bar.y + (bar.height - square) / 2, width: square, height: square),
                online ? .white : .orange)
            let state = model.connectivity.description
            let stateX = Double(bar.x + square) + unit * 0.5
            let room = x + unit * 0.4 - stateX
            var size = unit * 1.15
            canvas.setFont(.labelBold, size: size)
            while size > unit * 0.7 && canvas.width(of: state) > room {
                size -= unit * 0.05
                canvas.setFont(.labelBold, size: size)
            }
            canvas.text(
                canvas.fitted(state, maxWidth: room), x: stateX, baseline: baseline, color: online ? .white : .orange)
        }
    }

    private func drawBook(_ book: LatestBook?) {
        let box = layout.book
        canvas.fill(box, .black)
        canvas.clipped(to: box) {
            var y = Double(box.y)
            let maxWidth = Double(box.width)
            canvas.setFont(.label, size: unit * 0.7)
            y += canvas.fontMetrics().ascent
            canvas.text("LATEST BOOK", x: Double(box.x), baseline: y, color: .dim)
            y += unit * 0.5
            guard let book else {
                canvas.setFont(.label, size: unit)
                y += canvas.fontMetrics().ascent
                for line in canvas.wrapped(
                    "No books yet. Aim at a shelf and press the button.", maxWidth: maxWidth, maxLines: 3)
                {
                    canvas.text(line, x: Double(box.x), baseline: y, color: .white)
                    y += unit * 1.25
                }
                return
            }
            // Title: large and bold, up to two lines (three on tall boxes).
            canvas.setFont(.labelBold, size: unit * 1.35)
            let titleMetrics = canvas.fontMetrics()
            let titleLines = canvas.wrapped(
                book.title, maxWidth: maxWidth, maxLines: Double(box.height) > unit * 11 ? 3 : 2)
            for line in titleLines {
                y += titleMetrics.ascent
                canvas.text(line, x: Double(box.x), baseline: y, color: .white)
                y += titleMetrics.descent + unit * 0.1
            }
            if !book.authors.isEmpty {
                canvas.setFont(.label, size: unit * 0.95)
                y += canvas.fontMetrics().ascent + unit * 0.2
                canvas.text(
                    canvas.fitted(book.authors.joined(separator: ", "), maxWidth: maxWidth), x: Double(box.x),
                    baseline: y, color: .white)
            }
            // Data line: ISBN and confidence in mono, the review mark in orange.
            y += unit * 1.6
            var x = Double(box.x)
            if let isbn = book.isbn {
                canvas.setFont(.label, size: unit * 0.7)
                x += canvas.text("ISBN ", x: x, baseline: y, color: .dim)
                canvas.setFont(.data, size: unit * 0.95)
                x += canvas.text(isbn, x: x, baseline: y, color: .white) + unit * 0.8
            }
            if let confidence = book.confidence {
                if x + unit * 5 > Double(box.maxX) {
                    x = Double(box.x)
                    y += unit * 1.4
                }
                canvas.setFont(.label, size: unit * 0.7)
                x += canvas.text("CONF ", x: x, baseline: y, color: .dim)
                canvas.setFont(.data, size: unit * 0.95)
                let percent = Int((confidence * 100).rounded())
                x +=
                    canvas.text("\(percent)%", x: x, baseline: y, color: book.needsReview ? .orange : .white) + unit
                    * 0.6
            }
            if book.needsReview {
                canvas.setFont(.labelBold, size: unit * 0.75)
                let word = "REVIEW"
                let padding = unit * 0.3
                let width = canvas.width(of: word) + 2 * padding
                if x + width > Double(box.maxX) {
                    x = Double(box.x)
                    y += unit * 1.4
                }
                let metrics = canvas.fontMetrics()
                canvas.fill(
                    PanelRect(
                        x: Int(x), y: Int(y - metrics.ascent - padding / 2), width: Int(width),
                        height: Int(metrics.ascent + metrics.descent + padding)), .orange)
                canvas.text(word, x: x + padding, baseline: y, color: .black)
            }
        }
    }

    private func drawViewfinder(_ picture: PanelPicture?) {
        let box = layout.viewfinder
        guard let picture else {
            canvas.fill(box, .black)
            canvas.frame(box, .rule, lineWidth: max(1, Int(unit / 10)))
            canvas.setFont(.label, size: unit * 0.7)
            let text = canvas.fitted("NO VIEWFINDER", maxWidth: Double(box.width) - unit)
            canvas.text(
                text, x: Double(box.x) + (Double(box.width) - canvas.width(of: text)) / 2,
                baseline: Double(box.y + box.height / 2), color: .dim)
            return
        }
        YUVPainter.paint(picture.frame, into: box, of: image, fit: .fill)
        // Corner marks in orange, to aim with.
        let length = Int(unit * 0.9)
        let thickness = max(2, Int(unit / 8))
        for (x, y, dx, dy) in [
            (box.x, box.y, 1, 1), (box.maxX, box.y, -1, 1), (box.x, box.maxY, 1, -1), (box.maxX, box.maxY, -1, -1),
        ] {
            canvas.fill(
                PanelRect(x: dx > 0 ? x : x - length, y: dy > 0 ? y : y - thickness, width: length, height: thickness),
                .orange)
            canvas.fill(
                PanelRect(x: dx > 0 ? x : x - thickness, y: dy > 0 ? y : y - length, width: thickness, height: length),
                .orange)
        }
    }

    private func drawStrip(_ tiles: [ScanTile]) {
        canvas.fill(layout.strip, .black)
        for index in 0..<layout.tileCount {
            let box = layout.tile(index)
            guard index < tiles.count else {
                canvas.frame(box, .rule, lineWidth: max(1, layout.border / 2))
                continue
            }
            let tile = tiles[index]
            if let thumbnail = tile.thumbnail {
                YUVPainter.paint(thumbnail.frame, into: box.inset(by: layout.border), of: image, fit: .fill)
            } else {
                canvas.fill(box.inset(by: layout.border), .rule)
            }
            canvas.frame(box, Self.color(of: tile.state), lineWidth: layout.border)
        }
    }

    private func drawNotice(_ notice: PanelNotice, model: PanelModel) {
        if case .pairing(let pairing) = notice {
            drawPairing(pairing)
            return
        }
        let margin = Double(layout.margin) * 1.5
        let accent = notice.isGoodNews ? PanelColor.white : .orange
        // An accent bar on the left edge, a big heading, then the advice.
        canvas.fill(
            PanelRect(x: Int(margin), y: Int(margin), width: Int(unit * 0.6), height: layout.height - Int(2 * margin)),
            accent)
        let x = margin + unit * 1.6
        let maxWidth = Double(layout.width) - x - margin
        canvas.setFont(.labelBold, size: unit * 2.4)
        var y = margin + canvas.fontMetrics().ascent
        for line in canvas.wrapped(notice.title, maxWidth: maxWidth, maxLines: 2) {
            canvas.text(line, x: x, baseline: y, color: accent)
            y += unit * 2.8
        }
        canvas.setFont(.label, size: unit * 1.3)
        y += unit * 0.4
        for line in canvas.wrapped(notice.detail, maxWidth: maxWidth, maxLines: 4) {
            canvas.text(line, x: x, baseline: y, color: .white)
            y += unit * 1.7
        }
        // The counts stay in view at the bottom: the queue is safe whatever the notice says.
        let baseline = Double(layout.height) - margin
        var footerX = x
        let counts =
            [("QUEUED", model.queued), ("LIBRARY", model.library)]
            + (model.toCheck > 0 ? [("TO CHECK", model.toCheck)] : [])
        for (label, value) in counts {
            canvas.setFont(.label, size: unit * 0.7)
            footerX += canvas.text(label + " ", x: footerX, baseline: baseline, color: .dim)
            canvas.setFont(.dataBold, size: unit * 1.0)
            footerX += canvas.text("\(value)", x: footerX, baseline: baseline, color: .white) + unit * 1.1
        }
    }

    /// The pairing screen: the QR code on the right (dark modules on white with a quiet zone of four
    /// modules, each module a whole number of pixels so a camera reads it), and on the left the heading, the
    /// code in large mono digits, the address and how long the code still works.
    private func drawPairing(_ pairing: PanelPairing) {
        let margin = Double(layout.margin) * 1.5
        var textRight = Double(layout.width) - margin
        if let qr = pairing.qrCode {
            let quietZone = 4
            let span = qr.side + 2 * quietZone
            let boxSide = min(Double(layout.height) - 2 * margin, Double(layout.width) * 0.45)
            let module = Int(boxSide) / span
            // Below 2 pixels a module blurs into its neighbours on a small panel: the text alone is clearer.
            if module >= 2 {
                let side = module * span
                let x0 = layout.width - Int(margin) - side
                let y0 = (layout.height - side) / 2
                canvas.fill(PanelRect(x: x0, y: y0, width: side, height: side), .white)
                var modules: [PanelRect] = []
                for y in 0..<qr.side {
                    for x in 0..<qr.side where qr.isDark(x: x, y: y) {
                        modules.append(
                            PanelRect(
                                x: x0 + (x + quietZone) * module, y: y0 + (y + quietZone) * module, width: module,
                                height: module))
                    }
                }
                canvas.fill(modules, .black)
                textRight = Double(x0) - unit
            }
        }
        canvas.fill(
            PanelRect(x: Int(margin), y: Int(margin), width: Int(unit * 0.6), height: layout.height - Int(2 * margin)),
            .orange)
        let x = margin + unit * 1.6
        let room = textRight - x
        canvas.setFont(.labelBold, size: unit * 1.5)
        var y = margin + canvas.fontMetrics().ascent
        for line in canvas.wrapped(PanelNotice.pairing(pairing).title, maxWidth: room, maxLines: 2) {
            canvas.text(line, x: x, baseline: y, color: .orange)
            y += unit * 1.8
        }
        // The code as large as the column allows, in two groups of three (easier to read out and type).
        let groups = [String(pairing.code.prefix(3)), String(pairing.code.dropFirst(3))]
        var size = unit * 3.6
        canvas.setFont(.dataBold, size: size)
        while size > unit && canvas.width(of: groups.joined()) + size * 0.35 > room {
            size -= unit * 0.1
            canvas.setFont(.dataBold, size: size)
        }
        y += unit * 0.4
        canvas.setFont(.label, size: unit * 0.7)
        canvas.text("CODE", x: x, baseline: y, color: .dim)
        canvas.setFont(.dataBold, size: size)
        y += canvas.fontMetrics().ascent
        let second = x + canvas.text(groups[0], x: x, baseline: y, color: .white) + size * 0.35
        canvas.text(groups[1], x: second, baseline: y, color: .white)
        y += unit * 1.6
        canvas.setFont(.label, size: unit * 0.7)
        canvas.text("OPEN", x: x, baseline: y, color: .dim)
        var addressSize = unit * 1.1
        canvas.setFont(.data, size: addressSize)
        while addressSize > unit * 0.6 && canvas.width(of: pairing.address) > room {
            addressSize -= unit * 0.05
            canvas.setFont(.data, size: addressSize)
        }
        y += canvas.fontMetrics().ascent + unit * 0.2
        canvas.text(canvas.fitted(pairing.address, maxWidth: room), x: x, baseline: y, color: .white)
        // How long the code works, at the bottom.
        canvas.setFont(.label, size: unit * 0.9)
        canvas.text(
            canvas.fitted("works \(pairing.timeLeft), once", maxWidth: room), x: x,
            baseline: Double(layout.height) - margin, color: .dim)
    }

    /// The border colour of a scan state.
    public static func color(of state: ScanTileState) -> PanelColor {
        switch state {
        case .waiting: .waiting
        case .uploading: .uploading
        case .analyzing: .analyzing
        case .done: .done
        case .failed: .failed
        }
    }
}
