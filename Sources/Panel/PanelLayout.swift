/// Where everything goes on a panel of a given size. Type sizes and margins scale with the panel:
/// one unit is 1/18 of the height or 1/26 of the width, whichever is smaller (12 px at 320x240,
/// 18 px at 480x320, 27 px at 800x480, 60 px at 1920x1080).
public struct PanelLayout: Sendable, Equatable {
    public let width: Int
    public let height: Int
    /// The type unit in pixels.
    public let unit: Double
    public let margin: Int
    /// Connectivity on the left, the counts on the right.
    public let topBar: PanelRect
    /// The hairline under the top bar.
    public let rule: PanelRect
    /// The latest book.
    public let book: PanelRect
    /// The live viewfinder (empty when the panel is too narrow for one).
    public let viewfinder: PanelRect
    /// The strip of latest scans.
    public let strip: PanelRect
    /// One thumbnail box of the strip (its size; boxes are laid out left to right from `strip.x`).
    public let tileWidth: Int
    public let tileGap: Int
    /// Border width of a thumbnail's state colour.
    public let border: Int

    public init(width: Int, height: Int) {
        self.width = width
        self.height = height
        let unit = min(Double(height) / 18, Double(width) / 26)
        self.unit = unit
        let margin = max(6, Int((unit * 0.9).rounded()))
        self.margin = margin
        let content = PanelRect(x: margin, y: margin, width: width - 2 * margin, height: height - 2 * margin)
        let barHeight = Int((unit * 1.7).rounded())
        topBar = PanelRect(x: content.x, y: content.y, width: content.width, height: barHeight)
        let hairline = max(1, Int((unit / 12).rounded()))
        rule = PanelRect(x: content.x, y: topBar.maxY + Int(unit * 0.3), width: content.width, height: hairline)
        let gap = Int((unit * 0.8).rounded())
        let stripHeight = Int((unit * 3.6).rounded())
        strip = PanelRect(x: content.x, y: content.maxY - stripHeight, width: content.width, height: stripHeight)
        tileGap = max(4, Int((unit * 0.45).rounded()))
        tileWidth = stripHeight * 4 / 3
        border = max(2, Int((unit / 6).rounded()))
        let middleTop = rule.maxY + gap
        let middleHeight = strip.y - gap - middleTop
        // The viewfinder takes a 4:3 box on the right, at most 45 % of the width.
        let viewfinderWidth = min(middleHeight * 4 / 3, content.width * 45 / 100)
        if viewfinderWidth >= Int(unit * 4) {
            viewfinder = PanelRect(
                x: content.maxX - viewfinderWidth, y: middleTop, width: viewfinderWidth, height: middleHeight)
            book = PanelRect(x: content.x, y: middleTop, width: viewfinder.x - gap - content.x, height: middleHeight)
        } else {
            viewfinder = PanelRect(x: content.maxX, y: middleTop, width: 0, height: 0)
            book = PanelRect(x: content.x, y: middleTop, width: content.width, height: middleHeight)
        }
    }

    public var bounds: PanelRect { PanelRect(x: 0, y: 0, width: width, height: height) }

    /// How many thumbnails fit in the strip.
    public var tileCount: Int { max(0, (strip.width + tileGap) / (tileWidth + tileGap)) }

    /// The box of thumbnail `index` (0 = newest, at the left).
    public func tile(_ index: Int) -> PanelRect {
        PanelRect(x: strip.x + index * (tileWidth + tileGap), y: strip.y, width: tileWidth, height: strip.height)
    }
}
