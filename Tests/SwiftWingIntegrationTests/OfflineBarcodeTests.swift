import Foundation
import Identify
import Imaging
import SwiftWingCore
import SwiftWingTesting
import Testing

/// The real daemon with no backend at all, on the synthetic camera replaying a barcode photo made
/// from the repository's fixtures: the scan is done and its ISBN is in the library, offline.
@Suite struct OfflineBarcodeTests {
    static let width = 1280
    static let height = 720

    /// Writes a JPEG of the camera's size with a ZXing barcode picture on a mid-grey table into
    /// `folder`; returns the barcode's digits.
    static func writeBarcodeScene(into folder: String) throws -> String {
        let path = ShippedFiles.sourceTree + "/Fixtures/barcodes/ean13-3/01.png"
        let picture = try PictureFile.frame(contentsOf: path)
        let digits = try String(contentsOfFile: path.replacingOccurrences(of: ".png", with: ".txt"), encoding: .utf8)
        let frame = ImagingFixtures.centred(picture, width: width, height: height)
        let jpeg = try JPEGEncoder(quality: 95).encode(frame)
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try Data(jpeg).write(to: URL(fileURLWithPath: folder + "/barcode.jpg"))
        return digits.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test func aBarcodeScanIsDoneAndItsISBNIsInTheLibraryWithNoBackend() throws {
        let harness = try DaemonHarness()
        let folder = harness.root.appendingPathComponent("camera").path
        let isbn = try Self.writeBarcodeScene(into: folder)
        try harness.startDaemon(camera: "synthetic:\(folder)", width: Self.width, height: Self.height)

        let press = harness.press()
        let id = try #require(press.id, "the press was refused: \(press.result.error)")
        let scan = try #require(try harness.queue().first { $0.id == id })
        #expect(scan.state == "done", "\(scan.lastError ?? "")\n\(harness.log)")

        let library = harness.run(["library", "--json"] + harness.commonArguments)
        #expect(library.status == 0, "\(library.error)")
        struct Listing: Decodable {
            struct Book: Decodable {
                var isbn13: String?
                var source: String
                var enrichmentStatus: String
            }
            var books: [Book]
        }
        let books = try JSONDecoder().decode(Listing.self, from: Data(library.output.utf8)).books
        #expect(books.map(\.isbn13) == [isbn])
        #expect(books.first?.source == "barcode" && books.first?.enrichmentStatus == "pending")
        #expect(!harness.spoolFiles().contains { $0.hasPrefix(id) }, "the done scan's photo is deleted")
        harness.killDaemon(signal: SIGTERM)
    }
}
