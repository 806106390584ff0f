import Foundation
import Imaging
import Testing

/// The foundation's "done when": the real daemon on the synthetic camera, real `swiftwing shutter`
/// calls, real JPEG files and a real SQLite queue — also across SIGKILL and restart.
@Suite(.serialized) struct PressToDurableJPEGTests {
    @Test func tenPressesGiveTenDecodableJPEGsAndTenQueuedRowsAcrossKills() throws {
        // Given a daemon on the synthetic camera at a size larger than the 1920 px limit
        let harness = try DaemonHarness()
        try harness.startDaemon(width: 2592, height: 1944)
        var acknowledged: [String] = []

        // When ten presses are made, with the daemon SIGKILLed and restarted between some of them
        for press in 1...10 {
            let (id, result) = harness.press()
            #expect(id != nil, "press \(press) refused: \(result.error)\n\(harness.log)")
            if let id { acknowledged.append(id) }
            if press == 3 || press == 7 {
                harness.killDaemon(signal: SIGKILL)
                try harness.startDaemon(width: 2592, height: 1944)
            }
        }

        // Then there are ten queued rows, one per acknowledged id, each with a decodable JPEG ≤ 1920 px
        let queue = try harness.queue()
        #expect(queue.count == 10)
        #expect(Set(queue.map(\.id)) == Set(acknowledged))
        #expect(queue.allSatisfy { $0.state == "queued" })
        for entry in queue {
            let info = try JPEGInfo(contentsOf: entry.imagePath)
            #expect(max(info.width, info.height) <= 1920)
            #expect(max(info.width, info.height) == 1920, "2592x1944 must be scaled to exactly 1920 on the long edge")
            #expect(info.width == entry.width && info.height == entry.height)
            let size = try FileManager.default.attributesOfItem(atPath: entry.imagePath)[.size] as? Int
            #expect(size == entry.imageSize)
        }
        #expect(harness.spoolFiles().filter { $0.hasSuffix(".jpg") && !$0.hasSuffix(".thumb.jpg") }.count == 10)
        #expect(!harness.spoolFiles().contains { $0.contains(".tmp") })
    }

    @Test func killNineAtAnyMomentKeepsEveryAcknowledgedScanExactlyOnce() throws {
        // Given a daemon receiving presses from two clients at once
        let harness = try DaemonHarness()
        try harness.startDaemon(width: 1280, height: 720)
        let acknowledged = AcknowledgedScans()

        for round in 0..<4 {
            // When SIGKILL lands at an arbitrary moment while presses are in flight
            let group = DispatchGroup()
            for _ in 0..<2 {
                DispatchQueue.global().async(group: group) {
                    for _ in 0..<6 {
                        if let id = harness.press().id { acknowledged.add(id) }
                    }
                }
            }
            Thread.sleep(forTimeInterval: 0.15 + 0.2 * Double(round))
            harness.killDaemon(signal: SIGKILL)
            group.wait()
            try harness.startDaemon(width: 1280, height: 720)
        }

        // Then every acknowledged scan is there exactly once, with its image
        let queue = try harness.queue()
        let ids = queue.map(\.id)
        #expect(Set(ids).count == ids.count, "a scan appears twice")
        #expect(
            acknowledged.ids.isSubset(of: Set(ids)),
            "acknowledged scans lost: \(acknowledged.ids.subtracting(ids))\n\(harness.log)")
        #expect(acknowledged.ids.count > 0)
        for entry in queue where entry.state == "queued" {
            #expect(FileManager.default.fileExists(atPath: entry.imagePath))
            #expect((try? JPEGInfo(contentsOf: entry.imagePath)) != nil)
        }
        #expect(!harness.spoolFiles().contains { $0.contains(".tmp") }, "a half-written file remained after restart")
    }

    @Test func aSecondDaemonOnTheSameStateDirectoryIsRefused() throws {
        let harness = try DaemonHarness()
        try harness.startDaemon()
        let second = harness.run(
            [
                "run", "--config", harness.configPath, "--state-dir", harness.stateDirectory,
                "--control-socket", harness.root.appendingPathComponent("second.sock").path, "--camera",
                "synthetic:\(Fixtures.shelves)",
            ])
        #expect(second.status != 0)
        #expect(second.error.contains(harness.stateDirectory))
        #expect(second.error.contains("another swiftwing daemon"), "got: \(second.error)")
        // And the first one still works
        #expect(harness.press().id != nil)
    }

    @Test func noCameraAtThePathRefusesPressesWithAClearReasonAndKeepsRunning() throws {
        let harness = try DaemonHarness()
        try harness.startDaemon(camera: "/dev/video-does-not-exist", waitForCamera: false)
        let (id, result) = harness.press()
        #expect(id == nil)
        #expect(result.error.contains("/dev/video-does-not-exist"), "got: \(result.error)")
        let status = harness.run(["status", "--json"] + harness.commonArguments)
        #expect(status.output.contains("\"running\" : true"))
    }

    @Test func aConfigWithAWrongTypeNamesTheKeyTheLineAndTheFix() throws {
        let harness = try DaemonHarness()
        let config = harness.root.appendingPathComponent("bad.toml").path
        try "[camera]\nwidth = \"1920\"\n".write(toFile: config, atomically: true, encoding: .utf8)
        let result = harness.run(["run", "--config", config, "--state-dir", harness.stateDirectory])
        #expect(result.status != 0)
        #expect(result.error.contains("bad.toml:2"), "got: \(result.error)")
        #expect(result.error.contains("camera.width"))
        #expect(result.error.contains("Fix:"))
    }

    @Test func anUnknownKeyIsAnErrorWithASuggestion() throws {
        let harness = try DaemonHarness()
        let config = harness.root.appendingPathComponent("typo.toml").path
        try "[imaging]\njpeg_quality = 80\njpeg_qualty = 90\n".write(toFile: config, atomically: true, encoding: .utf8)
        let result = harness.run(["status", "--config", config, "--state-dir", harness.stateDirectory])
        #expect(result.status != 0)
        #expect(result.error.contains("typo.toml:3"))
        #expect(result.error.contains("jpeg_quality"), "should suggest the right spelling: \(result.error)")
    }
}

final class AcknowledgedScans: @unchecked Sendable {
    private let lock = NSLock()
    private var set = Set<String>()
    func add(_ id: String) {
        lock.lock()
        set.insert(id)
        lock.unlock()
    }
    var ids: Set<String> {
        lock.lock()
        defer { lock.unlock() }
        return set
    }
}
