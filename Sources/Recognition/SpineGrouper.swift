/// Groups the text lines read on a shelf photo into books.
///
/// Spines mostly stand upright, so their text runs along them, turned 90° one way or the other; a wide spine holds
/// several such lines side by side (title, author), and its lines sit in one column along the spine (publisher at
/// the top, a library's call number label at the foot). Books lying flat or facing out carry lines that run across,
/// stacked one over the other.
///
/// A library's label is the firmest landmark: it sits at the foot of exactly one spine. So each upright label (its
/// fragments in one column taken together) anchors a spine, and every upright line goes to the first label below it
/// along the line's own axis (spines lean, so the axis is followed down rather than straight down the photo). The
/// remaining lines join by layout (one column, side by side, stacked, a short line across an upright one), but a
/// group never takes two labels, nothing below a label joins it (the label is the spine's foot), no line joins across
/// a row of labels (a shelf's foot), and a line whose axis misses every label below it (its own was not read) joins
/// no labelled spine.
///
/// A home shelf has no labels, and look-alike spines of a series stand side by side: there the edges the OCR worker
/// saw between books (`ReadPhoto.separators`, long near-vertical edges) bound the spines. An edge that runs through a
/// line's text is a stroke or a stripe of that spine, not a boundary, and is cut there; what remains keeps lines on
/// its two sides apart (labels stay the firmer evidence: they are joined first, edges only refuse a join by layout).
public struct SpineGrouper: Sendable {
    /// Two lines in one column along a spine may be this far apart along it, as a fraction of the photo's long edge:
    /// a spine's title and its label can be half a spine apart, but the next shelf is farther.
    public var columnGap: Double = 0.14
    /// A line goes to a label at most this far below it, as a fraction of the photo's long edge: a spine's full
    /// height, which is less than the distance from one shelf's labels to the next shelf's.
    public var labelReach: Double = 0.3
    /// A line's axis, followed down to a label's height, must pass within this many widths of the label's centre
    /// (the label's width across the spine, or the line's height if more: a label may be read in fragments).
    public var labelTolerance: Double = 1.0
    /// A line whose axis passes more than this many times the tolerance from every label below it stood on a spine
    /// whose label was not read (between the two, a line may still be its neighbour's, read askew).
    public var unreadLabelClearance: Double = 1.5
    /// Lines side by side on one spine are at most this many line heights apart across it.
    public var sideBySideGap: Double = 0.6
    /// Lines stacked on a flat book or a cover are at most this many line heights apart.
    public var stackedGap: Double = 1.0
    /// A group with fewer letters and digits than this is noise (a stray mark read as a character).
    public var minimumCharacters = 3

    public init() {}

