import Foundation
import GRDB
import SwiftWingCore

#if canImport(Glibc)
    import Glibc
#endif

/// What the daemon did on start with a database that failed its check: where the old file went,
/// what was rebuilt from the spool and what could be read back from the old file.
///
/// Kept as `<state>/database-recovery.json` for `swiftwing status` and the panel, as long as the
/// old file is still where this says (a person deleting it is the acknowledgement).
public struct DatabaseRecovery: Codable, Hashable, Sendable, CustomStringConvertible {
    /// When the old database was moved aside.
    public var recoveredAt: Date
    /// What was wrong: `quick_check`'s first findings, or why SQLite could not open the file.
    public var problem: String
    /// The old database, as it was, beside the new one.
    public var movedTo: String
    /// Every file moved (the database and its `-wal`/`-shm` when they were there).
    public var movedFiles: [String]
    /// Scans queued again from the photos still in the spool.
    public var scansRequeued: Int
    /// Books read back from the old file (best effort: rows on damaged pages are lost from the new one).
    public var booksSalvaged: Int
    /// Why the salvage stopped early, when it did.
    public var salvageProblem: String?

    public var description: String {
        var text =
            "the database failed its check on start (\(problem)) and was rebuilt: the old file is kept at "
            + "\(movedTo); \(scansRequeued) scan\(scansRequeued == 1 ? "" : "s") still in the spool queued again, "
            + "\(booksSalvaged) book\(booksSalvaged == 1 ? "" : "s") read back from the old file (best effort"
        if let salvageProblem { text += ": \(salvageProblem)" }
        text += "). Delete the old file once nothing more is wanted from it"
        return text
    }

    /// Two lines for the panel.
    public var panelLines: (title: String, detail: String) {
        ("Database rebuilt", "\(scansRequeued) scans re-queued, \(booksSalvaged) books kept. Old file: \(movedTo)")
    }

    /// The note of the last recovery in `stateDirectory`, while its old file is still there.
    public static func current(in stateDirectory: StateDirectory) -> DatabaseRecovery? {
        guard let bytes = try? FileOperations.readFile(stateDirectory.recoveryNotePath, limit: 1 << 16),
            let note = try? JSONDecoder.recoveryNote.decode(DatabaseRecovery.self, from: Data(bytes)),
            FileOperations.exists(note.movedTo)
        else { return nil }
        return note
    }

    func save(in stateDirectory: StateDirectory) throws(StoreError) {
        let bytes = (try? JSONEncoder.recoveryNote.encode(self)) ?? Data()
        let path = stateDirectory.recoveryNotePath
        try stateDirectory.writeFileDurably(
            bytes, to: path, mode: 0o640, consequence: "the note of the rebuilt database was not saved")
    }
}

extension JSONEncoder {
    fileprivate static var recoveryNote: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        return encoder
    }
}

extension JSONDecoder {
    fileprivate static var recoveryNote: JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }
}

/// The daemon's database, opened on start: checked, rebuilt when damaged, and agreeing with the spool.
public struct StartedDatabase: Sendable {
    public var database: AppDatabase
    /// What reconciling the spool and the queue did.
    public var reconciliation: ReconciliationReport
    /// Set when the database failed its check and was rebuilt.
    public var recovery: DatabaseRecovery?
}

extension AppDatabase {
    /// How the daemon opens its database on start, holding the ``StateDirectoryLock``:
    ///
    /// 1. `PRAGMA quick_check` on the existing file. A file SQLite calls corrupt or not a database,
    ///    or an empty one, is moved aside with its `-wal` and `-shm`, as
    ///    `swiftwing.damaged-<UTC time>.sqlite`, never deleted; a new database is made.
    ///    Any other failure (permissions, a full or read-only disk, a lock) is thrown as before:
    ///    the file may be fine, so it is not touched.
    /// 2. The spool and the queue are reconciled: every photo still in the spool (the spool is the
    ///    journal of the presses) is queued again in a new database.
    /// 3. The books that can still be read from the old file are copied into the new one.
    public static func openForDaemon(_ stateDirectory: StateDirectory, now: Date = Date()) throws(StoreError)
        -> StartedDatabase
    {
        let path = stateDirectory.databasePath
        // A start that moved a damaged database aside and then failed (a full card, a lock) is finished
        // here: its books are salvaged and its note written, as if it had not been interrupted.
        let interrupted = PendingRecovery.load(in: stateDirectory)
        var damage: String?
        if FileOperations.exists(path) {
            // The interrupted start may have left an empty new file: it is that start's own, not a loss.
            damage = try checkIntegrity(path, emptyIsDamage: interrupted == nil)
        }
        var moved: (database: String, files: [String])?
        if let damage {
            moved = try moveAside(stateDirectory, now: now, problem: damage)
        } else if let interrupted {
            moved = (interrupted.movedTo, interrupted.movedFiles)
            damage = interrupted.problem
        }
        let database = try open(stateDirectory)
        let spool = SpoolDirectory(stateDirectory)
        guard let damage, let moved else {
            return StartedDatabase(database: database, reconciliation: try database.queue.reconcile(spool: spool))
        }
        let reconciliation = try database.queue.reconcile(
            spool: spool, now: now,
            orphanNote: "recovered on start: the database was damaged and rebuilt, this photo was still in the spool")
        let salvage = database.salvageBooks(from: moved.database)
        let recovery = DatabaseRecovery(
            recoveredAt: now, problem: damage, movedTo: moved.database, movedFiles: moved.files,
            scansRequeued: reconciliation.recoveredScans.count, booksSalvaged: salvage.books,
            salvageProblem: salvage.problem)
        try recovery.save(in: stateDirectory)
        PendingRecovery.finished(in: stateDirectory)
        return StartedDatabase(database: database, reconciliation: reconciliation, recovery: recovery)
    }

