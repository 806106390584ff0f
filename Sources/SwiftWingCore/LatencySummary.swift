/// Shutter latency as reported: press (the kernel's event timestamp) to the buzzer line set.
public struct LatencySummary: Sendable, Equatable, Codable {
    public struct Bucket: Sendable, Equatable, Codable {
        /// The bucket's upper bound; `nil` for the overflow bucket (above 1 s).
        public var leMicroseconds: Int?
        public var count: Int

        public init(leMicroseconds: Int?, count: Int) {
            self.leMicroseconds = leMicroseconds
            self.count = count
        }
    }

    public var count: Int
    public var p50Microseconds: Int?
    public var p99Microseconds: Int?
    public var maxMicroseconds: Int?
    public var meanMicroseconds: Int?
    public var buckets: [Bucket]

    public init(
        count: Int, p50Microseconds: Int?, p99Microseconds: Int?, maxMicroseconds: Int?, meanMicroseconds: Int?,
        buckets: [Bucket]
    ) {
        self.count = count
        self.p50Microseconds = p50Microseconds
        self.p99Microseconds = p99Microseconds
        self.maxMicroseconds = maxMicroseconds
        self.meanMicroseconds = meanMicroseconds
        self.buckets = buckets
    }
}