    public func group(_ photo: ReadPhoto) -> [SpineText] {
        let lines = photo.lines.enumerated().compactMap { index, line in
            LineGeometry(line, index: index)
        }
        guard !lines.isEmpty else { return [] }
        let longEdge = Double(max(photo.width, photo.height, 1))
        // A class number of digits is label enough. A class of letters ("N Pam") could be a title's words, and an
        // author mark read apart from its class ("Pas") could be a fragment of any word: they are labels only on a
        // row of labels, where the shelf's other labels confirm them.
        let upright = lines.indices.filter { lines[$0].runsAlongY }
        let candidates = upright.filter { lines[$0].isClassNumber || lines[$0].isLetterLabel }
        let candidateRows = LabelRows(
            anchors: labelAnchors(lines, labels: candidates), lines: lines, longEdge: longEdge)
        let labels = upright.filter { i in
            lines[i].isClassNumber
                || ((lines[i].isLetterLabel || lines[i].isAuthorMark) && candidateRows.isOnRow(lines[i]))
        }
        let anchors = labelAnchors(lines, labels: labels)
        let isLabel = Set(labels)
        var anchorOf = [Int?](repeating: nil, count: lines.count)
        for (anchor, members) in anchors.enumerated() {
            for member in members { anchorOf[member] = anchor }
        }
        let lean = LeanEstimate(lines, width: Double(max(photo.width, 1)))
        let rows = LabelRows(anchors: anchors, lines: lines, longEdge: longEdge)
        // Lines whose label was not read share one mark in place of an anchor, so they may join each other but no
        // labelled spine.
        let unreadLabel = anchors.count
        var setAnchor = anchorOf
        for i in lines.indices where anchorOf[i] == nil && lines[i].runsAlongY {
            switch footOf(lines[i], anchors: anchors, lines: lines, lean: lean, rows: rows, longEdge: longEdge) {
            case .label(let anchor):
                anchorOf[i] = anchor
                setAnchor[i] = anchor
            case .unreadLabel:
                setAnchor[i] = unreadLabel
            case .noLabels:
                break
            }
        }
        var sets = DisjointSets(count: lines.count, anchors: setAnchor)
        for (i, anchor) in anchorOf.enumerated() {
            if let anchor { sets.union(i, anchors[anchor][0]) }
        }
        let walls = SeparatorPieces(photo.separators, lines: lines)
        for i in lines.indices {
            for j in lines.indices where j > i {
                // Two lines that each have a label: the labels have said where they go.
                if anchorOf[i] != nil && anchorOf[j] != nil { continue }
                // The label is its spine's foot: an upright line lying below it belongs to another book.
                if isLabel.contains(i) && lines[j].center.y > lines[i].yRange.upper { continue }
                if isLabel.contains(j) && lines[i].center.y > lines[j].yRange.upper { continue }
                if rows.separate(lines[i], lines[j]) { continue }
                if belongTogether(lines[i], lines[j], longEdge: longEdge) {
                    sets.union(i, j) { walls.separate(lines[$0], lines[$1]) }
                }
            }
        }
        var groups: [Int: [LineGeometry]] = [:]
        for i in lines.indices { groups[sets.find(i), default: []].append(lines[i]) }
        let spines = groups.values.flatMap(splitAtLabels).compactMap { spine(from: $0, photo: photo) }
        // Left to right, then top to bottom, so the output is stable and reads like the shelf.
        return spines.sorted { ($0.box.x, $0.box.y) < ($1.box.x, $1.box.y) }
    }

    /// The upright call number labels, each a list of line indices: fragments of one label (read as two lines, or
    /// its class and its author mark apart) lie in one column, one just above the other.
    fileprivate func labelAnchors(_ lines: [LineGeometry], labels: [Int]) -> [[Int]] {
        var sets = DisjointSets(count: lines.count)
        for i in labels {
            for j in labels where j > i {
                let a = lines[i]
                let b = lines[j]
                let sameColumn = overlap(a.xRange, b.xRange) >= 0.5 * min(a.xRange.length, b.xRange.length)
                if sameColumn && -overlap(a.yRange, b.yRange) <= min(a.length, b.length) { sets.union(i, j) }
            }
        }
        var anchors: [Int: [Int]] = [:]
        for i in labels { anchors[sets.find(i), default: []].append(i) }
        return anchors.values.map { $0.sorted() }.sorted { $0[0] < $1[0] }
    }

    /// What lies at the foot of an upright line's spine.
    fileprivate enum Foot {
        /// The label whose column the line's axis meets.
        case label(Int)
        /// Labels stand below the line, but its axis passes well clear of all of them: its spine's label was not
        /// read, and the labelled spine beside it is another book.
        case unreadLabel
        /// No label below within reach (a shelf without labels, a book lying flat above the others).
        case noLabels
    }

