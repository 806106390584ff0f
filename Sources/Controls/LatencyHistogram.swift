import SwiftWingCore

/// Press-to-buzzer latencies in fixed buckets: constant memory however long the daemon runs, cheap to
/// record on the press path, and percentiles good to a bucket's width.
public struct LatencyHistogram: Sendable, Equatable, Codable {
    /// Upper bounds of the buckets in microseconds; one more bucket holds everything above the last.
    public static let boundsMicroseconds: [Int] = [
        10, 25, 50, 100, 200, 300, 500, 750, 1_000, 1_500, 2_000, 3_000, 5_000, 7_500, 10_000, 15_000, 20_000, 30_000,
        50_000,
        100_000, 250_000, 1_000_000,
    ]

    /// Counts per bucket: `counts[i]` holds latencies ≤ `boundsMicroseconds[i]` (and above the bound before);
    /// the last one holds those above 1 s.
    public private(set) var counts: [Int]
    public private(set) var count = 0
    public private(set) var sumMicroseconds = 0
    public private(set) var maxMicroseconds = 0
    public private(set) var minMicroseconds: Int?

    public init() {
        counts = Array(repeating: 0, count: Self.boundsMicroseconds.count + 1)
    }

    /// Records one latency; negative values (a clock mix-up) count as 0.
    public mutating func record(nanoseconds: Int64) {
        let micros = Int(max(0, nanoseconds) / 1_000)
        let index = Self.boundsMicroseconds.firstIndex { micros <= $0 } ?? Self.boundsMicroseconds.count
        counts[index] += 1
        count += 1
        sumMicroseconds += micros
        maxMicroseconds = max(maxMicroseconds, micros)
        minMicroseconds = min(minMicroseconds ?? micros, micros)
    }

    /// The upper bound of the bucket holding the `q` quantile (0…1), capped at the largest seen;
    /// `nil` when empty. An over-estimate by at most one bucket's width.
    public func percentileMicroseconds(_ q: Double) -> Int? {
        guard count > 0 else { return nil }
        let rank = max(1, Int((q * Double(count)).rounded(.up)))
        var seen = 0
        for (index, bucket) in counts.enumerated() {
            seen += bucket
            if seen >= rank {
                let bound = index < Self.boundsMicroseconds.count ? Self.boundsMicroseconds[index] : maxMicroseconds
                return min(bound, maxMicroseconds)
            }
        }
        return maxMicroseconds
    }

    /// The form `swiftwing status --json` shows: percentiles and the non-empty buckets.
    public var summary: LatencySummary {
        LatencySummary(
            count: count, p50Microseconds: percentileMicroseconds(0.5), p99Microseconds: percentileMicroseconds(0.99),
            maxMicroseconds: count > 0 ? maxMicroseconds : nil,
            meanMicroseconds: count > 0 ? sumMicroseconds / count : nil,
            buckets: counts.enumerated().compactMap { index, n in
                guard n > 0 else { return nil }
                return LatencySummary.Bucket(
                    leMicroseconds: index < Self.boundsMicroseconds.count ? Self.boundsMicroseconds[index] : nil,
                    count: n)
            })
    }
}
