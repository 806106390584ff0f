import Foundation
import Recognition
import Testing

/// `swiftwing-recognizer read --ocr-from`, run as a real process: lines saved earlier stand in for the OCR worker, so
/// grouping and matching can be tried again on a photo without reading it.
@Suite("swiftwing-recognizer read with saved OCR lines")
struct ReadCommandTests {
    func run(_ arguments: [String]) throws -> (status: Int32, output: [String: Any], errors: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: MatchCommandTests.binary)
        process.arguments = arguments
        let stdout = Pipe()
        let stderr = Pipe()
        process.standardOutput = stdout
        process.standardError = stderr
        try process.run()
        let data = stdout.fileHandleForReading.readDataToEndOfFile()
        let errors = String(decoding: stderr.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        let output = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:]
        return (process.terminationStatus, output, errors)
    }

    @Test func groupsAndMatchesTheLinesSavedForAPhoto() throws {
        let catalogue = try SmallCatalogue()
        defer { catalogue.remove() }
        let photo = catalogue.folder.appendingPathComponent("shelf.jpg")
        // With saved lines the photo's bytes are not decoded: any file stands for it.
        try Data([0xFF, 0xD8, 0xFF, 0xD9]).write(to: photo)
        let saved = catalogue.folder.appendingPathComponent("lines")
        try FileManager.default.createDirectory(at: saved, withIntermediateDirectories: true)
        let lines = Layout.photo([
            Layout.up("GUIA DE LA MUSCULACION", x: 100, from: 700, to: 200, thickness: 50),
            Layout.up("796.41 Del", x: 100, from: 900, to: 800, thickness: 26),
        ])
        try JSONEncoder().encode(lines).write(to: saved.appendingPathComponent("shelf.json"))

        let result = try run([
            "read", "--catalogue", catalogue.path, "--json", "--ocr-from", saved.path, photo.path,
        ])
        #expect(result.status == 0, "\(result.errors)")
        let images = result.output["images"] as? [[String: Any]] ?? []
        let books = images.first?["books"] as? [[String: Any]] ?? []
        #expect(books.map { $0["title"] as? String } == ["Guía de la musculación : 200 ejercicios"])
        #expect(books.first?["text"] as? String == "GUIA DE LA MUSCULACION 796.41 Del")
    }

    @Test func aPhotoWithoutSavedLinesNamesTheFileAndTheFix() throws {
        let catalogue = try SmallCatalogue()
        defer { catalogue.remove() }
        let photo = catalogue.folder.appendingPathComponent("unsaved.jpg")
        try Data([0xFF, 0xD8, 0xFF, 0xD9]).write(to: photo)
        let result = try run([
            "read", "--catalogue", catalogue.path, "--json", "--ocr-from", catalogue.folder.path, photo.path,
        ])
        #expect(result.status != 0)
        #expect(result.errors.contains("unsaved.json") && result.errors.contains("--save-ocr"), "\(result.errors)")
    }
}
