import Foundation
import Recognition
import Testing

/// The OCR worker needs nothing from the network and keeps nothing of its own: its models come inside rapidocr's wheel
/// and are named by their paths (rapidocr would otherwise fetch them), and onnxruntime's telemetry, which keeps a
/// device id and an event store under ~/.cache, is off.
@Suite struct OCRWorkerOfflineTests {
    /// Each file of a folder with its size and modification time.
    static func listing(_ folder: String) throws -> [String: String] {
        var result: [String: String] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: folder) {
            let attributes = try FileManager.default.attributesOfItem(atPath: "\(folder)/\(name)")
            result[name] = "\(attributes[.size] ?? 0) \(attributes[.modificationDate] ?? Date.distantPast)"
        }
        return result
    }

    /// Every file under a folder, however deep.
    static func files(under folder: URL) -> [String] {
        let walker = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: [.isRegularFileKey])
        return (walker?.allObjects as? [URL] ?? []).filter {
            (try? $0.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true
        }.map(\.path)
    }

    /// One photo read with an empty HOME and cache folder and every HTTP(S) request sent to a closed port (a download
    /// would fail and the worker with it): it reads the photo, writes no file under HOME, and leaves the folders of
    /// the models it read as they were.
    @Test func readsWithoutTheNetworkAndWritesNothingUnderHome() throws {
        let configuration = try OCRWorkerConfiguration.locate(root: repositoryRoot)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("ocr-offline-\(UUID().uuidString)")
        let home = folder.appendingPathComponent("home")
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let jpeg = try RealOCRWorkerTests.threeSpines()
        let input = folder.appendingPathComponent("in")
        let output = folder.appendingPathComponent("out")
        let errors = folder.appendingPathComponent("err")
        let length = UInt32(jpeg.count)
        var frame = Data([UInt8(length >> 24), UInt8((length >> 16) & 0xff), UInt8((length >> 8) & 0xff)])
        frame.append(UInt8(length & 0xff))
        frame.append(contentsOf: jpeg)
        try frame.write(to: input)
        try Data().write(to: output)
        try Data().write(to: errors)
        let venv = URL(fileURLWithPath: configuration.python).deletingLastPathComponent().deletingLastPathComponent()
        let derived = venv.appendingPathComponent("swiftwing-models").path
        let derivedBefore = try Self.listing(derived)

        var environment = ProcessInfo.processInfo.environment
        environment["HOME"] = home.path
        environment["XDG_CACHE_HOME"] = home.appendingPathComponent(".cache").path
        for proxy in ["HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"] {
            environment[proxy] = "http://127.0.0.1:9"
        }
        environment["NO_PROXY"] = nil
        environment["no_proxy"] = nil
        let process = Process()
        process.executableURL = URL(fileURLWithPath: configuration.python)
        process.arguments = [configuration.script]
        process.environment = environment
        process.standardInput = try FileHandle(forReadingFrom: input)
        process.standardOutput = try FileHandle(forWritingTo: output)
        process.standardError = try FileHandle(forWritingTo: errors)
        try process.run()
        process.waitUntilExit()
        let stderr = String(decoding: try Data(contentsOf: errors), as: UTF8.self)
        #expect(process.terminationStatus == 0, "\(stderr)")

        let lines = try Data(contentsOf: output).split(separator: UInt8(ascii: "\n"))
        try #require(lines.count == 2, "\(stderr)")
        let ready = try #require(JSONSerialization.jsonObject(with: Data(lines[0])) as? [String: Any])
        let models = try #require(ready["models"] as? [String: String])
        let shipped = try #require(models["detect"].map { URL(fileURLWithPath: $0).deletingLastPathComponent().path })
        let reply = try #require(JSONSerialization.jsonObject(with: Data(lines[1])) as? [String: Any])
        let texts = (reply["lines"] as? [[String: Any]] ?? []).compactMap { $0["text"] as? String }
        #expect(unaccentedCapitals(texts.joined(separator: " ")).contains("MUSCULACION"))

        #expect(Self.files(under: home).isEmpty, "written under HOME: \(Self.files(under: home))")
        // The wheel's models folder holds what the wheel put there (its RECORD): what rapidocr downloads (models,
        // character lists, fonts) would land here, beside them.
        let shippedNames = Set(try FileManager.default.contentsOfDirectory(atPath: shipped))
        #expect(
            shippedNames == [
                ".gitkeep", "PP-OCRv6_det_small.onnx", "PP-OCRv6_rec_small.onnx",
                "ch_ppocr_mobile_v2.0_cls_mobile.onnx",
            ])
        #expect(try Self.listing(derived) == derivedBefore)
    }
}
