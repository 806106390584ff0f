import Controls
import SwiftWingCore
import SwiftWingTesting
import Testing

@Suite struct LatencyHistogramTests {
    @Test func percentilesComeFromTheBuckets() {
        var histogram = LatencyHistogram()
        #expect(histogram.percentileMicroseconds(0.5) == nil)
        for _ in 0..<98 { histogram.record(nanoseconds: 180_000) }  // 0.18 ms → ≤ 200 µs bucket
        histogram.record(nanoseconds: 1_400_000)  // ≤ 1500 µs
        histogram.record(nanoseconds: 40_000_000)  // ≤ 50 ms
        #expect(histogram.count == 100)
        #expect(histogram.percentileMicroseconds(0.5) == 200)
        #expect(histogram.percentileMicroseconds(0.99) == 1500)
        #expect(histogram.percentileMicroseconds(1.0) == 40_000)  // capped at the largest seen
        let summary = histogram.summary
        #expect(summary.buckets.map(\.count) == [98, 1, 1])
        #expect(summary.buckets.map(\.leMicroseconds) == [200, 1500, 50_000])
        #expect(summary.maxMicroseconds == 40_000)
    }

    @Test func outliersAndClockMixUpsAreKept() {
        var histogram = LatencyHistogram()
        histogram.record(nanoseconds: -5)
        histogram.record(nanoseconds: 3_000_000_000)
        #expect(histogram.summary.buckets.map(\.leMicroseconds) == [10, nil])
        #expect(histogram.percentileMicroseconds(0.99) == 3_000_000)
    }
}
