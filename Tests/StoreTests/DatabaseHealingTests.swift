import Foundation
import GRDB
import SwiftWingCore
import Testing

@testable import Store

#if canImport(Glibc)
    import Glibc
#endif

@Suite("A damaged database heals on start")
struct DatabaseHealingTests {
    /// A state directory with `books` books and `scans` queued scans (their photos in the spool), the
    /// database closed and checkpointed into its main file, as after a clean stop.
    private func populated(books: Int = 500, scans: Int = 20) throws -> (TemporaryDirectory, [UUID]) {
        let directory = TemporaryDirectory()
        let state = directory.stateDirectory
        try state.create()
        var ids: [UUID] = []
        do {
            let database = try AppDatabase.open(state)
            let spool = SpoolDirectory(state)
            for _ in 0..<scans { ids.append(try pressShutter(database, spool: spool).id) }
            try database.writer.write { db in
                for number in 0..<books {
                    var book = BookRecord(
                        title: "Book \(number) " + String(repeating: "x", count: 200), authors: ["Author \(number)"],
                        scanID: ids.isEmpty ? nil : ids[number % ids.count])
                    try book.insert(db)
                }
            }
            try database.writer.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
        }
        return (directory, ids)
    }

    private func otherFiles(_ directory: TemporaryDirectory) -> [String] {
        entries(directory.path).filter { $0.hasPrefix("swiftwing.damaged-") }
    }

    /// The state a fresh start leaves: every scan queued again, the old file beside the new one.
    private func expectHealed(_ directory: TemporaryDirectory, scans: [UUID]) throws -> DatabaseRecovery {
        let state = directory.stateDirectory
        let started = try AppDatabase.openForDaemon(state, now: Date(timeIntervalSince1970: 1_795_000_000))
        let recovery = try #require(started.recovery)
        #expect(Set(try started.database.queue.pending().map(\.id)) == Set(scans))
        #expect(try started.database.queue.counts()[.queued] == scans.count)
        #expect(recovery.scansRequeued == scans.count)
        #expect(FileOperations.parentDirectory(of: recovery.movedTo) == directory.path)
        #expect(recovery.movedTo.hasPrefix(directory.path + "/swiftwing.damaged-"))
        #expect(FileOperations.exists(recovery.movedTo))
        #expect(FileOperations.exists(state.databasePath))
        // The new one is whole, and the note is there for `swiftwing status` while the old file is.
        let check = try started.database.writer.read { db in try String.fetchAll(db, sql: "PRAGMA quick_check") }
        #expect(check == ["ok"])
        #expect(DatabaseRecovery.current(in: state) == recovery)
        #expect(recovery.description.contains(recovery.movedTo))
        return recovery
    }

    @Test("a database cut short is moved aside, kept, and the spool's 20 scans are queued again")
    func truncatedFile() throws {
        let (directory, scans) = try populated()
        let path = directory.stateDirectory.databasePath
        let original = try #require(contents(of: path))
        #expect(truncate(path, off_t(original.count / 2)) == 0)

        let recovery = try expectHealed(directory, scans: scans)
        #expect(contents(of: recovery.movedTo) == Array(original.prefix(original.count / 2)))
        #expect(recovery.booksSalvaged <= 500)
    }

    @Test("a file of random bytes is moved aside and a new database made")
    func randomBytes() throws {
        let (directory, scans) = try populated(books: 0)
        let path = directory.stateDirectory.databasePath
        var generator = SystemRandomNumberGenerator()
        let noise = (0..<100_000).map { _ in UInt8.random(in: 0...255, using: &generator) }
        _ = FileManager.default.createFile(atPath: path, contents: Data(noise))

        let recovery = try expectHealed(directory, scans: scans)
        #expect(contents(of: recovery.movedTo) == noise)
        #expect(recovery.booksSalvaged == 0)
        #expect(recovery.salvageProblem != nil)
    }

