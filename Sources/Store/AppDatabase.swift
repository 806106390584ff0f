import Foundation
import GRDB
import Logging
import SwiftWingCore

/// The SwiftWing database: the scan queue and the library, in one SQLite file.
///
/// On a device it is a `DatabasePool` (WAL: one writer, the daemon, plus concurrent readers such as
/// the CLI in another process); in unit tests an in-memory `DatabaseQueue`. Every connection runs
/// with `PRAGMA synchronous = FULL` (a committed scan survives a power cut), foreign keys on and a
/// busy timeout. The schema lives in named migrations (``migrator``) that are never edited once
/// released: a change is a new migration.
public struct AppDatabase: Sendable {
    /// The underlying GRDB connection(s). Prefer ``queue`` and ``library``.
    public let writer: any DatabaseWriter
    /// The database file, or `":memory:"`.
    public let path: String
    /// True when opened by ``openReadOnly(_:)``: every write fails.
    public let isReadOnly: Bool

    /// How long a connection waits for a lock held by another connection before failing.
    public static let busyTimeout: TimeInterval = 5

    /// Wraps `writer` and migrates it to the latest schema.
    ///
    /// - Important: create `writer` with ``makeConfiguration(readonly:)``.
    public init(_ writer: any DatabaseWriter) throws(StoreError) {
        let path = writer.path
        do {
            try Self.migrator.migrate(writer)
        } catch {
            throw StoreError.from(error, databasePath: path, consequence: "the database could not be prepared")
        }
        self.init(writer: writer, path: path, isReadOnly: false)
    }

    private init(writer: any DatabaseWriter, path: String, isReadOnly: Bool) {
        self.writer = writer
        self.path = path
        self.isReadOnly = isReadOnly
    }

    /// The scan queue in this database.
    public var queue: ScanQueue { ScanQueue(database: self) }

    /// The library (books) in this database.
    public var library: Library { Library(database: self) }

    // MARK: Opening

    /// Opens (creating and migrating when needed) the database of the daemon in `stateDirectory`.
    /// The directory must exist (``StateDirectory/create()``).
    public static func open(_ stateDirectory: StateDirectory) throws(StoreError) -> AppDatabase {
        let path = stateDirectory.databasePath
        let pool: DatabasePool
        do {
            pool = try DatabasePool(path: path, configuration: makeConfiguration(readonly: false))
            // GRDB switches the writer to WAL *after* prepareDatabase ran and sets
            // `synchronous = NORMAL` while doing so (Database.setUpWALMode): put FULL back.
            try pool.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA synchronous = FULL") }
        } catch {
            throw StoreError.from(error, databasePath: path, consequence: "the daemon cannot start")
        }
        return try AppDatabase(pool)
    }

    /// Opens the database in `stateDirectory` read-only, for CLI commands (`status`, `queue`,
    /// `library`, `export`) that run while the daemon holds the writer. They see every transaction
    /// the daemon committed before each read.
    ///
    /// Throws ``StoreError/databaseMissing(path:stateDirectory:)`` when the daemon never ran there,
    /// ``StoreError/databaseNotMigrated(path:)`` / ``StoreError/databaseTooNew(path:)`` when the
    /// schema does not match this build.
    public static func openReadOnly(_ stateDirectory: StateDirectory) throws(StoreError) -> AppDatabase {
        try openMigrated(stateDirectory, readonly: true, consequence: "nothing was read")
    }

    /// Opens the database in `stateDirectory` for a person's change (`swiftwing library edit`…),
    /// whether the daemon runs or not: a WAL connection beside the daemon's, each change one
    /// transaction that waits up to ``busyTimeout`` for the daemon's. It never migrates (a running
    /// daemon owns the schema), so it fails like ``openReadOnly(_:)`` when the schema does not match.
    /// Refused to root on a directory another user owns (``StateDirectory/checkWritableByThisUser(effectiveUID:)``).
    public static func openForChanges(_ stateDirectory: StateDirectory) throws(StoreError) -> AppDatabase {
        try stateDirectory.checkWritableByThisUser()
        return try openMigrated(stateDirectory, readonly: false, consequence: "nothing was changed")
    }

    /// A pool on an existing database whose schema is this build's, never migrating it.
    private static func openMigrated(
        _ stateDirectory: StateDirectory, readonly: Bool, consequence: String
    ) throws(StoreError) -> AppDatabase {
        let path = stateDirectory.databasePath
        guard FileOperations.exists(path) else {
            throw StoreError.databaseMissing(path: path, stateDirectory: stateDirectory.path)
        }
        let pool: DatabasePool
        do {
            pool = try DatabasePool(path: path, configuration: makeConfiguration(readonly: readonly))
            if !readonly {
                // As in ``open(_:)``: the pool's writer leaves WAL setup with `synchronous = NORMAL`.
                try pool.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA synchronous = FULL") }
            }
            let (complete, superseded) = try pool.read { db in
                (try migrator.hasCompletedMigrations(db), try migrator.hasBeenSuperseded(db))
            }
            if superseded { throw StoreError.databaseTooNew(path: path) }
            if !complete { throw StoreError.databaseNotMigrated(path: path) }
        } catch {
            throw StoreError.from(error, databasePath: path, consequence: consequence)
        }
        return AppDatabase(writer: pool, path: path, isReadOnly: readonly)
    }

    /// An empty, migrated database in memory, for tests and previews.
    public static func inMemory() throws(StoreError) -> AppDatabase {
        let queue: DatabaseQueue
        do {
            queue = try DatabaseQueue(configuration: makeConfiguration(readonly: false))
        } catch {
            throw StoreError.from(error, databasePath: ":memory:", consequence: "no database")
        }
        return try AppDatabase(queue)
    }

    /// The configuration of every SwiftWing connection: foreign keys on, `synchronous = FULL`,
    /// a busy timeout of ``busyTimeout`` seconds, statement arguments kept out of error messages
    /// (they may hold a job token).
    public static func makeConfiguration(readonly: Bool) -> Configuration {
        var config = Configuration()
        config.foreignKeysEnabled = true
        config.readonly = readonly
        config.busyMode = .timeout(busyTimeout)
        config.publicStatementArguments = false
        config.label = readonly ? "swiftwing.reader" : "swiftwing"
        config.prepareDatabase { db in
            // With NORMAL, WAL may lose the last transactions on power loss; a press the person
            // heard click must not be lost, so FULL on every connection. (The pool's writer needs
            // it again after GRDB enables WAL: see ``open(_:)``.)
            try db.execute(sql: "PRAGMA synchronous = FULL")
        }
        return config
    }

    // MARK: Access helpers

    func read<T>(_ consequence: String, _ body: (Database) throws -> T) throws(StoreError) -> T {
        do {
            return try writer.read(body)
        } catch {
            throw StoreError.from(error, databasePath: path, consequence: consequence)
        }
    }

    func write<T>(_ consequence: String, _ body: (Database) throws -> T) throws(StoreError) -> T {
        do {
            return try writer.write(body)
        } catch {
            throw StoreError.from(error, databasePath: path, consequence: consequence)
        }
    }
}