    /// The label at the foot of an upright line's spine: of the labels below it within reach whose column its axis
    /// meets, the nearest along the spine (a label of the shelf below is farther), then the nearest across.
    fileprivate func footOf(
        _ line: LineGeometry, anchors: [[Int]], lines: [LineGeometry], lean: LeanEstimate, rows: LabelRows,
        longEdge: Double
    ) -> Foot {
        let slope = lean.slope(of: line)
        var candidates: [(anchor: Int, gap: Double, offset: Double, along: Double)] = []
        var nearestMiss = Double.infinity
        for (anchor, members) in anchors.enumerated() {
            let xRange = Range1D(
                lower: members.map { lines[$0].xRange.lower }.min()!,
                upper: members.map { lines[$0].xRange.upper }.max()!)
            let yRange = Range1D(
                lower: members.map { lines[$0].yRange.lower }.min()!,
                upper: members.map { lines[$0].yRange.upper }.max()!)
            let labelY = (yRange.lower + yRange.upper) / 2
            // The label is at the foot: below the line's middle, and not farther than a spine's height.
            guard labelY > line.center.y, yRange.lower - line.yRange.upper <= labelReach * longEdge else { continue }
            // A row of labels between them is the foot of a shelf in between: the line stands on that shelf.
            let rowBetween = rows.hasRow(
                between: line.yRange.lower, and: yRange.lower, near: line.center.x, except: anchor)
            guard !rowBetween else { continue }
            let axisX = line.center.x + slope * (labelY - line.center.y)
            let offset = abs(axisX - (xRange.lower + xRange.upper) / 2)
            let width = max(xRange.length, line.thickness)
            guard offset <= labelTolerance * width else {
                nearestMiss = min(nearestMiss, offset / width)
                continue
            }
            candidates.append((anchor, max(0, yRange.lower - line.yRange.upper), offset, yRange.length))
        }
        guard let nearest = candidates.min(by: { $0.gap < $1.gap }) else {
            let clearOfAll = nearestMiss.isFinite && nearestMiss > unreadLabelClearance * labelTolerance
            return clearOfAll ? .unreadLabel : .noLabels
        }
        let sameRow = candidates.filter { $0.gap <= nearest.gap + nearest.along }
        return .label(sameRow.min { $0.offset < $1.offset }!.anchor)
    }

    fileprivate func belongTogether(_ a: LineGeometry, _ b: LineGeometry, longEdge: Double) -> Bool {
        switch (a.runsAlongY, b.runsAlongY) {
        case (true, true):
            let thickness = max(a.thickness, b.thickness)
            let acrossOverlap = overlap(a.xRange, b.xRange)
            let acrossGap = -acrossOverlap
            let alongGap = -overlap(a.yRange, b.yRange)
            // One column along the spine: the narrower line lies mostly within the other's band.
            if acrossOverlap >= 0.5 * min(a.xRange.length, b.xRange.length) && alongGap <= columnGap * longEdge {
                return true
            }
            // Side by side on one spine: close across, overlapping along, read the same way, of similar size.
            let sameWay = (a.direction.y > 0) == (b.direction.y > 0)
            let similar = max(a.thickness, b.thickness) <= 1.8 * min(a.thickness, b.thickness)
            return sameWay && similar && acrossGap <= sideBySideGap * thickness
                && -alongGap >= 0.4 * min(a.yRange.length, b.yRange.length)
        case (false, false):
            let thickness = max(a.thickness, b.thickness)
            let alongOverlap = overlap(a.xRange, b.xRange)
            let acrossGap = -overlap(a.yRange, b.yRange)
            return alongOverlap >= 0.5 * min(a.xRange.length, b.xRange.length) && acrossGap <= stackedGap * thickness
        default:
            // A short line across an upright spine (a label, an author printed across): it fits within the spine's
            // width, taken as the vertical line's band widened by a line height on each side.
            let (upright, across) = a.runsAlongY ? (a, b) : (b, a)
            let band = Range1D(
                lower: upright.xRange.lower - upright.thickness, upper: upright.xRange.upper + upright.thickness)
            let fits = across.xRange.lower >= band.lower && across.xRange.upper <= band.upper
            return fits && -overlap(upright.yRange, across.yRange) <= columnGap * longEdge
        }
    }