    @Test("a page zeroed in the middle of 500 books: the 20 scans are queued, books before and after it are kept")
    func zeroedPage() throws {
        let (directory, scans) = try populated()
        let path = directory.stateDirectory.databasePath
        let size = try #require(contents(of: path)).count
        let pageSize = 4096
        let middle = (size / pageSize / 2) * pageSize
        let fd = open(path, O_WRONLY)
        #expect(fd >= 0)
        let zeros = [UInt8](repeating: 0, count: pageSize)
        #expect(zeros.withUnsafeBytes { pwrite(fd, $0.baseAddress, pageSize, off_t(middle)) } == pageSize)
        close(fd)

        let recovery = try expectHealed(directory, scans: scans)
        // Best effort: most books are read around the damaged page, never more than there were.
        #expect(recovery.booksSalvaged > 250 && recovery.booksSalvaged <= 500, "\(recovery)")
        let started = try AppDatabase.open(directory.stateDirectory)
        #expect(try started.library.bookCount() == recovery.booksSalvaged)
        // Books keep their link to a scan that is back in the queue.
        let linked = try started.writer.read { db in
            try Int.fetchOne(db, sql: "SELECT count(*) FROM book WHERE scanId IS NOT NULL") ?? 0
        }
        #expect(linked == recovery.booksSalvaged)
    }

    @Test(
        "a rebuild interrupted after the move (a full card: the new database could not be made) is finished by the next start",
        .enabled(if: canMountTmpfs, "needs tmpfs mounts (root)"))
    func interruptedRebuild() throws {
        let directory = TemporaryDirectory()
        #expect(directory.mountTmpfs(kilobytes: 1024))
        let state = directory.stateDirectory
        try state.create()
        var scans: [UUID] = []
        do {
            let database = try AppDatabase.open(state)
            for _ in 0..<3 { scans.append(try pressShutter(database, spool: SpoolDirectory(state)).id) }
        }
        var generator = SystemRandomNumberGenerator()
        let noise = (0..<100_000).map { _ in UInt8.random(in: 0...255, using: &generator) }
        #expect(FileManager.default.createFile(atPath: state.databasePath, contents: Data(noise)))
        // Fill the card but one page: room for the note of the move, none for a new database.
        let page = directory.path + "/page"
        #expect(FileManager.default.createFile(atPath: page, contents: Data(count: 4096)))
        let filler = directory.path + "/filler"
        #expect(FileManager.default.createFile(atPath: filler, contents: nil))
        let handle = try #require(FileHandle(forWritingAtPath: filler))
        while (try? handle.write(contentsOf: Data(count: 4096))) != nil {}
        try? handle.close()
        try FileManager.default.removeItem(atPath: page)

        #expect(throws: StoreError.self) { try AppDatabase.openForDaemon(state) }
        #expect(otherFiles(directory) != [], "moved aside before the new database failed")

        try FileManager.default.removeItem(atPath: filler)  // space is freed; the next try
        let recovery = try expectHealed(directory, scans: scans)
        #expect(contents(of: recovery.movedTo) == noise, "the note names the damaged file, not the failed start's")
        #expect(
            otherFiles(directory).filter { $0.hasSuffix(".sqlite") }.count == 1,
            "the failed start's empty file is not taken for a second damaged database: \(otherFiles(directory))")
        #expect(!FileOperations.exists(directory.path + "/database-recovery.pending.json"))
    }

    @Test("an empty database file (its contents lost) is treated as damaged, not silently started afresh")
    func emptyFile() throws {
        let (directory, scans) = try populated(books: 3, scans: 2)
        #expect(truncate(directory.stateDirectory.databasePath, 0) == 0)
        let recovery = try expectHealed(directory, scans: scans)
        #expect(recovery.problem.contains("empty"))
    }

    @Test("a whole database is left as it is: nothing moved, no note")
    func healthyDatabase() throws {
        let (directory, scans) = try populated(books: 10, scans: 3)
        let started = try AppDatabase.openForDaemon(directory.stateDirectory)
        #expect(started.recovery == nil)
        #expect(started.reconciliation.isClean)
        #expect(Set(try started.database.queue.pending().map(\.id)) == Set(scans))
        #expect(try started.database.library.bookCount() == 10)
        #expect(otherFiles(directory).isEmpty)
        #expect(!FileOperations.exists(directory.stateDirectory.recoveryNotePath))
    }

    @Test("the note is shown while the old file is kept, and no more once a person deletes it")
    func noteFollowsTheOldFile() throws {
        let (directory, scans) = try populated(books: 0, scans: 1)
        _ = FileManager.default.createFile(
            atPath: directory.stateDirectory.databasePath, contents: Data("garbage".utf8))
        let recovery = try expectHealed(directory, scans: scans)
        for file in recovery.movedFiles { try FileManager.default.removeItem(atPath: file) }
        #expect(DatabaseRecovery.current(in: directory.stateDirectory) == nil)
    }

    @Test("a second damage the same second gets its own name: the first old file is never overwritten")
    func twoRecoveriesKeepBothFiles() throws {
        let directory = TemporaryDirectory()
        let state = directory.stateDirectory
        try state.create()
        let now = Date(timeIntervalSince1970: 1_795_000_000)
        var moved: [String] = []
        for text in ["first", "second"] {
            _ = FileManager.default.createFile(atPath: state.databasePath, contents: Data(text.utf8))
            let started = try AppDatabase.openForDaemon(state, now: now)
            moved.append(try #require(started.recovery).movedTo)
        }
        #expect(moved[0] != moved[1])
        #expect(contents(of: moved[0]) == Array("first".utf8))
        #expect(contents(of: moved[1]) == Array("second".utf8))
    }
}

