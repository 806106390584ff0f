import Foundation
import SwiftWingCore
import Testing

@testable import Store

#if canImport(Glibc)
    import Glibc
#endif

/// A fresh directory under /tmp, removed (after unmounting, when a tmpfs was mounted on it) at deinit.
final class TemporaryDirectory: @unchecked Sendable {
    let path: String
    private(set) var mounted = false

    init() {
        var template = Array("/tmp/swiftwing-store-test-XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        precondition(made != nil, "mkdtemp failed: \(errno)")
        path = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Mounts a tmpfs of `kilobytes` on the directory. False when this sandbox does not allow mounts.
    func mountTmpfs(kilobytes: Int) -> Bool {
        let ok = run("/bin/mount", ["-t", "tmpfs", "-o", "size=\(kilobytes)k,mode=0755", "tmpfs", path]) == 0
        mounted = ok
        return ok
    }

    /// Remounts the tmpfs read-only.
    func remountReadOnly() -> Bool {
        run("/bin/mount", ["-o", "remount,ro", path]) == 0
    }

    var stateDirectory: StateDirectory { StateDirectory(path: path) }

    deinit {
        if mounted { _ = run("/bin/umount", ["-l", path]) }
        try? FileManager.default.removeItem(atPath: path)
    }
}

@discardableResult
func run(_ executable: String, _ arguments: [String]) -> Int32 {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    do {
        try process.run()
    } catch {
        return -1
    }
    process.waitUntilExit()
    return process.terminationStatus
}

/// Whether tmpfs mounts work here (root in a sandbox that allows them).
let canMountTmpfs: Bool = {
    let probe = TemporaryDirectory()
    return probe.mountTmpfs(kilobytes: 64)
}()

/// A structurally whole JPEG (SOI, APP0, SOF0 with the size, SOS, a little entropy data, EOI).
/// Not decodable, but reconciliation only checks structure and reads the size.
func syntheticJPEG(width: Int = 640, height: Int = 480, payload: Int = 200) -> [UInt8] {
    var bytes: [UInt8] = [0xFF, 0xD8]
    bytes += [
        0xFF, 0xE0, 0x00, 0x10, 0x4A, 0x46, 0x49, 0x46, 0x00, 0x01, 0x01, 0x00, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00,
    ]
    bytes += [
        0xFF, 0xC0, 0x00, 0x11, 0x08, UInt8(height >> 8), UInt8(height & 0xFF), UInt8(width >> 8), UInt8(width & 0xFF),
        0x03, 0x01, 0x22, 0x00, 0x02, 0x11, 0x01, 0x03, 0x11, 0x01,
    ]
    bytes += [0xFF, 0xDA, 0x00, 0x0C, 0x03, 0x01, 0x00, 0x02, 0x11, 0x03, 0x11, 0x00, 0x3F, 0x00]
    bytes += (0..<payload).map { UInt8(truncatingIfNeeded: $0 * 7 + 1) & 0xFE }
    bytes += [0xFF, 0xD9]
    return bytes
}

/// Writes `bytes` to the spool and queues a scan for it, as the daemon does.
@discardableResult
func pressShutter(
    _ database: AppDatabase, spool: SpoolDirectory, bytes: [UInt8] = syntheticJPEG(), id: UUID = UUID(),
    at now: Date = Date()
) throws -> ScanRecord {
    let image = try spool.write(jpeg: bytes, for: id)
    return try database.queue.enqueue(
        NewScan(id: id, pressedAt: .now(), pressedWallAt: now, frameAt: .now(), image: image, width: 640, height: 480),
        now: now)
}

/// A queued scan for pure database tests (no file behind it).
func newScan(id: UUID = UUID()) -> NewScan {
    NewScan(
        id: id, pressedAt: MonotonicInstant(nanoseconds: 1_000), pressedWallAt: Date(), frameAt: nil,
        image: SpooledImage(fileName: SpoolDirectory.imageFileName(for: id), path: "/nowhere", size: 1234),
        width: 1920, height: 1080)
}

func fileMode(_ path: String) -> mode_t? {
    var info = stat()
    return stat(path, &info) == 0 ? info.st_mode & 0o7777 : nil
}

func contents(of path: String) -> [UInt8]? {
    FileManager.default.contents(atPath: path).map { [UInt8]($0) }
}

func entries(_ path: String) -> [String] {
    ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted()
}
