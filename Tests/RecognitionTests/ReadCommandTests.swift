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

/// `read` with no catalogue of the owner's: the shipped open catalogue (goodbooks-10k) is what it matches against.
@Suite("swiftwing-recognizer read with no catalogue")
struct ReadWithoutCatalogueTests {
    @Test func aNewOwnersShelfIsMatchedAgainstTheShippedOpenCatalogue() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("read-open-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let photo = folder.appendingPathComponent("shelf.jpg")
        try Data([0xFF, 0xD8, 0xFF, 0xD9]).write(to: photo)
        let lines = Layout.photo([
            Layout.up("GEORGE ORWELL 1984", x: 100, from: 900, to: 100, thickness: 50),
            Layout.up("THE HUNGER GAMES SUZANNE COLLINS", x: 400, from: 900, to: 100, thickness: 50),
        ])
        try JSONEncoder().encode(lines).write(to: folder.appendingPathComponent("shelf.json"))
        let result = try ReadCommandTests().run(["read", "--json", "--ocr-from", folder.path, photo.path])
        #expect(result.status == 0, "\(result.errors)")
        let books = (result.output["images"] as? [[String: Any]])?.first?["books"] as? [[String: Any]] ?? []
        #expect(
            Set(books.compactMap { $0["title"] as? String }) == ["1984", "The Hunger Games (The Hunger Games, #1)"])
    }

    @Test func noOpenCatalogueAndNoCatalogueIsRefusedWithAdvice() throws {
        let result = try ReadCommandTests().run(["read", "--json", "--no-open-catalogue", "shelf.jpg"])
        #expect(result.status != 0)
        #expect(result.errors.contains("--catalogue"), "\(result.errors)")
    }
}
