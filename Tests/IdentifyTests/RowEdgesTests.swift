import Identify
import SwiftWingTesting
import Testing

@Suite("The locator's edge sums")
struct RowEdgesTests {
    /// Random rows of cells of every width the locator uses (8 pixels up to a 12 MP frame's 54), with and without
    /// room after the row: the vector lanes must give the sums pixel by pixel gives.
    @Test("each cell's sums are exactly those of adding up pixel by pixel")
    func sameSumsAsPixelByPixel() {
        var random = SeededGenerator(seed: 0xed9e_5ca1)
        for cell in [8, 9, 15, 16, 17, 30, 54] {
            for columns in [1, 2, 5, 64, 85] {
                let stride = cell * columns + 1 + Int.random(in: 0...40, using: &random)
                let plane = (0..<(2 * stride)).map { _ in UInt8.random(in: 0...255, using: &random) }
                var horizontal = [Int](repeating: 7, count: columns)
                var vertical = [Int](repeating: 11, count: columns)
                var edges = RowEdges(cell: cell, columns: columns)
                plane.withUnsafeBufferPointer { pixels in
                    horizontal.withUnsafeMutableBufferPointer { acrossX in
                        vertical.withUnsafeMutableBufferPointer { acrossY in
                            // Twice: the second row's sums add to the first's.
                            for _ in 0..<2 {
                                edges.add(row: pixels.baseAddress!, stride: stride, acrossX: acrossX, acrossY: acrossY)
                            }
                        }
                    }
                }
                for column in 0..<columns {
                    var expectedX = 7
                    var expectedY = 11
                    for x in (column * cell)..<((column + 1) * cell) {
                        expectedX += 2 * abs(Int(plane[x + 1]) - Int(plane[x]))
                        expectedY += 2 * abs(Int(plane[x + stride]) - Int(plane[x]))
                    }
                    #expect(
                        horizontal[column] == expectedX && vertical[column] == expectedY,
                        "cell \(cell), \(columns) columns, column \(column)")
                }
            }
        }
    }
}