    /// Nil when the database at `path` passes `PRAGMA quick_check`; what is wrong when SQLite finds
    /// it damaged. Other failures are thrown.
    static func checkIntegrity(_ path: String, emptyIsDamage: Bool = true) throws(StoreError) -> String? {
        if emptyIsDamage, let info = try? FileOperations.status(path), info.st_size == 0 {
            // A database the daemon made always has its first page (WAL mode is recorded there), so
            // an empty file is one that lost its contents, and SQLite would silently start afresh.
            return "the file is empty"
        }
        do {
            // A plain connection: no WAL switch and no migration before the check.
            var configuration = Configuration()
            configuration.busyMode = .timeout(busyTimeout)
            configuration.label = "swiftwing.check"
            let connection = try DatabaseQueue(path: path, configuration: configuration)
            defer { try? connection.close() }
            let findings = try connection.read { db in try String.fetchAll(db, sql: "PRAGMA quick_check(5)") }
            if findings == ["ok"] { return nil }
            return findings.isEmpty ? "quick_check returned nothing" : findings.joined(separator: "; ")
        } catch let error as DatabaseError
            where error.resultCode == .SQLITE_CORRUPT
            || error.resultCode == .SQLITE_NOTADB
        {
            return error.message ?? "\(error.resultCode)"
        } catch {
            throw StoreError.from(error, databasePath: path, consequence: "the daemon cannot start")
        }
    }

    /// Renames the database and its `-wal`/`-shm` to `swiftwing.damaged-<time>.sqlite[-wal|-shm]`
    /// (kept together, so SQLite still finds the WAL beside the old file), durably.
    private static func moveAside(
        _ stateDirectory: StateDirectory, now: Date, problem: String
    ) throws(StoreError) -> (database: String, files: [String]) {
        let stamp = Self.compactStamp(now)
        var base = stateDirectory.path + "/swiftwing.damaged-\(stamp).sqlite"
        var attempt = 1
        while FileOperations.exists(base) || FileOperations.exists(base + "-wal") {
            attempt += 1
            base = stateDirectory.path + "/swiftwing.damaged-\(stamp)-\(attempt).sqlite"
        }
        let suffixes = ["", "-wal", "-shm"].filter { FileOperations.exists(stateDirectory.databasePath + $0) }
        // Said before it is done: a start that fails after the move (a full card, a lock) leaves the next
        // one this note, to salvage the old file's books then. No note written, nothing moved.
        try PendingRecovery(problem: problem, movedTo: base, movedFiles: suffixes.map { base + $0 })
            .save(in: stateDirectory)
        var moved: [String] = []
        do {
            for suffix in suffixes {
                try FileOperations.rename(stateDirectory.databasePath + suffix, to: base + suffix)
                moved.append(base + suffix)
            }
            try FileOperations.fsyncDirectory(stateDirectory.path)
        } catch {
            throw StoreError.fileSystem(
                error, directory: stateDirectory.path,
                consequence: "the damaged database (\(problem)) could not be moved aside, so the daemon cannot start")
        }
        return (base, moved)
    }

