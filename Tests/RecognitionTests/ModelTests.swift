import Foundation
import Recognition
import Testing

@Test func normalizedBoxRoundTripsThroughJSON() throws {
    let box = NormalizedBox(x: 0.25, y: 0.5, width: 0.1, height: 0.4)
    let data = try JSONEncoder().encode(box)
    #expect(try JSONDecoder().decode(NormalizedBox.self, from: data) == box)
}
