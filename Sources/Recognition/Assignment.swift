/// Optimal assignment (the Hungarian method, in the shortest-augmenting-path form of Jonker–Volgenant): rows to
/// distinct columns maximising the total score. Used per photo, rows being spines and columns catalogue entries, so
/// an entry goes to at most one spine and two spines that both look like one book settle on the better pairing.
public enum Assignment {
    /// For each row, the column it gets, or nil where leaving it unassigned scores better: a pair only counts when
    /// its score is above `floor` (the score of staying unmatched). `scores[row][column]`; rows may be longer or
    /// shorter than columns. O(n² m) for n rows and m columns.
    public static func maximise(_ scores: [[Double]], floor: Double = 0) -> [Int?] {
        let rowCount = scores.count
        guard rowCount > 0 else { return [] }
        let columnCount = scores[0].count
        // Each row also gets a private "unmatched" column scoring `floor`, so every row is assigned and any real
        // column may stay free. Costs are negated scores for the minimising algorithm.
        let width = columnCount + rowCount
        let forbidden = 1e15
        func cost(_ row: Int, _ column: Int) -> Double {
            if column < columnCount { return -max(scores[row][column], floor) }
            return column - columnCount == row ? -floor : forbidden
        }
        // 1-based potentials and matching, as in the classical formulation; column 0 is the virtual start.
        var rowPotential = [Double](repeating: 0, count: rowCount + 1)
        var columnPotential = [Double](repeating: 0, count: width + 1)
        var rowOfColumn = [Int](repeating: 0, count: width + 1)
        var way = [Int](repeating: 0, count: width + 1)
        for row in 1...rowCount {
            rowOfColumn[0] = row
            var column0 = 0
            var minimum = [Double](repeating: .infinity, count: width + 1)
            var used = [Bool](repeating: false, count: width + 1)
            repeat {
                used[column0] = true
                let row0 = rowOfColumn[column0]
                var delta = Double.infinity
                var column1 = 0
                for column in 1...width where !used[column] {
                    let reduced = cost(row0 - 1, column - 1) - rowPotential[row0] - columnPotential[column]
                    if reduced < minimum[column] {
                        minimum[column] = reduced
                        way[column] = column0
                    }
                    if minimum[column] < delta {
                        delta = minimum[column]
                        column1 = column
                    }
                }
                for column in 0...width {
                    if used[column] {
                        rowPotential[rowOfColumn[column]] += delta
                        columnPotential[column] -= delta
                    } else {
                        minimum[column] -= delta
                    }
                }
                column0 = column1
            } while rowOfColumn[column0] != 0
            repeat {
                let column1 = way[column0]
                rowOfColumn[column0] = rowOfColumn[column1]
                column0 = column1
            } while column0 != 0
        }
        var result = [Int?](repeating: nil, count: rowCount)
        for column in stride(from: 1, through: columnCount, by: 1) where rowOfColumn[column] != 0 {
            let row = rowOfColumn[column] - 1
            if scores[row][column - 1] > floor { result[row] = column - 1 }
        }
        return result
    }
}