    /// A group holding call number labels that sit side by side (not in one column) is as many spines: each line
    /// goes to the label nearest across.
    fileprivate func splitAtLabels(_ group: [LineGeometry]) -> [[LineGeometry]] {
        var labels: [LineGeometry] = []
        for line in group.filter(\.isCallNumber).sorted(by: { $0.center.x < $1.center.x }) {
            if let last = labels.last, overlap(last.xRange, line.xRange) > 0 { continue }
            labels.append(line)
        }
        guard labels.count > 1 else { return [group] }
        var parts = [[LineGeometry]](repeating: [], count: labels.count)
        for line in group {
            let nearest = labels.indices.min {
                abs(labels[$0].center.x - line.center.x) < abs(labels[$1].center.x - line.center.x)
            }!
            parts[nearest].append(line)
        }
        return parts.filter { !$0.isEmpty }
    }

    fileprivate func spine(from group: [LineGeometry], photo: ReadPhoto) -> SpineText? {
        let characters =
            group.reduce(0) { $0 + $1.line.text.unicodeScalars.filter(\.properties.isAlphabetic).count }
            + group.reduce(0) { $0 + $1.line.text.filter(\.isNumber).count }
        guard characters >= minimumCharacters else { return nil }
        // Reading order: lines across the spine from the top of their letters down (title before author on most
        // spines), labels last; along the spine by where each line starts.
        let reference = group.filter { !$0.isCallNumber }.max { $0.length < $1.length } ?? group[0]
        let down = reference.down
        let along = reference.direction
        let ordered = group.sorted { a, b in
            if a.isCallNumber != b.isCallNumber { return !a.isCallNumber }
            let acrossA = a.center.x * down.x + a.center.y * down.y
            let acrossB = b.center.x * down.x + b.center.y * down.y
            if abs(acrossA - acrossB) > 0.5 * min(a.thickness, b.thickness) { return acrossA < acrossB }
            return a.center.x * along.x + a.center.y * along.y < b.center.x * along.x + b.center.y * along.y
        }
        let points = group.flatMap(\.line.polygon)
        let width = Double(max(photo.width, 1))
        let height = Double(max(photo.height, 1))
        let minX = max(0, points.map(\.x).min()!) / width
        let maxX = min(width, points.map(\.x).max()!) / width
        let minY = max(0, points.map(\.y).min()!) / height
        let maxY = min(height, points.map(\.y).max()!) / height
        return SpineText(
            text: ordered.map(\.line.text).joined(separator: " "),
            box: NormalizedBox(x: minX, y: minY, width: max(0, maxX - minX), height: max(0, maxY - minY)),
            lines: ordered.map(\.line))
    }
}

/// A closed interval on one axis.
private struct Range1D: Sendable {
    var lower: Double
    var upper: Double
    var length: Double { upper - lower }
}

/// How much two intervals overlap; negative: the gap between them.
private func overlap(_ a: Range1D, _ b: Range1D) -> Double {
    min(a.upper, b.upper) - max(a.lower, b.lower)
}

/// One line's place and direction on the photo.
private struct LineGeometry: Sendable {
    let line: TextLine
    let index: Int
    /// Unit vector in the direction the text reads.
    let direction: ImagePoint
    /// Unit vector from the top of the letters to their bottom.
    let down: ImagePoint
    let center: ImagePoint
    let length: Double
    let thickness: Double
    let xRange: Range1D
    let yRange: Range1D
    /// The text runs up or down the photo (an upright spine) rather than across it.
    let runsAlongY: Bool
    /// The text looks like a library call number ("796.42 Mor", "796(03) Dic", "N Pam", "N 833 Par").
    var isCallNumber: Bool { isClassNumber || isLetterLabel }
    /// A call number that starts with a class number of three digits or more ("796.42 Mor", "796(03) Dic").
    let isClassNumber: Bool
    /// A call number with a short class of capitals ("N Pam", "NPar", "JN Dah", "N 837 Pas").
    let isLetterLabel: Bool
    /// The text is an author mark alone, a capital and two small letters ("Pas"): the second half of a label.
    var isAuthorMark: Bool {
        let text = Array(line.text.filter { !$0.isWhitespace })
        return text.count == 3 && text[0].isUppercase && text.dropFirst().allSatisfy(\.isLowercase)
    }
    /// The line is long enough against its height for its box to show its direction reliably.
    var hasClearAxis: Bool { length >= 4 * thickness }

