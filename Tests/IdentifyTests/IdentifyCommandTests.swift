import Foundation
import Testing

/// `swiftwing identify` run as a real process on fixture files.
@Suite("swiftwing identify")
struct IdentifyCommandTests {
    static let binary: String = {
        if let path = ProcessInfo.processInfo.environment["SWIFTWING_BINARY"] { return path }
        let products = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for candidate in [products, products.deletingLastPathComponent()] {
            let path = candidate.appendingPathComponent("swiftwing").path
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        return Fixtures.repository + "/.build/debug/swiftwing"
    }()

    func run(_ arguments: [String]) throws -> (status: Int32, output: Data, errors: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.binary)
        process.arguments = arguments
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        let errorText = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, data, errorText)
    }

    struct Report: Decodable {
        struct Image: Decodable {
            struct Code: Decodable {
                var format: String
                var text: String
            }
            struct Exposure: Decodable {
                var mean: Double
                var shadows: Double
                var highlights: Double
            }
            var file: String
            var barcodes: [Code]
            var isbns: [String]
            var sharpness: Double
            var exposure: Exposure
            var milliseconds: Double
        }
        var images: [Image]
    }

    @Test("--json on a book's PNG, a product's PNG and a shelf JPEG")
    func json() throws {
        let book = try Fixtures.barcodeSet("ean13-3", expectedCount: 55)[0]
        let product = Fixtures.barcodes + "/ean13-1/4.png"  // 5449000039231: an EAN-13, not a book
        let shelf = Fixtures.shelves + "/one_shelf.jpg"
        let result = try run(["identify", "--json", book.path, product, shelf])
        #expect(result.status == 0, "\(result.errors)")
        let report = try JSONDecoder().decode(Report.self, from: result.output)
        try #require(report.images.count == 3)
        #expect(report.images.map(\.file) == [book.path, product, shelf])
        #expect(report.images[0].barcodes.map(\.text) == [book.digits])
        #expect(report.images[0].barcodes.map(\.format) == ["EAN-13"])
        #expect(report.images[0].isbns == (book.digits.hasPrefix("978") ? [book.digits] : []))
        #expect(report.images[1].barcodes.map(\.text) == ["5449000039231"])
        #expect(report.images[1].isbns.isEmpty)
        #expect(report.images[2].barcodes.isEmpty)
        for image in report.images {
            #expect(image.sharpness > 0)
            #expect((0...255).contains(image.exposure.mean))
            #expect((0...1).contains(image.exposure.shadows) && (0...1).contains(image.exposure.highlights))
            #expect(image.milliseconds > 0)
        }
    }

    @Test("a file that is not a picture fails with the file named and advice")
    func notAPicture() throws {
        let result = try run(["identify", Fixtures.barcodes + "/README.md"])
        #expect(result.status != 0)
        #expect(result.errors.contains("README.md"))
        #expect(result.errors.contains("Fix:"))
    }
}
