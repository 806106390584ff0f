import Testing

@testable import SwiftWingCore

@Suite struct BufferPoolTests {
    @Test func acquireNeverExceedsTheBoundAndRecyclesOnRelease() {
        let pool = BufferPool(bufferSize: 64, maximumBuffers: 2)
        var first: PixelBuffer? = pool.acquire()
        let second = pool.acquire()
        #expect(first != nil && second != nil)
        #expect(pool.acquire() == nil, "a third buffer must be refused, not allocated")
        let address = first!.bytes.baseAddress
        first = nil
        let reused = pool.acquire()
        #expect(reused?.bytes.baseAddress == address, "a released buffer is reused, not reallocated")
        #expect(pool.inUse == 2)
    }

    @Test func layoutOfOddSizesRoundsChromaUp() {
        let layout = YUV420Layout(width: 5, height: 3)
        #expect(layout.chromaWidth == 3 && layout.chromaHeight == 2)
        #expect(layout.byteCount == 15 + 2 * 6)
    }

    @Test func monotonicInstantFromTimevalAndTimespecAgree() {
        let a = MonotonicInstant(seconds: 12, microseconds: 345_678)
        let b = MonotonicInstant(seconds: 12, nanoseconds: 345_678_000)
        #expect(a == b)
        #expect(a.nanoseconds(since: MonotonicInstant(nanoseconds: 12_000_000_000)) == 345_678_000)
        #expect(MonotonicInstant.now() > MonotonicInstant(nanoseconds: 0))
    }
}