    /// Whether a point lies among the line's letters: within its box along, and within the middle eight tenths of
    /// its height across (a box reaches a little past its letters, where the edge of the spine beside may run).
    func holdsLetters(at point: ImagePoint) -> Bool {
        let dx = point.x - center.x
        let dy = point.y - center.y
        let along = dx * direction.x + dy * direction.y
        let across = dx * down.x + dy * down.y
        return abs(along) <= 0.5 * length && abs(across) <= 0.4 * thickness
    }

    init?(_ line: TextLine, index: Int) {
        guard line.polygon.count == 4 else { return nil }
        let p = line.polygon
        self.line = line
        self.index = index
        let readX = (p[1].x - p[0].x + p[2].x - p[3].x) / 2
        let readY = (p[1].y - p[0].y + p[2].y - p[3].y) / 2
        let downX = (p[3].x - p[0].x + p[2].x - p[1].x) / 2
        let downY = (p[3].y - p[0].y + p[2].y - p[1].y) / 2
        length = (readX * readX + readY * readY).squareRoot()
        thickness = max(1, (downX * downX + downY * downY).squareRoot())
        guard length > 0 else { return nil }
        direction = ImagePoint(x: readX / length, y: readY / length)
        down = ImagePoint(x: downX / thickness, y: downY / thickness)
        center = ImagePoint(x: p.map(\.x).reduce(0, +) / 4, y: p.map(\.y).reduce(0, +) / 4)
        xRange = Range1D(lower: p.map(\.x).min()!, upper: p.map(\.x).max()!)
        yRange = Range1D(lower: p.map(\.y).min()!, upper: p.map(\.y).max()!)
        runsAlongY = abs(readY) > abs(readX)
        isClassNumber = Self.startsWithClassNumber(line.text)
        isLetterLabel = !isClassNumber && Self.looksLikeLetterLabel(line.text)
    }

    /// A short text opening with three digits or more ("796.42 Mor", "796(03) Dic").
    static func startsWithClassNumber(_ text: String) -> Bool {
        let trimmed = text.drop { !$0.isNumber && !$0.isLetter }
        let digits = trimmed.prefix { $0.isNumber }
        return digits.count >= 3 && trimmed.count <= 16
    }

    /// A short class of capitals, perhaps with a number, then the author mark: a capital and two small letters
    /// ("N Pam", "NPar", "JN Dah", "N 837 Pas").
    static func looksLikeLetterLabel(_ text: String) -> Bool {
        let trimmed = text.drop { !$0.isNumber && !$0.isLetter }
        let compact = Array(trimmed.filter { !$0.isWhitespace })
        guard (4...10).contains(compact.count) else { return false }
        let mark = compact.suffix(3)
        guard mark.first!.isUppercase, mark.dropFirst().allSatisfy(\.isLowercase) else { return false }
        let classPart = compact.dropLast(3)
        guard let first = classPart.first, first.isUppercase else { return false }
        let capitals = classPart.prefix { $0.isUppercase }
        return capitals.count <= 3
            && classPart.dropFirst(capitals.count).allSatisfy { $0.isNumber || ".*()".contains($0) }
    }
}

/// The rows of labels along the feet of the shelves: labels whose middles lie at about one height. Where a shelf's
/// own label under a line was not read, the row of its neighbours' labels still says where that shelf ends.
private struct LabelRows {
    /// Each row's labels: centre and anchor index.
    private var rows: [[(center: ImagePoint, anchor: Int)]] = []
    /// A row is at least this many labels: fewer could be two labels that happen to align.
    private let minimumLabels = 3
    /// Labels of one shelf differ in height by less than this; shelves are farther apart.
    private let rowGap: Double

