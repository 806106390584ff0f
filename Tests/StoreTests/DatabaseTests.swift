import Foundation
import GRDB
import SwiftWingCore
import Testing

@testable import Store

@Suite("Database file, pragmas and migrations")
struct DatabaseTests {
    @Test("migrations apply to a fresh file and are idempotent on reopen")
    func migrationsOnFreshFileAndReopen() throws {
        let directory = TemporaryDirectory()
        defer { withExtendedLifetime(directory) {} }
        try directory.stateDirectory.create()
        let id = UUID()
        do {
            let database = try AppDatabase.open(directory.stateDirectory)
            try database.queue.enqueue(newScan(id: id))
            let applied = try database.writer.read { try AppDatabase.migrator.appliedIdentifiers($0) }
            #expect(applied == Set(AppDatabase.migrator.migrations))
            #expect(applied.isSuperset(of: ["v1", "v2", "v3-identify"]))
        }
        // Reopen: nothing to migrate, the row is there.
        let reopened = try AppDatabase.open(directory.stateDirectory)
        let applied = try reopened.writer.read { try AppDatabase.migrator.appliedIdentifiers($0) }
        #expect(applied == Set(AppDatabase.migrator.migrations))
        #expect(try reopened.queue.scan(id: id)?.state == .queued)
    }

    @Test("every connection is WAL, synchronous FULL, foreign keys on, with a busy timeout")
    func pragmas() throws {
        let directory = TemporaryDirectory()
        defer { withExtendedLifetime(directory) {} }
        try directory.stateDirectory.create()
        let database = try AppDatabase.open(directory.stateDirectory)
        let fromWriter = try database.writer.write { db in
            (
                try String.fetchOne(db, sql: "PRAGMA journal_mode"), try Int.fetchOne(db, sql: "PRAGMA synchronous"),
                try Int.fetchOne(db, sql: "PRAGMA foreign_keys"), try Int.fetchOne(db, sql: "PRAGMA busy_timeout")
            )
        }
        #expect(fromWriter.0 == "wal")
        #expect(fromWriter.1 == 2)  // FULL
        #expect(fromWriter.2 == 1)
        #expect(fromWriter.3 == 5000)
        let fromReader = try database.writer.read { db in
            (try Int.fetchOne(db, sql: "PRAGMA synchronous"), try Int.fetchOne(db, sql: "PRAGMA foreign_keys"))
        }
        #expect(fromReader.0 == 2)
        #expect(fromReader.1 == 1)

        let readOnly = try AppDatabase.openReadOnly(directory.stateDirectory)
        let fromCLI = try readOnly.writer.read { db in
            (try String.fetchOne(db, sql: "PRAGMA journal_mode"), try Int.fetchOne(db, sql: "PRAGMA synchronous"))
        }
        #expect(fromCLI.0 == "wal")
        #expect(fromCLI.1 == 2)
    }

    @Test("the read-only opener sees rows the writer commits while the writer stays open")
    func readOnlyOpenerSeesCommittedRows() throws {
        let directory = TemporaryDirectory()
        defer { withExtendedLifetime(directory) {} }
        try directory.stateDirectory.create()
        let daemon = try AppDatabase.open(directory.stateDirectory)
        try daemon.queue.enqueue(newScan())

        let cli = try AppDatabase.openReadOnly(directory.stateDirectory)
        #expect(cli.isReadOnly)
        #expect(try cli.queue.counts()[.queued] == 1)

        // The writer commits more while the reader is open: the next read sees them.
        try daemon.queue.enqueue(newScan())
        try daemon.library.insert(BookRecord(isbn13: "9780441013593", title: "Dune", authors: ["Frank Herbert"]))
        #expect(try cli.queue.counts()[.queued] == 2)
        #expect(try cli.library.searchBooks(matching: "dune").count == 1)

        // The reader cannot write.
        #expect(throws: StoreError.self) { try cli.queue.enqueue(newScan()) }
    }

    @Test("the read-only opener also works when no daemon has the file open")
    func readOnlyOpenerWithoutWriter() throws {
        let directory = TemporaryDirectory()
        defer { withExtendedLifetime(directory) {} }
        try directory.stateDirectory.create()
        do {
            let daemon = try AppDatabase.open(directory.stateDirectory)
            try daemon.queue.enqueue(newScan())
        }
        let cli = try AppDatabase.openReadOnly(directory.stateDirectory)
        #expect(try cli.queue.scans().count == 1)
    }

    @Test("the read-only opener names the state directory when there is no database")
    func readOnlyOpenerWithoutDatabase() throws {
        let directory = TemporaryDirectory()
        defer { withExtendedLifetime(directory) {} }
        do {
            _ = try AppDatabase.openReadOnly(directory.stateDirectory)
            Issue.record("opened a database that does not exist")
        } catch {
            #expect(
                error == .databaseMissing(path: directory.path + "/swiftwing.sqlite", stateDirectory: directory.path))
            #expect(error.description.contains(directory.path))
        }
        #expect(!FileManager.default.fileExists(atPath: directory.stateDirectory.databasePath))
    }

    @Test("a database from a newer build is refused by the read-only opener")
    func newerDatabaseRefused() throws {
        let directory = TemporaryDirectory()
        defer { withExtendedLifetime(directory) {} }
        try directory.stateDirectory.create()
        do {
            let daemon = try AppDatabase.open(directory.stateDirectory)
            try daemon.writer.write { db in
                try db.execute(sql: "INSERT INTO grdb_migrations (identifier) VALUES ('v99')")
            }
        }
        #expect(throws: StoreError.databaseTooNew(path: directory.stateDirectory.databasePath)) {
            _ = try AppDatabase.openReadOnly(directory.stateDirectory)
        }
    }

    @Test("a file that is not a database gives advice, not a crash")
    func notADatabase() throws {
        let directory = TemporaryDirectory()
        defer { withExtendedLifetime(directory) {} }
        try directory.stateDirectory.create()
        try Data(repeating: 0x42, count: 8192).write(to: URL(fileURLWithPath: directory.stateDirectory.databasePath))
        do {
            _ = try AppDatabase.open(directory.stateDirectory)
            Issue.record("opened garbage")
        } catch {
            guard case .databaseCorrupt = error else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(error.description.contains("move the file aside"))
        }
    }
}
