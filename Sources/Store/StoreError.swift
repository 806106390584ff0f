import Foundation
import GRDB
import SwiftWingCore

#if canImport(Glibc)
    import Glibc
#endif

/// Everything that can go wrong in the Store, each case worded as advice: what happened, to which
/// file or directory, what to do about it, and what it means for the scan in hand.
///
/// The daemon logs ``description`` as is and shows a short form on the panel; the CLI prints it.
public enum StoreError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file system holding `directory` is full (`ENOSPC` or `EDQUOT`, or SQLite's `SQLITE_FULL`).
    case noSpace(directory: String, consequence: String)
    /// Fewer bytes are free under `directory` than the daemon asks for before it accepts a press.
    case lowSpace(directory: String, availableBytes: Int64, requiredBytes: Int64)
    /// The file system holding `directory` is mounted read-only (`EROFS`, `SQLITE_READONLY`).
    case readOnlyFileSystem(directory: String, consequence: String)
    /// The process may not create or change `path` (`EACCES`/`EPERM`).
    case permissionDenied(path: String, consequence: String)
    /// Another system call failure (`EIO` and friends), with the call, path and errno.
    case systemCall(SystemCallError, consequence: String)

    /// The read-only opener found no database: the daemon never ran with this state directory.
    case databaseMissing(path: String, stateDirectory: String)
    /// The database was written by a newer SwiftWing (it has migrations this build does not know).
    case databaseTooNew(path: String)
    /// The database lacks migrations this build needs and was opened read-only, so it cannot migrate.
    case databaseNotMigrated(path: String)
    /// SQLite says the file is not a database or is damaged.
    case databaseCorrupt(path: String, message: String)
    /// Another connection held a lock longer than the busy timeout.
    case databaseBusy(path: String)
    /// A write broke an invariant of the schema (CHECK, NOT NULL, UNIQUE, foreign key, trigger).
    case constraintViolated(message: String)
    /// Any other SQLite error: its result code and message.
    case database(path: String, code: Int32, message: String)

    /// No scan has this id.
    case scanNotFound(UUID)
    /// The requested change is not allowed from the scan's current state.
    case invalidTransition(id: UUID, from: ScanState, to: ScanState)
    /// The scan is `done`: its books are in the library and nothing more can happen to it.
    case scanAlreadyDone(UUID)
    /// Not a scan id (a UUID).
    case invalidScanID(String)
    /// A person discarded the scan; it can no longer be retried.
    case scanDiscarded(UUID)
    /// Only failed scans can be retried by hand; this one is in `state`.
    case notRetryable(id: UUID, state: ScanState)

    /// No book has this row id.
    case bookNotFound(Int64)
    /// Another book already has this ISBN-13 (the library holds each ISBN once).
    case isbnTaken(isbn13: String, bookID: Int64)

    /// `<state>/device-id` exists but does not hold a UUID (or cannot be read).
    case deviceIdentityUnreadable(path: String, reason: String)
    /// Another process holds `<state>/swiftwing.lock`.
    case stateDirectoryLocked(directory: String, holderPID: Int32?)
    /// Root was about to change a state directory another user owns (files it would leave there
    /// would belong to root, and the daemon, running as that user, could not change them).
    case stateDirectoryOwnedByAnotherUser(directory: String, ownerName: String?, ownerUID: UInt32)

    public var description: String {
        switch self {
        case .noSpace(let directory, let consequence):
            return "\(directory) is full (no space left on its file system, ENOSPC): free space there or move the "
                + "state directory to a larger disk; \(consequence)"
        case .lowSpace(let directory, let available, let required):
            return "only \(Self.megabytes(available)) free under \(directory), below the \(Self.megabytes(required)) "
                + "the daemon keeps in reserve: free space there or move the state directory to a larger disk; "
                + "new presses are refused until then"
        case .readOnlyFileSystem(let directory, let consequence):
            return "\(directory) is on a read-only file system (EROFS): remount it read-write (an SD card with errors "
                + "is remounted read-only by the kernel: check `dmesg`); \(consequence)"
        case .permissionDenied(let path, let consequence):
            return "permission denied on \(path): the daemon's user must own the state directory "
                + "(e.g. `chown -R swiftwing: /var/lib/swiftwing`); \(consequence)"
        case .systemCall(let error, let consequence):
            return "\(error.description); \(consequence)"
        case .databaseMissing(let path, let stateDirectory):
            return "no database at \(path): the daemon has not run with the state directory \(stateDirectory) yet; "
                + "start it once (`systemctl start swiftwing` or `swiftwing run`) or pass the right --state-dir"
        case .databaseTooNew(let path):
            return "\(path) was written by a newer SwiftWing: install that version again (downgrades cannot read it)"
        case .databaseNotMigrated(let path):
            return "\(path) is older than this SwiftWing: start the daemon once so it migrates the database, "
                + "then retry"
        case .databaseCorrupt(let path, let message):
            return "\(path) is damaged (\(message)): stop the daemon, move the file aside (keep it for recovery) "
                + "and start again with an empty database; the spool images are re-queued on start"
        case .databaseBusy(let path):
            return "\(path) stayed locked by another process past the busy timeout: retry; if it persists, look for "
                + "a stuck `sqlite3` shell or a second daemon"
        case .constraintViolated(let message):
            return "the database refused the change (\(message)): this is a bug in the caller, please report it"
        case .database(let path, let code, let message):
            return "SQLite error \(code) on \(path): \(message)"
        case .scanNotFound(let id):
            return "no scan with id \(id.uuidString.lowercased()): list scans with `swiftwing queue`"
        case .invalidTransition(let id, let from, let to):
            return "scan \(id.uuidString.lowercased()) is \(from.rawValue) and cannot become \(to.rawValue)"
        case .scanAlreadyDone(let id):
            return "scan \(id.uuidString.lowercased()) is already done: its books are in the library; nothing to change"
        case .invalidScanID(let text):
            return "\"\(text)\" is not a scan id: copy one from `swiftwing queue` (a UUID)"
        case .scanDiscarded(let id):
            return "scan \(id.uuidString.lowercased()) was discarded: it cannot be retried"
        case .notRetryable(let id, let state):
            return "scan \(id.uuidString.lowercased()) is \(state.rawValue), not failed: "
                + (state == .done
                    ? "its books are already in the library" : "it is still in the queue and is retried on its own")
        case .bookNotFound(let id):
            return "no book with id \(id): list the books with `swiftwing library` (the id is the first column)"
        case .isbnTaken(let isbn13, let bookID):
            return "book \(bookID) already has ISBN \(isbn13): check that one (`swiftwing library show \(bookID)`), "
                + "then delete the duplicate (`swiftwing library delete ID`) or give a different ISBN"
        case .deviceIdentityUnreadable(let path, let reason):
            return "\(path) does not hold a device id (\(reason)): the backend knows this device by that id, so it "
                + "is not replaced silently; restore the file from a backup, or delete it to make the device a new one"
        case .stateDirectoryOwnedByAnotherUser(let directory, let name, let uid):
            let owner = name.map { "\($0) (uid \(uid))" } ?? "uid \(uid)"
            return "\(directory) belongs to \(owner), and this command runs as root: files it made there would belong "
                + "to root, and the daemon (running as \(name ?? "uid \(uid)")) could not change them. Run the command "
                + "as that user (`sudo -u \(name ?? "#\(uid)") swiftwing …`), or give root its own --state-dir"
        case .stateDirectoryLocked(let directory, let pid):
            let holder = pid.map { "process \($0)" } ?? "another process"
            return "\(directory) is in use by \(holder) (another swiftwing daemon?): stop it "
                + "(`systemctl stop swiftwing`) or give this one its own --state-dir"
        }
    }

    /// The file system is full: the daemon shows its "disk full" pattern rather than a generic error.
    public var isNoSpace: Bool {
        switch self {
        case .noSpace, .lowSpace: true
        default: false
        }
    }

    static func megabytes(_ bytes: Int64) -> String {
        "\(bytes / 1_000_000) MB"
    }

    /// Classifies a failed system call on a file under `directory`.
    static func fileSystem(_ error: SystemCallError, directory: String, consequence: String) -> StoreError {
        switch error.errno {
        case ENOSPC, EDQUOT: .noSpace(directory: directory, consequence: consequence)
        case EROFS: .readOnlyFileSystem(directory: directory, consequence: consequence)
        case EACCES, EPERM:
            .permissionDenied(path: error.subject.isEmpty ? directory : error.subject, consequence: consequence)
        default: .systemCall(error, consequence: consequence)
        }
    }

    /// Maps an error thrown by GRDB (or by Store code inside a GRDB closure) to a ``StoreError``.
    static func from(_ error: any Error, databasePath path: String, consequence: String) -> StoreError {
        if let error = error as? StoreError { return error }
        guard let error = error as? DatabaseError else {
            return .database(path: path, code: -1, message: String(describing: error))
        }
        let directory = (path as NSString).deletingLastPathComponent
        let message = error.message ?? "\(error.resultCode)"
        switch error.resultCode {
        case .SQLITE_FULL:
            return .noSpace(directory: directory, consequence: consequence)
        case .SQLITE_READONLY:
            return .readOnlyFileSystem(directory: directory, consequence: consequence)
        case .SQLITE_PERM, .SQLITE_AUTH:
            return .permissionDenied(path: path, consequence: consequence)
        case .SQLITE_CONSTRAINT:
            return .constraintViolated(message: message)
        case .SQLITE_BUSY, .SQLITE_LOCKED:
            return .databaseBusy(path: path)
        case .SQLITE_CORRUPT, .SQLITE_NOTADB:
            return .databaseCorrupt(path: path, message: message)
        default:
            return .database(path: path, code: error.resultCode.rawValue, message: message)
        }
    }
}
