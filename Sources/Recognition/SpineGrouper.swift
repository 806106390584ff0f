/// Groups the text lines read on a shelf photo into books.
///
/// Spines mostly stand upright, so their text runs along them, turned 90° one way or the other; a wide spine holds
/// several such lines side by side (title, author), and its lines sit in one column along the spine (publisher at
/// the top, a library's call number label at the foot). Books lying flat or facing out carry lines that run across,
/// stacked one over the other. Two lines join the same book when one of these layouts links them; a group that holds
/// two call number labels side by side is two spines and is split between them.
public struct SpineGrouper: Sendable {
    /// Two lines in one column along a spine may be this far apart along it, as a fraction of the photo's long edge:
    /// a spine's title and its label can be half a spine apart, but the next shelf is farther.
    public var columnGap: Double = 0.14
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
        var sets = DisjointSets(count: lines.count)
        for i in lines.indices {
            for j in lines.indices where j > i && belongTogether(lines[i], lines[j], longEdge: longEdge) {
                sets.union(i, j)
            }
        }
        var groups: [Int: [LineGeometry]] = [:]
        for i in lines.indices { groups[sets.find(i), default: []].append(lines[i]) }
        let spines = groups.values.flatMap(splitAtLabels).compactMap { spine(from: $0, photo: photo) }
        // Left to right, then top to bottom, so the output is stable and reads like the shelf.
        return spines.sorted { ($0.box.x, $0.box.y) < ($1.box.x, $1.box.y) }
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
            let nearest = labels.indices.min { abs(labels[$0].center.x - line.center.x) < abs(labels[$1].center.x - line.center.x) }!
            parts[nearest].append(line)
        }
        return parts.filter { !$0.isEmpty }
    }

    fileprivate func spine(from group: [LineGeometry], photo: ReadPhoto) -> SpineText? {
        let characters = group.reduce(0) { $0 + $1.line.text.unicodeScalars.filter(\.properties.isAlphabetic).count }
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
fileprivate struct Range1D: Sendable {
    var lower: Double
    var upper: Double
    var length: Double { upper - lower }
}

/// How much two intervals overlap; negative: the gap between them.
fileprivate func overlap(_ a: Range1D, _ b: Range1D) -> Double {
    min(a.upper, b.upper) - max(a.lower, b.lower)
}

/// One line's place and direction on the photo.
fileprivate struct LineGeometry: Sendable {
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
    /// The text looks like a library call number: three digits first ("796.42 Mor", "796(03) Dic").
    let isCallNumber: Bool

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
        isCallNumber = Self.looksLikeCallNumber(line.text)
    }

    static func looksLikeCallNumber(_ text: String) -> Bool {
        let trimmed = text.drop { !$0.isNumber && !$0.isLetter }
        let digits = trimmed.prefix { $0.isNumber }
        return digits.count >= 3 && trimmed.count <= 16
    }
}

/// Union-find over line indices.
fileprivate struct DisjointSets {
    private var parent: [Int]
    init(count: Int) { parent = Array(0..<count) }
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
        if rootA != rootB { parent[max(rootA, rootB)] = min(rootA, rootB) }
    }
}
