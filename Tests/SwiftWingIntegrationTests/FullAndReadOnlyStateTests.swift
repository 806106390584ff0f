import Foundation
import Testing

/// A state directory on a real, small tmpfs: filled up, then remounted read-only. Needs root to mount.
@Suite(.serialized, .enabled(if: isRoot, "mounting a tmpfs needs root"))
struct FullAndReadOnlyStateTests {
    final class SmallFileSystem {
        let mountPoint: String
        init(megabytes: Int) throws {
            mountPoint = NSTemporaryDirectory() + "swiftwing-tmpfs-\(UUID().uuidString.prefix(8))"
            try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: true)
            try shell("mount", "-t", "tmpfs", "-o", "size=\(megabytes)m", "tmpfs", mountPoint)
        }
        /// Makes `directory` (inside this file system) read-only with a read-only bind mount over it:
        /// the whole file system cannot be remounted read-only while the daemon holds files open for writing.
        func makeReadOnly(_ directory: String) throws {
            try shell("mount", "--bind", directory, directory)
            try shell("mount", "-o", "remount,bind,ro", directory)
            boundDirectories.append(directory)
        }
        private var boundDirectories: [String] = []
        deinit {
            for directory in boundDirectories.reversed() { _ = try? shell("umount", "-l", directory) }
            _ = try? shell("umount", "-l", mountPoint)
            try? FileManager.default.removeItem(atPath: mountPoint)
        }
    }

    @Test func aFullDiskRefusesThePressLeavesNoHalfWrittenFileAndKeepsTheQueue() throws {
        let disk = try SmallFileSystem(megabytes: 24)
        let harness = try DaemonHarness(stateDirectory: disk.mountPoint + "/state")
        // The early free-space check is off, so the real ENOSPC path is what is tested.
        try harness.startDaemonWithoutFreeSpaceMargin()
        let first = harness.press()
        #expect(first.id != nil, "\(first.result.error)")
        let before = try harness.queue()

        // When the file system is filled up to the last few kilobytes
        try shell("sh", "-c", "dd if=/dev/zero of=\(disk.mountPoint)/filler bs=64k 2>/dev/null; true")
        let refused = harness.press()

        // Then the press is refused, saying the disk is full, and nothing half-written remains
        #expect(refused.id == nil)
        #expect(refused.result.error.contains("full"), "got: \(refused.result.error)")
        #expect(!harness.spoolFiles().contains { $0.contains(".tmp") })
        let after = try harness.queue()
        #expect(after.map(\.id) == before.map(\.id), "the existing queue must be intact")

        // And once space is freed, presses work again
        try FileManager.default.removeItem(atPath: disk.mountPoint + "/filler")
        #expect(harness.press().id != nil)
        harness.killDaemon(signal: SIGTERM)
    }

    @Test func theFreeSpaceMarginRefusesEarlyWithAClearReason() throws {
        let disk = try SmallFileSystem(megabytes: 16)
        let harness = try DaemonHarness(stateDirectory: disk.mountPoint + "/state", extraArguments: [])
        try harness.startDaemon()  // default margin: 64 MB, more than this file system has
        let refused = harness.press()
        #expect(refused.id == nil)
        #expect(refused.result.error.contains("free"), "got: \(refused.result.error)")
        #expect(try harness.queue().isEmpty)
        harness.killDaemon(signal: SIGTERM)
    }

    @Test func aSpoolThatTurnsReadOnlyRefusesThePressAndKeepsTheQueue() throws {
        let disk = try SmallFileSystem(megabytes: 24)
        let harness = try DaemonHarness(stateDirectory: disk.mountPoint + "/state")
        try harness.startDaemonWithoutFreeSpaceMargin()
        #expect(harness.press().id != nil)
        #expect(harness.press().id != nil)
        let before = try harness.queue()

        try disk.makeReadOnly(harness.spoolDirectory)
        let refused = harness.press()
        #expect(refused.id == nil)
        #expect(refused.result.error.contains("read-only"), "got: \(refused.result.error)")
        #expect(try harness.queue().map(\.id) == before.map(\.id))
        #expect(harness.spoolFiles().filter { $0.hasSuffix(".jpg") && !$0.hasSuffix(".thumb.jpg") }.count == 2)
        harness.killDaemon(signal: SIGKILL)
    }

    @Test func aReadOnlyStateDirectoryStopsTheDaemonWithAClearError() throws {
        let disk = try SmallFileSystem(megabytes: 8)
        let harness = try DaemonHarness(stateDirectory: disk.mountPoint + "/state")
        try FileManager.default.createDirectory(atPath: harness.stateDirectory, withIntermediateDirectories: true)
        try disk.makeReadOnly(harness.stateDirectory)
        let result = harness.run(["run"] + harness.commonArguments + ["--camera", "synthetic:\(Fixtures.shelves)"])
        #expect(result.status != 0)
        #expect(result.error.contains(harness.stateDirectory), "got: \(result.error)")
        #expect(result.error.contains("read-only"), "got: \(result.error)")
    }
}

extension DaemonHarness {
    func startDaemonWithoutFreeSpaceMargin() throws {
        let config = root.appendingPathComponent("nomargin.toml").path
        try "[daemon]\nmin_free_megabytes = 0\n".write(toFile: config, atomically: true, encoding: .utf8)
        configPath = config
        try startDaemon()
    }
}

@discardableResult
func shell(_ arguments: String...) throws -> Int32 {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = arguments
    try process.run()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else {
        throw HarnessError("\(arguments.joined(separator: " ")) exited with \(process.terminationStatus)")
    }
    return process.terminationStatus
}
