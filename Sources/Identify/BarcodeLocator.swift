/// Finds where in a frame a 1D barcode may be, cheaply, so ZBar (about 70 ns a pixel on a busy
/// frame) only scans those regions instead of all two million pixels of a 1080p frame.
///
/// A barcode is a patch of strong edges that all run one way: across its bars the grey level
/// jumps every few pixels, along them it hardly changes. The frame is cut into square cells;
/// a cell whose mean edge strength across one axis is high and at least `dominance` times the
/// other axis's is a bar cell of that orientation. Connected bar cells become candidate regions,
/// grown by quiet-zone margins, the most code-like first.
struct BarcodeLocator: Sendable {
    /// Mean absolute grey step between neighbours, across the bars, for a cell to count.
    var minimumEdge = 10
    /// How many times stronger the edges across the bars must be than along them.
    var dominance = 2
    /// Connected cells a region needs: a readable EAN-13 spans several cells.
    var minimumCells = 4
    /// At most this many regions, the most code-like first.
    var maximumRegions = 6
    /// When set, this many rows of each cell row are read (evenly spaced), when that is fewer than every fourth row:
    /// a pass over a 12 MP frame, whose cells are 30–55 pixels, then reads about as many pixels as one over a 1080p
    /// frame. Unset, every fourth row.
    var sampledRowsPerCell: Int?

    /// A region that may hold a barcode; `barsVertical` when its bars run up and down (the code
    /// reads left to right or right to left).
    struct Region: Hashable {
        var rect: PixelRect
        var barsVertical: Bool
        var cells: Int
        var score = 0.0

        /// Shaped like a code: mostly filled with bar cells (not a scatter of text or grain), and
        /// its bars not far longer than the code is wide (not the edges of book spines).
        func isCodeLike(cell: Int) -> Bool {
            let along = barsVertical ? rect.width : rect.height
            let across = barsVertical ? rect.height : rect.width
            return fill(cell: cell) >= 0.2 && across <= 2 * along + 2 * cell
        }

        /// The share of the rectangle's cells that are bar cells.
        func fill(cell: Int) -> Double {
            Double(cells * cell * cell) / Double(max(1, rect.area))
        }
    }

    /// The cell side for a picture: about 64 cells across the shorter side, never under 8 pixels.
    static func cellSize(width: Int, height: Int) -> Int {
        max(8, min(width, height) / 64)
    }

    func regions(in plane: UnsafeRawBufferPointer, width: Int, height: Int, stride: Int) -> [Region] {
        let cell = Self.cellSize(width: width, height: height)
        let columns = width / cell
        let rows = height / cell
        guard columns >= 2, rows >= 2 else { return [] }
        var acrossX = [Int](repeating: 0, count: columns * rows)
        var acrossY = [Int](repeating: 0, count: columns * rows)
        // Every fourth row, every pixel: a cell still gets two rows or more, at a quarter of the reads. Or fewer rows,
        // evenly spread over each cell row, for large cells.
        let rowStep = 4
        let sampled = sampledRowsPerCell.map { $0 > 0 && $0 < cell / rowStep } ?? false
        let rowsPerCell = sampled ? sampledRowsPerCell ?? 0 : cell / rowStep
        // The rows read, counted rather than listed: this runs on the camera thread for every frame it shrinks.
        let sampleCount = sampled ? rows * rowsPerCell : (rows * cell + rowStep - 1) / rowStep
        var edges = RowEdges(cell: cell, columns: columns)
        plane.withMemoryRebound(to: UInt8.self) { pixels in
            acrossX.withUnsafeMutableBufferPointer { sumX in
                acrossY.withUnsafeMutableBufferPointer { sumY in
                    for sample in 0..<sampleCount {
                        let y =
                            sampled
                            ? (sample / rowsPerCell) * cell + (sample % rowsPerCell) * cell / rowsPerCell
                            : sample * rowStep
                        // The row below must be there; a picture whose cells end at its last row skips that row.
                        guard y + 1 < height else { continue }
                        let cellRow = (y / cell) * columns
                        edges.add(
                            row: pixels.baseAddress! + y * stride, stride: stride,
                            acrossX: UnsafeMutableBufferPointer(rebasing: sumX[cellRow..<(cellRow + columns)]),
                            acrossY: UnsafeMutableBufferPointer(rebasing: sumY[cellRow..<(cellRow + columns)]))
                    }
                }
            }
        }
        let samplesPerCell = cell * rowsPerCell
        var kind = [Int8](repeating: 0, count: columns * rows)
        for index in kind.indices {
            let x = acrossX[index]
            let y = acrossY[index]
            if x >= minimumEdge * samplesPerCell, x >= dominance * y {
                kind[index] = 1
            } else if y >= minimumEdge * samplesPerCell, y >= dominance * x {
                kind[index] = 2
            }
        }
        return components(of: kind, columns: columns, rows: rows, cell: cell, width: width, height: height)
    }

