import Foundation
import Testing

@testable import Store

@Suite("Spool directory")
struct SpoolTests {
    @Test("a write leaves exactly the bytes in <id>.jpg, mode 0640, and no temporary file")
    func writeExactBytes() throws {
        let directory = TemporaryDirectory()
        defer { withExtendedLifetime(directory) {} }
        try directory.stateDirectory.create()
        let spool = SpoolDirectory(directory.stateDirectory)
        let id = UUID()
        let bytes = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let image = try spool.write(jpeg: bytes, for: id)
        #expect(image.fileName == id.uuidString.lowercased() + ".jpg")
        #expect(image.path == directory.path + "/spool/" + image.fileName)
        #expect(image.size == bytes.count)
        #expect(contents(of: image.path) == bytes)
        #expect(fileMode(image.path) == 0o640)
        let thumbnail = try spool.write(thumbnail: [0xFF, 0xD8, 0xFF, 0xD9], for: id)
        #expect(entries(spool.path) == [image.fileName, thumbnail.fileName, "quarantine"].sorted())

        try spool.remove(scan: id)
        #expect(entries(spool.path) == ["quarantine"])
    }

    @Test("stray temporary files from a crash are swept")
    func sweep() throws {
        let directory = TemporaryDirectory()
        defer { withExtendedLifetime(directory) {} }
        try directory.stateDirectory.create()
        let spool = SpoolDirectory(directory.stateDirectory)
        _ = FileManager.default.createFile(atPath: spool.path + "/.tmp.abc.jpg.1234", contents: Data([1, 2, 3]))
        let kept = try spool.write(jpeg: syntheticJPEG(), for: UUID())
        #expect(try spool.sweepTemporaryFiles() == [".tmp.abc.jpg.1234"])
        #expect(entries(spool.path) == [kept.fileName, "quarantine"].sorted())
        #expect(try spool.sweepTemporaryFiles().isEmpty)
    }

    @Test(
        "a full disk: a typed error naming the state directory, no half-written file, the queue intact",
        .enabled(if: canMountTmpfs, "needs tmpfs mounts (root in a sandbox that allows them)"))
    func fullDisk() throws {
        let directory = TemporaryDirectory()
        defer { withExtendedLifetime(directory) {} }
        #expect(directory.mountTmpfs(kilobytes: 768))
        try directory.stateDirectory.create()
        let database = try AppDatabase.open(directory.stateDirectory)
        let spool = SpoolDirectory(directory.stateDirectory)
        let first = try pressShutter(database, spool: spool)

        let big = [UInt8](repeating: 0xAB, count: 2_000_000)
        do {
            _ = try spool.write(jpeg: big, for: UUID())
            Issue.record("a 2 MB write fit on a 768 kB tmpfs")
        } catch {
            #expect(error.isNoSpace)
            guard case .noSpace = error else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(error.description.contains("the state directory \(directory.path)"))
            #expect(error.description.contains("ENOSPC"))
            #expect(error.description.contains("the press was not saved"))
        }
        #expect(entries(spool.path) == [first.imagePath, "quarantine"].sorted())
        #expect(try database.queue.pending().map(\.id) == [first.id])
        #expect(try database.queue.scan(id: first.id)?.state == .queued)
        #expect(try FreeSpace.availableBytes(at: directory.path) < 768_000)
    }

    @Test(
        "a read-only file system: a typed error, nothing written",
        .enabled(if: canMountTmpfs, "needs tmpfs mounts (root in a sandbox that allows them)"))
    func readOnlyFileSystem() throws {
        let directory = TemporaryDirectory()
        defer { withExtendedLifetime(directory) {} }
        #expect(directory.mountTmpfs(kilobytes: 256))
        try directory.stateDirectory.create()
        #expect(directory.remountReadOnly())
        let spool = SpoolDirectory(directory.stateDirectory)
        #expect(
            throws: StoreError.readOnlyFileSystem(
                directory: "the state directory \(directory.path)", consequence: "the press was not saved")
        ) {
            _ = try spool.write(jpeg: syntheticJPEG(), for: UUID())
        }
        #expect(entries(spool.path) == ["quarantine"])
    }

    @Test("a spool directory that is missing: a typed error naming it")
    func missingSpool() throws {
        let directory = TemporaryDirectory()
        defer { withExtendedLifetime(directory) {} }
        let spool = SpoolDirectory(directory.stateDirectory)  // never created
        do {
            _ = try spool.write(jpeg: syntheticJPEG(), for: UUID())
            Issue.record("wrote into a missing directory")
        } catch {
            guard case .systemCall(let call, _) = error else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(call.errno == ENOENT)
            #expect(error.description.contains(spool.path))
        }
    }

    @Test("free space: statvfs reports, and a reserve larger than the disk is refused")
    func freeSpace() throws {
        let directory = TemporaryDirectory()
        defer { withExtendedLifetime(directory) {} }
        #expect(try FreeSpace.availableBytes(at: directory.path) > 0)
        #expect(throws: Never.self) { try FreeSpace.require(1, in: directory.stateDirectory) }
        do {
            try FreeSpace.require(Int64.max, in: directory.stateDirectory)
            Issue.record("a reserve of Int64.max was met")
        } catch {
            #expect(error.isNoSpace)
            #expect(error.description.contains(directory.path))
        }
        #expect(throws: StoreError.self) { _ = try FreeSpace.availableBytes(at: directory.path + "/missing") }
    }
}
