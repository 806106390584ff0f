import Foundation
import Testing

/// The daemon as a process, against a damaged state directory and against callers it must refuse.
@Suite(.serialized) struct TrustBoundaryTests {
    @Test func aDamagedDatabaseAndDeviceIDAreReplacedAndTheDaemonStartsWithTheSpoolsScansQueued() throws {
        let harness = try DaemonHarness()
        try harness.startDaemon()
        let ids = (0..<3).compactMap { _ in harness.press().id }
        #expect(ids.count == 3)
        harness.killDaemon(signal: SIGTERM)

        // Random bytes over the database (its WAL gone with it), nonsense in the device id.
        let state = harness.stateDirectory
        let noise = Data((0..<65_536).map { _ in UInt8.random(in: 0...255) })
        for suffix in ["-wal", "-shm"] {
            try? FileManager.default.removeItem(atPath: state + "/swiftwing.sqlite" + suffix)
        }
        try noise.write(to: URL(fileURLWithPath: state + "/swiftwing.sqlite"))
        try Data("garbled\n".utf8).write(to: URL(fileURLWithPath: state + "/device-id"))

        try harness.startDaemon()
        let queue = try harness.queue()
        #expect(Set(queue.map(\.id)) == Set(ids))
        #expect(queue.allSatisfy { $0.state == "queued" })
        let moved = try FileManager.default.contentsOfDirectory(atPath: state).filter {
            $0.hasPrefix("swiftwing.damaged-")
        }
        #expect(moved.count == 1)
        let old = state + "/" + (moved.first ?? "")
        #expect(FileManager.default.contents(atPath: old) == noise)

        let status = harness.run(["status"] + harness.commonArguments)
        #expect(status.output.contains("database rebuilt"), "\(status.output)")
        #expect(status.output.contains(old), "\(status.output)")
        let deviceIDs = try FileManager.default.contentsOfDirectory(atPath: state).filter {
            $0.hasPrefix("device-id.damaged-")
        }
        #expect(deviceIDs.count == 1)
        #expect(
            harness.log.components(separatedBy: "device id file held no UUID").count == 2,
            "logged once:\n\(harness.log)")

        // The next start finds both whole: nothing more moved, nothing more logged.
        harness.killDaemon(signal: SIGTERM)
        try harness.startDaemon()
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: state).filter { $0.contains(".damaged-") }.count == 2)
        #expect(harness.log.components(separatedBy: "device id file held no UUID").count == 2)
        harness.killDaemon(signal: SIGTERM)
    }

    @Test(.enabled(if: isRoot, "needs root to run a client as another user"))
    func aClientOfAnotherUserIsRefusedEvenWhenTheSocketFileLetsItIn() throws {
        let harness = try DaemonHarness()
        try harness.startDaemon()
        defer { harness.killDaemon(signal: SIGTERM) }
        // Wide open on the file system, so only the daemon's own check stands in the way.
        #expect(chmod(harness.root.path, 0o755) == 0 && chmod(harness.socketPath, 0o666) == 0)
        let client = NSTemporaryDirectory() + "swiftwing-nobody-\(UUID().uuidString.prefix(8))"
        try FileManager.default.copyItem(atPath: DaemonHarness.binary, toPath: client)
        defer { try? FileManager.default.removeItem(atPath: client) }
        let refused = harness.run(
            ["--reuid=65534", "--regid=65534", "--clear-groups", client, "shutter"]
                + harness.commonArguments, executable: "/usr/bin/setpriv")
        #expect(refused.status != 0)
        #expect(refused.error.contains("answers only root"), "\(refused.error)")
        #expect(try harness.queue().isEmpty)
        // Root still gets through.
        #expect(harness.press().id != nil)
    }

    @Test(.enabled(if: isRoot, "needs root to chown"))
    func rootIsRefusedAStateDirectoryAnotherUserOwns() throws {
        let harness = try DaemonHarness()
        try harness.startDaemon()
        #expect(harness.press().id != nil)
        harness.killDaemon(signal: SIGTERM)
        #expect(chown(harness.stateDirectory, 65534, 65534) == 0)
        let before = try FileManager.default.contentsOfDirectory(atPath: harness.stateDirectory).sorted()
        for command in [
            ["queue", "retry", "--all"], ["run", "--camera", "synthetic:\(Fixtures.shelves)", "--panel", "none"],
        ] {
            let result = harness.run(command + harness.commonArguments)
            #expect(result.status != 0, "\(command) ran")
            #expect(result.error.contains(harness.stateDirectory), "\(result.error)")
            #expect(result.error.contains("sudo -u"), "\(result.error)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: harness.stateDirectory).sorted() == before)
    }
}