    /// Connected cells of one kind (8-neighbours, so a wide space between bars does not split a
    /// code), as pixel rectangles with quiet-zone margins on the sides the code is read from.
    private func components(
        of kind: [Int8], columns: Int, rows: Int, cell: Int, width: Int, height: Int
    ) -> [Region] {
        var label = [Int32](repeating: -1, count: kind.count)
        var regions: [Region] = []
        var components = 0
        var stack: [Int] = []
        for start in kind.indices where kind[start] != 0 && label[start] < 0 {
            let orientation = kind[start]
            var minColumn = Int.max
            var maxColumn = 0
            var minRow = Int.max
            var maxRow = 0
            var count = 0
            components += 1
            label[start] = Int32(components)
            stack.append(start)
            while let index = stack.popLast() {
                let row = index / columns
                let column = index % columns
                count += 1
                minColumn = min(minColumn, column)
                maxColumn = max(maxColumn, column)
                minRow = min(minRow, row)
                maxRow = max(maxRow, row)
                for dy in -1...1 {
                    for dx in -1...1 {
                        let r = row + dy
                        let c = column + dx
                        guard r >= 0, r < rows, c >= 0, c < columns else { continue }
                        let neighbour = r * columns + c
                        if kind[neighbour] == orientation, label[neighbour] < 0 {
                            label[neighbour] = Int32(components)
                            stack.append(neighbour)
                        }
                    }
                }
            }
            let rect = PixelRect(
                x: minColumn * cell, y: minRow * cell,
                width: (maxColumn - minColumn + 1) * cell, height: (maxRow - minRow + 1) * cell)
            // Single cells are grain or a letter's stroke; leaving them out keeps the merge short.
            if count >= 2 { regions.append(Region(rect: rect, barsVertical: orientation == 1, cells: count)) }
        }
        regions = merged(regions, gap: 3 * cell, cell: cell).filter {
            $0.cells >= minimumCells && $0.isCodeLike(cell: cell)
        }
        for index in regions.indices {
            // Quiet zones: ZBar needs white beyond the guard bars, and the edge cells may have
            // cut the outermost bars; the length of the bars needs less.
            let rect = regions[index].rect
            let along = regions[index].barsVertical ? rect.width : rect.height
            let margin = max(2 * cell, along / 6)
            let grown =
                regions[index].barsVertical
                ? rect.expanded(dx: margin, dy: cell) : rect.expanded(dx: cell, dy: margin)
            regions[index].score = Double(regions[index].cells) * regions[index].fill(cell: cell)
            regions[index].rect = grown.clipped(width: width, height: height)
        }
        // Most code-like first: many bar cells, densely packed.
        return Array(regions.sorted { $0.score > $1.score }.prefix(maximumRegions))
    }