@Suite("A damaged device id is replaced, the old file kept")
struct DeviceIdentityReplacementTests {
    @Test(
        "a device-id that holds no UUID is moved aside and a new id made, once",
        arguments: [
            "not-a-uuid\n", "", "\u{0}\u{1}\u{2}",
        ])
    func replaced(content: String) throws {
        let directory = TemporaryDirectory()
        defer { withExtendedLifetime(directory) {} }
        let path = directory.stateDirectory.deviceIDPath
        _ = FileManager.default.createFile(atPath: path, contents: Data(content.utf8))
        let first = try DeviceIdentity.loadOrReplace(stateDirectory: directory.stateDirectory)
        let aside = try #require(first.replacedFile)
        #expect(contents(of: aside) == Array(content.utf8))
        #expect(aside.hasPrefix(path + ".damaged-"))
        #expect(first.problem != nil)
        // The next start reads the new id and has nothing to report.
        let second = try DeviceIdentity.loadOrReplace(stateDirectory: directory.stateDirectory)
        #expect(second.id == first.id)
        #expect(second.replacedFile == nil)
    }
}

@Suite("Root and a state directory another user owns")
struct StateDirectoryOwnershipTests {
    @Test(
        "root is refused a directory another user owns, with the owner and the fix named",
        .enabled(if: getuid() == 0, "needs root to chown"))
    func rootRefused() throws {
        let directory = TemporaryDirectory()
        defer { withExtendedLifetime(directory) {} }
        let state = directory.stateDirectory
        try state.create()
        #expect(chown(directory.path, 65534, 65534) == 0)
        let attempts: [(String, () throws(StoreError) -> Void)] = [
            ("create", { () throws(StoreError) in try state.create() }),
            ("lock", { () throws(StoreError) in _ = try StateDirectoryLock.acquire(stateDirectory: state) }),
            ("changes", { () throws(StoreError) in _ = try AppDatabase.openForChanges(state) }),
        ]
        for (name, attempt) in attempts {
            do {
                try attempt()
                Issue.record("\(name): root was let in")
            } catch {
                guard case .stateDirectoryOwnedByAnotherUser(let named, _, let uid) = error else {
                    Issue.record("\(name): unexpected \(error)")
                    continue
                }
                #expect(named == directory.path)
                #expect(uid == 65534)
                #expect(error.description.contains(directory.path))
                #expect(error.description.contains("sudo -u"))
            }
        }
        #expect(!FileOperations.exists(state.lockPath))
        // Another user (not root) is not held back by this rule.
        #expect(throws: Never.self) { try state.checkWritableByThisUser(effectiveUID: 65534) }
    }

    @Test("a symlink planted as the lock file is not followed")
    func lockFileSymlink() throws {
        let directory = TemporaryDirectory()
        defer { withExtendedLifetime(directory) {} }
        let state = directory.stateDirectory
        try state.create()
        let target = directory.path + "/precious"
        _ = FileManager.default.createFile(atPath: target, contents: Data("keep me".utf8))
        #expect(symlink(target, state.lockPath) == 0)
        #expect(throws: StoreError.self) { _ = try StateDirectoryLock.acquire(stateDirectory: state) }
        #expect(contents(of: target) == Array("keep me".utf8))
    }
}