    init(anchors: [[Int]], lines: [LineGeometry], longEdge: Double) {
        let centres = anchors.enumerated().map { anchor, members in
            (
                center: ImagePoint(
                    x: members.map { lines[$0].center.x }.reduce(0, +) / Double(members.count),
                    y: members.map { lines[$0].center.y }.reduce(0, +) / Double(members.count)),
                anchor: anchor
            )
        }.sorted { $0.center.y < $1.center.y }
        rowGap = 0.05 * longEdge
        var row: [(center: ImagePoint, anchor: Int)] = []
        for label in centres {
            if let last = row.last, label.center.y - last.center.y > rowGap {
                if row.count >= minimumLabels { rows.append(row) }
                row = []
            }
            row.append(label)
        }
        if row.count >= minimumLabels { rows.append(row) }
    }

    /// Whether a line lies on a row: its middle within half the row gap of the height of the row's label nearest
    /// across.
    func isOnRow(_ line: LineGeometry) -> Bool {
        rows.contains { row in
            let y = row.min { abs($0.center.x - line.center.x) < abs($1.center.x - line.center.x) }!.center.y
            return abs(y - line.center.y) <= 0.5 * rowGap
        }
    }

    /// Whether a row of labels runs between the tops of two lines: they stand on different shelves (a line that
    /// reaches down across a row stands on the shelf above it, as its label would).
    func separate(_ a: LineGeometry, _ b: LineGeometry) -> Bool {
        let x = (a.center.x + b.center.x) / 2
        let tops = (a.yRange.lower, b.yRange.lower)
        return hasRow(between: min(tops.0, tops.1), and: max(tops.0, tops.1), near: x, except: -1)
    }

    /// Whether a row other than `anchor`'s crosses the column at `x` strictly between heights `top` and `bottom`,
    /// taking the row's height from its label nearest across (photos are seldom held quite level).
    func hasRow(between top: Double, and bottom: Double, near x: Double, except anchor: Int) -> Bool {
        rows.contains { row in
            guard !row.contains(where: { $0.anchor == anchor }) else { return false }
            let y = row.min { abs($0.center.x - x) < abs($1.center.x - x) }!.center.y
            return y > top && y < bottom
        }
    }
}

/// How far spines lean: the change in x per unit of y along an upright line. Camera perspective and books tilted on
/// the shelf make spines lean by a tenth or more, enough to carry a title to the neighbour's label if it were
/// followed straight down. A long line shows its own lean; a short one's box is too coarse, so it takes the median
/// lean of the long lines near it across the photo.
private struct LeanEstimate {
    private var long: [(x: Double, slope: Double)] = []
    private let window: Double

    init(_ lines: [LineGeometry], width: Double) {
        window = 0.1 * width
        for line in lines where line.runsAlongY && line.hasClearAxis {
            long.append((line.center.x, line.direction.x / line.direction.y))
        }
    }

    func slope(of line: LineGeometry) -> Double {
        if line.hasClearAxis { return line.direction.x / line.direction.y }
        let near = long.filter { abs($0.x - line.center.x) <= window }.map(\.slope)
        return median(near.isEmpty ? long.map(\.slope) : near) ?? 0
    }

    private func median(_ values: [Double]) -> Double? {
        guard !values.isEmpty else { return nil }
        let sorted = values.sorted()
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }
}

/// The parts of the edges seen between books that do not run through text: a piece is a run of the edge clear of
/// every line's letters (a line's box less its outer tenth on each side across, where a neighbour's edge may graze it).
private struct SeparatorPieces {
    private struct Piece {
        let top: ImagePoint
        let bottom: ImagePoint
        func x(at y: Double) -> Double {
            let height = bottom.y - top.y
            return height <= 0 ? top.x : top.x + (bottom.x - top.x) * (y - top.y) / height
        }
    }
    /// Each edge is looked at in this many points along it.
    private static let samples = 24
    /// A piece shorter than this many samples is a gap between two letters, not a boundary.
    private static let shortestRun = 3
    private var pieces: [Piece] = []

