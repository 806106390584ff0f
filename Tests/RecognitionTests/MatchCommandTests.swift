import Foundation
import Testing

/// `swiftwing-recognizer match` run as a real process on a small catalogue.
@Suite("swiftwing-recognizer match")
struct MatchCommandTests {
    static let binary: String = {
        if let path = ProcessInfo.processInfo.environment["SWIFTWING_RECOGNIZER_BINARY"] { return path }
        let products = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for candidate in [products, products.deletingLastPathComponent()] {
            let path = candidate.appendingPathComponent("swiftwing-recognizer").path
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        return repository.path + "/.build/debug/swiftwing-recognizer"
    }()

    func run(_ arguments: [String], input: String) throws -> (status: Int32, lines: [[String: Any]], errors: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.binary)
        process.arguments = arguments
        let stdin = Pipe()
        let stdout = Pipe()
        let stderr = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = stderr
        try process.run()
        stdin.fileHandleForWriting.write(Data(input.utf8))
        try stdin.fileHandleForWriting.close()
        let data = stdout.fileHandleForReading.readDataToEndOfFile()
        let errors = String(decoding: stderr.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        let lines = try String(decoding: data, as: UTF8.self).split(separator: "\n").map { line in
            try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] ?? [:]
        }
        return (process.terminationStatus, lines, errors)
    }

    @Test func writesOneLineForEachInputLineInOrderAssigningPerImage() throws {
        let catalogue = try SmallCatalogue()
        defer { catalogue.remove() }
        let input = """
            {"image": "a.jpg", "text": "EL ARTE DE LA GUERRA SUN TZU"}
            {"image": "b.jpg", "text": "GUIA DE LA MUSCULACION DELAVIER"}
            {"image": "a.jpg", "text": "ZXQW PLORK"}
            {"image": "a.jpg", "text": "EL ARTE DE LA GUERRA"}
            {"image": "a.jpg", "text": "EL ARTE DE LA GUERRA"}
            {"image": "b.jpg", "text": "EL ARTE DE LA GUERRA"}

            """
        let result = try run(["match", "--catalogue", catalogue.path, "--json", "--ignore-tags"], input: input)
        #expect(result.status == 0, "\(result.errors)")
        #expect(result.lines.count == 6)
        #expect(result.lines.map { $0["image"] as? String } == ["a.jpg", "b.jpg", "a.jpg", "a.jpg", "a.jpg", "b.jpg"])
        #expect(result.lines[1]["title"] as? String == "Guía de la musculación : 200 ejercicios")
        #expect(result.lines[1]["authors"] as? [String] == ["Delavier, Frédéric"])
        #expect(result.lines[1]["isbn"] as? String == "9788480196093")
        #expect((result.lines[1]["score"] as? Double ?? 0) > 0)
        // Unmatched: every field present, null.
        for key in ["title", "authors", "isbn", "score"] { #expect(result.lines[2][key] is NSNull) }
        #expect(result.lines[2]["text"] as? String == "ZXQW PLORK")
        // Photo a holds three spines of a book the catalogue has two copies of: one stays unmatched. Photo b's
        // spine of the same book is assigned on its own photo.
        let arte = [0, 3, 4].filter { result.lines[$0]["title"] as? String == "El Arte de la guerra" }
        #expect(arte.count == 2)
        #expect(result.lines[5]["title"] as? String == "El Arte de la guerra")
    }

    @Test func aBadCatalogueRowFailsNamingTheLine() throws {
        let catalogue = try SmallCatalogue(csv: "title,author,tag,series,isbn\nA,\"B, C\",1,,\nD,\"E, F\"\n")
        defer { catalogue.remove() }
        let result = try run(["match", "--catalogue", catalogue.path, "--json"], input: "")
        #expect(result.status != 0)
        #expect(result.errors.contains("catalogue.csv line 3, column tag"))
    }

    @Test func aMalformedInputLineFailsNamingIt() throws {
        let catalogue = try SmallCatalogue()
        defer { catalogue.remove() }
        let result = try run(
            ["match", "--catalogue", catalogue.path, "--json"], input: "{\"image\": \"a\", \"text\": \"x\"}\nnot json\n"
        )
        #expect(result.status != 0)
        #expect(result.errors.contains("stdin line 2"))
    }
}
