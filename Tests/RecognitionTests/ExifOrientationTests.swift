import Foundation
import Recognition
import Testing

/// Phone photos (issue 32, point 4): a phone stores a portrait shot as the sensor saw it, turned a quarter, with EXIF
/// Orientation 6 saying how to show it. `read` (through the real OCR worker) reads such a photo as it is shown: the
/// same size as the upright photo, the same lines in the same places, read in the same direction.
@Suite struct ExifOrientationTests {
    /// `three_spines.jpg` stored turned a quarter counter-clockwise (725x250) and tagged Orientation 6.
    static func turnedThreeSpines() throws -> [UInt8] {
        try Array(Data(contentsOf: URL(fileURLWithPath: "\(recognitionFixtures)/three_spines-orientation6.jpg")))
    }

    /// The line whose text holds `needle` (unaccented capitals), and its centre.
    static func line(_ needle: String, in photo: ReadPhoto) throws -> (line: TextLine, x: Double, y: Double) {
        let line = try #require(photo.lines.first { unaccentedCapitals($0.text).contains(needle) }, "no \(needle)")
        let x = line.polygon.map(\.x).reduce(0, +) / Double(line.polygon.count)
        let y = line.polygon.map(\.y).reduce(0, +) / Double(line.polygon.count)
        return (line, x, y)
    }

    /// Both ways the worker decodes: the whole photo at once (it is smaller than the detection side), and a reduced
    /// copy for detection then the whole photo again for the crops (`--det-side 480`, smaller than the photo).
    @Test(arguments: [[String](), ["--det-side", "480"]])
    func aPhotoTaggedOrientation6IsReadAsShown(options: [String]) async throws {
        let supervisor = try RealOCRWorkerTests.supervisor(options)
        defer { supervisor.shutdown() }
        let upright = try await supervisor.read(jpeg: RealOCRWorkerTests.threeSpines())
        let turned = try await supervisor.read(jpeg: Self.turnedThreeSpines())

        // Stored 725x250; shown, as read, 250x725.
        #expect(turned.width == 250 && turned.height == 725)
        #expect(turned.width == upright.width && turned.height == upright.height)
        let text = unaccentedCapitals(turned.lines.map(\.text).joined(separator: " "))
        #expect(text.contains("MUSCULACION"))
        #expect(text.contains("796.42"))
        // The title runs up its spine in both: its start below its end, and in the same place (a few pixels apart:
        // the turned copy was encoded again).
        for needle in ["MUSCULACION", "796.42 MOR"] {
            let reference = try Self.line(needle, in: upright)
            let found = try Self.line(needle, in: turned)
            #expect(abs(found.x - reference.x) < 12, "\(needle): x \(found.x) vs \(reference.x)")
            #expect(abs(found.y - reference.y) < 12, "\(needle): y \(found.y) vs \(reference.y)")
        }
        let title = try Self.line("MUSCULACION", in: turned).line
        #expect(title.polygon[0].y > title.polygon[1].y + 100)
        // Most lines read the same, word for word.
        let same = Set(upright.lines.map(\.text)).intersection(turned.lines.map(\.text))
        #expect(Double(same.count) >= 0.6 * Double(upright.lines.count), "\(same.count) of \(upright.lines.count)")
    }
}