    init(_ separators: [SpineSeparator], lines: [LineGeometry]) {
        for separator in separators {
            var run: [ImagePoint] = []
            for step in 0...Self.samples {
                let t = Double(step) / Double(Self.samples)
                let point = ImagePoint(
                    x: separator.top.x + (separator.bottom.x - separator.top.x) * t,
                    y: separator.top.y + (separator.bottom.y - separator.top.y) * t)
                if lines.contains(where: { $0.holdsLetters(at: point) }) {
                    if run.count >= Self.shortestRun { pieces.append(Piece(top: run.first!, bottom: run.last!)) }
                    run = []
                } else {
                    run.append(point)
                }
            }
            if run.count >= Self.shortestRun { pieces.append(Piece(top: run.first!, bottom: run.last!)) }
        }
    }

    /// Whether an edge runs between two lines, one of them at least upright: across the height they share (over a
    /// quarter of it at least), between their middles; lines at different heights, across the path between middles.
    func separate(_ a: LineGeometry, _ b: LineGeometry) -> Bool {
        guard a.runsAlongY || b.runsAlongY, !pieces.isEmpty else { return false }
        let left = min(a.center.x, b.center.x)
        let right = max(a.center.x, b.center.x)
        let shared = Range1D(lower: max(a.yRange.lower, b.yRange.lower), upper: min(a.yRange.upper, b.yRange.upper))
        if shared.length > 0 {
            return pieces.contains { piece in
                let along = overlap(Range1D(lower: piece.top.y, upper: piece.bottom.y), shared)
                guard along >= 0.25 * shared.length else { return false }
                let x = piece.x(at: max(piece.top.y, shared.lower) + along / 2)
                return x > left && x < right
            }
        }
        return pieces.contains { piece in crosses(a.center, b.center, piece.top, piece.bottom) }
    }

    private func crosses(_ p: ImagePoint, _ q: ImagePoint, _ r: ImagePoint, _ s: ImagePoint) -> Bool {
        func side(_ a: ImagePoint, _ b: ImagePoint, _ c: ImagePoint) -> Double {
            (b.x - a.x) * (c.y - a.y) - (b.y - a.y) * (c.x - a.x)
        }
        return side(p, q, r) * side(p, q, s) < 0 && side(r, s, p) * side(r, s, q) < 0
    }
}

/// Union-find over line indices; a set holds at most one label anchor, so two labelled spines never merge.
private struct DisjointSets {
    private var parent: [Int]
    private var anchor: [Int?]
    private var members: [[Int]]
    init(count: Int, anchors: [Int?]? = nil) {
        parent = Array(0..<count)
        anchor = anchors ?? [Int?](repeating: nil, count: count)
        members = (0..<count).map { [$0] }
    }

    /// Joins the sets of `a` and `b` unless `apart` holds for a line of one and a line of the other: a set never
    /// takes lines that an edge between books keeps apart, however the lines between them chain.
    mutating func union(_ a: Int, _ b: Int, unless apart: (Int, Int) -> Bool) {
        let rootA = find(a)
        let rootB = find(b)
        guard rootA != rootB else { return }
        for i in members[rootA] {
            for j in members[rootB] where apart(i, j) { return }
        }
        union(a, b)
    }
    mutating func find(_ i: Int) -> Int {
        var root = i
        while parent[root] != root { root = parent[root] }
        var node = i
        while parent[node] != root {
            let next = parent[node]
            parent[node] = root
            node = next
        }
        return root
    }
    mutating func union(_ a: Int, _ b: Int) {
        let rootA = find(a)
        let rootB = find(b)
        guard rootA != rootB else { return }
        if let anchorA = anchor[rootA], let anchorB = anchor[rootB], anchorA != anchorB { return }
        let (root, child) = (min(rootA, rootB), max(rootA, rootB))
        parent[child] = root
        anchor[root] = anchor[root] ?? anchor[child]
        members[root] += members[child]
        members[child] = []
    }
}