    /// Copies the books still readable in the damaged database at `path` into this one: rows are read
    /// in id order up to the first damaged page, then backwards from the last id down to it. A row
    /// the new schema refuses, or whose scan is not in this database (its link is dropped), is
    /// handled row by row. Never throws: whatever cannot be read is named in `problem`.
    func salvageBooks(from path: String) -> (books: Int, problem: String?) {
        var problems: [String] = []
        var rows: [Int64: Row] = [:]
        var oldColumns: [String] = []
        let old: DatabaseQueue
        do {
            var configuration = Configuration()
            configuration.readonly = true
            configuration.label = "swiftwing.salvage"
            old = try DatabaseQueue(path: path, configuration: configuration)
            oldColumns = try old.read { db in try db.columns(in: "book").map(\.name) }
        } catch {
            return (0, "no book could be read: \(Self.describe(error))")
        }
        defer { try? old.close() }
        // Each direction in a read of its own: a read that met a damaged page ends with its error.
        for order in ["ASC", "DESC"] {
            do {
                try old.read { db in
                    let cursor = try Row.fetchCursor(db, sql: "SELECT * FROM book ORDER BY id \(order)")
                    while let row = try cursor.next() {
                        let id: Int64 = row["id"]
                        if rows[id] != nil { break }
                        rows[id] = row.copy()
                    }
                }
            } catch {
                if problems.isEmpty { problems.append("the book table is damaged: \(Self.describe(error))") }
            }
        }
        var copied = 0
        var refused = 0
        do {
            try writer.write { db in
                let newColumns = Set(try db.columns(in: "book").map(\.name))
                let generated = ["needsReview"]
                let columns = oldColumns.filter { newColumns.contains($0) && !generated.contains($0) }
                let names = columns.map(\.quotedDatabaseIdentifier).joined(separator: ", ")
                let marks = Array(repeating: "?", count: columns.count).joined(separator: ", ")
                let insert = try db.makeStatement(sql: "INSERT OR IGNORE INTO book (\(names)) VALUES (\(marks))")
                let scanExists = try db.makeStatement(sql: "SELECT 1 FROM scan WHERE id = ?")
                for id in rows.keys.sorted() {
                    guard let row = rows[id] else { continue }
                    var values = columns.map { row[$0] as DatabaseValue }
                    if let scanColumn = columns.firstIndex(of: "scanId"), !values[scanColumn].isNull,
                        try Bool.fetchOne(scanExists, arguments: [values[scanColumn]]) != true
                    {
                        values[scanColumn] = .null
                    }
                    do {
                        try insert.execute(arguments: StatementArguments(values))
                        if db.changesCount > 0 { copied += 1 } else { refused += 1 }
                    } catch {
                        refused += 1
                    }
                }
            }
        } catch {
            return (0, "the books read could not be written: \(Self.describe(error))")
        }
        if refused > 0 { problems.append("\(refused) book row(s) read but refused by the new database") }
        return (copied, problems.isEmpty ? nil : problems.joined(separator: "; "))
    }

    /// `20261126T002815Z`: sortable, and safe in a file name.
    static func compactStamp(_ date: Date) -> String {
        let parts = UTCDateParts(date)
        return UTCDateParts.pad(parts.year, 4) + UTCDateParts.pad(parts.month) + UTCDateParts.pad(parts.day) + "T"
            + UTCDateParts.pad(parts.hour) + UTCDateParts.pad(parts.minute) + UTCDateParts.pad(parts.second) + "Z"
    }

    private static func describe(_ error: any Error) -> String {
        (error as? DatabaseError)?.message ?? "\(error)"
    }
}

/// A damaged database being moved aside: written (durably) before the move and removed once the
/// rebuilt database's note is saved, so a start interrupted in between (the new database could not be
/// made: a full card, a lock) is finished by the next one instead of leaving the old file's books behind.
/// Kept as `<state>/database-recovery.pending.json`.
struct PendingRecovery: Codable, Equatable, Sendable {
    var problem: String
    var movedTo: String
    var movedFiles: [String]

    static func path(in stateDirectory: StateDirectory) -> String {
        stateDirectory.path + "/database-recovery.pending.json"
    }

    /// The note of an interrupted recovery whose old database was moved; nil when there is none. A note
    /// whose move never happened (the start stopped between the two) is dropped: the damaged file is
    /// still in place and is found again.
    static func load(in stateDirectory: StateDirectory) -> PendingRecovery? {
        let path = path(in: stateDirectory)
        guard let bytes = try? FileOperations.readFile(path, limit: 1 << 16) else { return nil }
        guard let note = try? JSONDecoder().decode(PendingRecovery.self, from: Data(bytes)),
            FileOperations.exists(note.movedTo)
        else {
            finished(in: stateDirectory)
            return nil
        }
        return note
    }

    func save(in stateDirectory: StateDirectory) throws(StoreError) {
        let bytes = (try? JSONEncoder().encode(self)) ?? Data()
        let path = Self.path(in: stateDirectory)
        try stateDirectory.writeFileDurably(
            bytes, to: path, mode: 0o640,
            consequence: "the damaged database (\(problem)) was left in place, not moved aside yet")
    }

    /// Removes the note (only the note: the old database stays where it was moved).
    static func finished(in stateDirectory: StateDirectory) {
        try? FileOperations.unlink(path(in: stateDirectory))
    }
}