    /// Regions of one orientation less than `gap` apart joined into one: a code's wide spaces,
    /// glare or a fold can cut its bars into several pieces. Only while the union stays code-like
    /// and at least 60 % as dense as the denser part, so a code is not swallowed by the book
    /// spines or lettering around it.
    private func merged(_ regions: [Region], gap: Int, cell: Int) -> [Region] {
        var result = regions
        var joined = true
        while joined {
            joined = false
            search: for first in result.indices {
                for second in result.indices
                where second > first && result[first].barsVertical == result[second].barsVertical {
                    let a = result[first].rect.expanded(dx: gap, dy: gap)
                    let b = result[second].rect
                    guard a.x < b.x + b.width, b.x < a.x + a.width, a.y < b.y + b.height, b.y < a.y + a.height else {
                        continue
                    }
                    var union = result[first]
                    union.rect = union.rect.union(b)
                    union.cells += result[second].cells
                    let denser = max(result[first].fill(cell: cell), result[second].fill(cell: cell))
                    guard union.isCodeLike(cell: cell), union.fill(cell: cell) >= 0.6 * denser else { continue }
                    result[first] = union
                    result.remove(at: second)
                    joined = true
                    break search
                }
            }
        }
        return result
    }
}

/// The edge strength of a row of pixels, cell by cell: for each cell, the sum of |next pixel − pixel| (across
/// vertical bars) and of |pixel below − pixel| (across horizontal ones). The locator's pass over a frame, and on a
/// large sensor the camera thread's work for every frame it shrinks: the differences are taken sixteen pixels at a
/// time in vector lanes, then added up cell by cell. The same sums as pixel by pixel (a test compares them on random
/// rows).
package struct RowEdges {
    package let cell: Int
    package let columns: Int
    /// The differences of the row, one byte a pixel (an absolute difference of two bytes fits one).
    private var across: [UInt8]
    private var down: [UInt8]

    package init(cell: Int, columns: Int) {
        precondition(cell > 0 && columns > 0, "a row of cells has cells")
        self.cell = cell
        self.columns = columns
        across = [UInt8](repeating: 0, count: cell * columns)
        down = across
    }

    /// Adds the row at `row` (`cell` x `columns` pixels, then one more, which the last difference reaches; the row
    /// below `stride` bytes on) to the cells' sums.
    package mutating func add(
        row: UnsafePointer<UInt8>, stride: Int, acrossX: UnsafeMutableBufferPointer<Int>,
        acrossY: UnsafeMutableBufferPointer<Int>
    ) {
        precondition(acrossX.count >= columns && acrossY.count >= columns, "a sum for every cell")
        let span = cell * columns
        let raw = UnsafeRawPointer(row)
        across.withUnsafeMutableBufferPointer { across in
            down.withUnsafeMutableBufferPointer { down in
                let acrossBytes = UnsafeMutableRawPointer(across.baseAddress!)
                let downBytes = UnsafeMutableRawPointer(down.baseAddress!)
                var x = 0
                while x + 16 <= span {
                    let here = raw.loadUnaligned(fromByteOffset: x, as: SIMD16<UInt8>.self)
                    let next = raw.loadUnaligned(fromByteOffset: x + 1, as: SIMD16<UInt8>.self)
                    let below = raw.loadUnaligned(fromByteOffset: x + stride, as: SIMD16<UInt8>.self)
                    acrossBytes.storeBytes(of: Self.difference(here, next), toByteOffset: x, as: SIMD16<UInt8>.self)
                    downBytes.storeBytes(of: Self.difference(here, below), toByteOffset: x, as: SIMD16<UInt8>.self)
                    x += 16
                }
                while x < span {
                    let here = row[x]
                    across[x] = max(here, row[x + 1]) - min(here, row[x + 1])
                    down[x] = max(here, row[x + stride]) - min(here, row[x + stride])
                    x += 1
                }
                for column in 0..<columns {
                    var sumAcross: UInt32 = 0
                    var sumDown: UInt32 = 0
                    for index in (column * cell)..<((column + 1) * cell) {
                        sumAcross &+= UInt32(across[index])
                        sumDown &+= UInt32(down[index])
                    }
                    acrossX[column] &+= Int(sumAcross)
                    acrossY[column] &+= Int(sumDown)
                }
            }
        }
    }

    /// |a − b| in each lane (written out: `pointwiseMax` and `pointwiseMin` stay calls).
    @inline(__always)
    private static func difference(_ a: SIMD16<UInt8>, _ b: SIMD16<UInt8>) -> SIMD16<UInt8> {
        (a &- b).replacing(with: b &- a, where: b .> a)
    }
}
