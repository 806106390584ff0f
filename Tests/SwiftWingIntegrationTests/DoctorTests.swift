import Foundation
import Testing

/// `swiftwing doctor` as the operator runs it, against the real reference backend on loopback.
@Suite struct DoctorTests {
    @Test func doctorReachesTheBackendAndNeverPrintsTheKey() throws {
        let backend = try BackendHarness()
        try backend.start()
        let harness = try DaemonHarness.forBackend(backend)
        let secret = "sk-doctor-integration-5f1c"
        let keyPath = harness.root.appendingPathComponent("api-key").path
        #expect(FileManager.default.createFile(atPath: keyPath, contents: Data((secret + "\n").utf8)))
        // `run` gets the URL as a flag; the doctor reads it from the file, as on a device.
        harness.configText += "\nurl = \"\(backend.url)\"\napi_key_file = \"\(keyPath)\"\n"

        let doctor = harness.run(["doctor", "--camera", "synthetic:\(Fixtures.shelves)"] + harness.commonArguments)
        let text = doctor.output + doctor.error
        #expect(text.contains("ok   backend reachable: \(backend.url) answered HTTP"), "\(text)")
        #expect(text.contains("ok   credential: API key present in \(keyPath) (not shown)"), "\(text)")
        #expect(!text.contains(secret), "the key was printed")

        backend.stop()
        let offline = harness.run(["doctor", "--camera", "synthetic:\(Fixtures.shelves)"] + harness.commonArguments)
        #expect(offline.status == 1)
        #expect(
            offline.output.contains("FAIL backend reachable: \(backend.url): could not connect"), "\(offline.output)")
    }
}
