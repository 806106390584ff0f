import Foundation
import Testing

@testable import Talaria

@Suite("SSE parser: the eight-bytes-at-a-time line-end search")
struct LineEndSearchTests {
    @Test("agrees with a byte-by-byte search on random buffers, at every start offset")
    func agreesWithNaiveSearch() {
        let alphabet: [UInt8] = [0x0A, 0x0D, 0x8A, 0x8D, 0x00, 0x01, 0x0B, 0x0C, 0x09, 0xFF, 0x61, 0xE2, 0x1A, 0x2D]
        for seed in 0..<300 as Range<UInt64> {
            var generator = SeededGenerator(seed: seed)
            let count = Int.random(in: 0...40, using: &generator)
            let lineEnds = Int.random(in: 0..<4, using: &generator)  // some buffers have none
            let buffer: [UInt8] = (0..<count).map { _ in
                let byte = alphabet.randomElement(using: &generator)!
                return lineEnds == 0 && (byte == 0x0A || byte == 0x0D) ? 0x61 : byte
            }
            buffer.withUnsafeBufferPointer { pointer in
                guard let base = pointer.baseAddress else { return }
                for start in 0...count {
                    let naive = buffer[start...].firstIndex { $0 == 0x0A || $0 == 0x0D } ?? count
                    #expect(
                        SSEParser.indexOfLineEnd(base, from: start, count: count) == naive,
                        "seed \(seed) start \(start)")
                }
            }
        }
    }
}
