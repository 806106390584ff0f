import Foundation
import Testing

@testable import Appliance

@Suite struct ConfigurationTests {
    private func load(
        _ toml: String, environment: [String: String] = [:],
        overrides: [(key: String, value: String, flag: String)] = []
    ) throws(ConfigurationError) -> ApplianceConfiguration {
        let path = NSTemporaryDirectory() + "swiftwing-config-\(UUID().uuidString).toml"
        _ = FileManager.default.createFile(atPath: path, contents: Data(toml.utf8))
        defer { try? FileManager.default.removeItem(atPath: path) }
        return try ConfigurationLoader.load(path: path, environment: environment, overrides: overrides)
    }

    private func error(_ toml: String, environment: [String: String] = [:]) -> ConfigurationError? {
        do {
            _ = try load(toml, environment: environment)
            return nil
        } catch {
            return error
        }
    }

    @Test func theExampleConfigLoadsAndEqualsTheDefaults() throws {
        let example = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("config/swiftwing.example.toml").path
        let configuration = try ConfigurationLoader.load(path: example, environment: [:])
        #expect(configuration == ApplianceConfiguration())
    }

    @Test func theLostJobLimitIsASettingWithABoundedRange() throws {
        #expect(try load("[backend]\njob_lost_after_seconds = 45.0\n").backend.jobLostAfterSeconds == 45)
        #expect(
            try load("", environment: ["SWIFTWING_BACKEND_JOB_LOST_AFTER_SECONDS": "600"]).backend.jobLostAfterSeconds
                == 600)
        #expect(error("[backend]\njob_lost_after_seconds = 1.0\n")?.key == "backend.job_lost_after_seconds")
    }

    @Test func enrichmentNamesItsCatalogueAndRefusesAnUnknownOne() throws {
        #expect(ApplianceConfiguration().enrichment.provider.rawValue == "openlibrary")
        let google = try load("[enrichment]\nprovider = \"googlebooks\"\nbase_url = \"http://127.0.0.1:8787\"\n")
        #expect(google.enrichment.provider.rawValue == "googlebooks")
        #expect(google.enrichment.baseURL == "http://127.0.0.1:8787")
        #expect(try load("", environment: ["SWIFTWING_ENRICHMENT_ENABLED": "false"]).enrichment.enabled == false)
        let problem = try #require(error("[enrichment]\nprovider = \"amazon\"\n"))
        #expect(problem.key == "enrichment.provider")
        #expect(problem.problem.contains("\"openlibrary\" or \"googlebooks\""))
    }

    @Test func fileThenEnvironmentThenFlagsOverrideEachOther() throws {
        let configuration = try load(
            "[camera]\nwidth = 1280\nheight = 720\ndevice = \"/dev/video2\"\n",
            environment: ["SWIFTWING_CAMERA_HEIGHT": "960", "SWIFTWING_CAMERA_DEVICE": "/dev/video3"],
            overrides: [("camera.device", "synthetic", "--camera")])
        #expect(configuration.camera.width == 1280)
        #expect(configuration.camera.height == 960)
        #expect(configuration.camera.device == .synthetic(folder: nil))
    }

    @Test func aWrongTypeNamesTheFileLineKeyAndFix() throws {
        let problem = try #require(error("# comment\n[camera]\nframes_per_second = 15\nwidth = \"1920\"\n"))
        guard case .file(_, let line) = problem.origin else {
            Issue.record("origin \(problem.origin)")
            return
        }
        #expect(line == 4)
        #expect(problem.key == "camera.width")
        #expect(problem.problem.contains("expected an integer, found a string"))
        #expect(problem.description.contains("Fix: write width = 1920"))
    }

    @Test func anUnknownKeySuggestsTheClosestKnownOne() throws {
        let problem = try #require(error("[imaging]\njpeg_qualty = 90\n"))
        #expect(problem.key == "imaging.jpeg_qualty")
        #expect(problem.fix.contains("did you mean `jpeg_quality`"))
        guard case .file(_, 2) = problem.origin else {
            Issue.record("line: \(problem.origin)")
            return
        }
    }

    @Test func anUnknownSectionAndATopLevelKeyAreErrors() throws {
        #expect(error("[kamera]\nwidth = 1\n")?.problem == "is not a known section")
        let stray = try #require(error("width = 1920\n[camera]\n"))
        #expect(stray.fix.contains("move it under [camera]"))
    }

    @Test func valuesAreCheckedAgainstTheirRange() throws {
        #expect(error("[imaging]\njpeg_quality = 101\n")?.problem.contains("1…100") == true)
        #expect(error("[camera]\nrotation = 45\n")?.problem.contains("0, 90, 180 or 270") == true)
        #expect(error("[camera]\nbuffers = 1\n") != nil, "one mmap buffer cannot stream")
        #expect(error("[camera]\nbuffers = 2\n") == nil)
        #expect(error("[daemon]\nstate_directory = \"var/lib\"\n")?.problem.contains("absolute") == true)
        #expect(error("[panel]\noutput = \"hdmi\"\n")?.problem.contains("fb:/dev/fb0") == true)
    }

    @Test func aBadEnvironmentValueNamesTheVariable() {
        let problem = error("", environment: ["SWIFTWING_IMAGING_JPEG_QUALITY": "high"])
        #expect(problem?.origin == .environment(variable: "SWIFTWING_IMAGING_JPEG_QUALITY"))
        #expect(problem?.problem.contains("not a whole number") == true)
    }

    @Test func invalidTOMLReportsTheLine() throws {
        let problem = try #require(error("[camera]\nwidth = = 3\n"))
        guard case .file(_, 2) = problem.origin else {
            Issue.record("origin \(problem.origin)")
            return
        }
    }

    @Test func anExplicitMissingFileIsAnErrorButAMissingDefaultIsNot() throws {
        #expect(throws: ConfigurationError.self) {
            try ConfigurationLoader.load(path: "/nonexistent/swiftwing.toml", environment: [:])
        }
        // A fresh install has no file at the default path: the defaults, with the environment on top.
        let missing = NSTemporaryDirectory() + "swiftwing-absent-\(UUID().uuidString)/swiftwing.toml"
        let configuration = try ConfigurationLoader.load(
            path: nil, environment: ["SWIFTWING_CAMERA_DEVICE": "synthetic"], defaultPath: missing)
        var expected = ApplianceConfiguration()
        expected.camera.device = .synthetic(folder: nil)
        #expect(configuration == expected)
    }

    @Test func theDefaultPathIsReadWhenItExists() throws {
        let path = NSTemporaryDirectory() + "swiftwing-default-\(UUID().uuidString).toml"
        _ = FileManager.default.createFile(atPath: path, contents: Data("[camera]\nwidth = 1280\n".utf8))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let configuration = try ConfigurationLoader.load(path: nil, environment: [:], defaultPath: path)
        #expect(configuration.camera.width == 1280)
    }

    @Test func theUnitStartsWithoutNamingAConfigFile() throws {
        // `--config` makes a missing file fatal; the unit relies on the default path instead.
        let unit = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("systemd/swiftwing.service").path
        let text = try String(contentsOfFile: unit, encoding: .utf8)
        let execStart = try #require(text.split(separator: "\n").first { $0.hasPrefix("ExecStart=") })
        #expect(!execStart.contains("--config"))
    }

    @Test func cameraDeviceParsing() throws {
        #expect(try CameraDevice(parsing: "synthetic:/srv/photos") == .synthetic(folder: "/srv/photos"))
        #expect(try CameraDevice(parsing: "/dev/video0") == .v4l2(path: "/dev/video0"))
        #expect(throws: ConfigurationValueError.self) { try CameraDevice(parsing: "video0") }
    }
}
