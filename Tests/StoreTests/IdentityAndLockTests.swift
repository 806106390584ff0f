import Foundation
import SwiftWingTesting
import Testing

@testable import Store

#if canImport(Glibc)
    import Glibc
#endif

@Suite("Device identity and state-directory lock")
struct IdentityAndLockTests {
    @Test("the device id is created once (mode 0600, a v4 UUID) and read back on every load")
    func deviceIDPersists() throws {
        let directory = TemporaryDirectory()
        defer { withExtendedLifetime(directory) {} }
        let first = try DeviceIdentity.loadOrCreate(stateDirectory: directory.stateDirectory)
        let path = directory.stateDirectory.deviceIDPath
        #expect(fileMode(path) == 0o600)
        #expect(String(decoding: contents(of: path) ?? [], as: UTF8.self) == first.uuidString.lowercased() + "\n")
        #expect(first.uuidString.lowercased().dropFirst(14).first == "4")  // version nibble
        #expect(try DeviceIdentity.loadOrCreate(stateDirectory: directory.stateDirectory) == first)
        #expect(entries(directory.path) == ["device-id"])  // no temporary file left
    }

    @Test(
        "a garbled or empty device-id file is an error naming the file, and is not replaced",
        arguments: [
            "not-a-uuid\n", "", "\u{0}\u{1}\u{2}",
        ])
    func garbledDeviceID(content: String) throws {
        let directory = TemporaryDirectory()
        defer { withExtendedLifetime(directory) {} }
        let path = directory.stateDirectory.deviceIDPath
        _ = FileManager.default.createFile(atPath: path, contents: Data(content.utf8))
        do {
            _ = try DeviceIdentity.loadOrCreate(stateDirectory: directory.stateDirectory)
            Issue.record("accepted \(content.debugDescription)")
        } catch {
            guard case .deviceIdentityUnreadable(let named, _) = error else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(named == path)
            #expect(error.description.contains(path))
            #expect(error.description.contains("delete it"))
        }
        #expect(contents(of: path) == Array(content.utf8))
    }

    @Test("a second holder is refused with the first one's PID; the lock is free again after release")
    func lockRefusesSecondHolder() throws {
        let directory = TemporaryDirectory()
        defer { withExtendedLifetime(directory) {} }
        let state = directory.stateDirectory
        let lock = try StateDirectoryLock.acquire(stateDirectory: state)
        #expect(String(decoding: contents(of: state.lockPath) ?? [], as: UTF8.self) == "\(getpid())\n")

        // flock locks belong to the open file description: a second open in this process conflicts.
        #expect(throws: StoreError.stateDirectoryLocked(directory: state.path, holderPID: getpid())) {
            _ = try StateDirectoryLock.acquire(stateDirectory: state)
        }
        let message = StoreError.stateDirectoryLocked(directory: state.path, holderPID: getpid()).description
        #expect(message.contains(state.path) && message.contains("\(getpid())"))

        // Another process sees it too.
        #expect(run("/usr/bin/flock", ["-n", state.lockPath, "true"]) == 1)

        lock.release()
        #expect(run("/usr/bin/flock", ["-n", state.lockPath, "true"]) == 0)
        let again = try StateDirectoryLock.acquire(stateDirectory: state)
        again.release()
    }

    @Test("a lock held by another process is refused")
    func lockHeldElsewhere() throws {
        let directory = TemporaryDirectory()
        defer { withExtendedLifetime(directory) {} }
        let state = directory.stateDirectory
        // A child holds the lock for a while (and writes its PID the way the daemon does).
        let child = Process()
        child.executableURL = URL(fileURLWithPath: "/bin/sh")
        child.arguments = [
            "-c", "exec 9<>\"$0\"; flock -n 9 || exit 3; echo $$ >&9; echo locked; sleep 5", state.lockPath,
        ]
        let out = Pipe()
        child.standardOutput = out
        try child.run()
        defer { child.killAndReap() }
        _ = out.fileHandleForReading.availableData  // wait for "locked"
        do {
            _ = try StateDirectoryLock.acquire(stateDirectory: state)
            Issue.record("acquired a lock another process holds")
        } catch {
            #expect(error == .stateDirectoryLocked(directory: state.path, holderPID: child.processIdentifier))
        }
    }
}
