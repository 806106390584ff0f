import Foundation
import SwiftWingCore

#if canImport(Glibc)
    import Glibc
#endif

/// Where the daemon keeps its state (`/var/lib/swiftwing` on a device) and the names inside it:
///
/// ```
/// <state>/swiftwing.sqlite (+ -wal, -shm)   the database: scan queue and library
/// <state>/spool/<scan id>.jpg               photos waiting for upload (and <id>.thumb.jpg)
/// <state>/spool/quarantine/                 spool files that failed validation on start
/// <state>/device-id                         the persistent device UUID (X-Device-ID)
/// <state>/swiftwing.lock                    flock held by the running daemon, holds its PID
/// <state>/swiftwing.damaged-<time>.sqlite   a database that failed its check on start, kept
/// <state>/database-recovery.json            what that start did (``DatabaseRecovery``)
/// <state>/database-recovery.pending.json    a move aside under way, for a start that is interrupted
/// <state>/device-id.damaged-<time>          a device id that held no UUID, kept
/// ```
public struct StateDirectory: Hashable, Sendable, CustomStringConvertible {
    /// The directory on a device.
    public static let defaultPath = "/var/lib/swiftwing"

    public var path: String

    public init(path: String = StateDirectory.defaultPath) {
        var path = path
        while path.count > 1 && path.hasSuffix("/") { path.removeLast() }
        self.path = path
    }

    public var databasePath: String { path + "/swiftwing.sqlite" }
    public var spoolPath: String { path + "/spool" }
    public var quarantinePath: String { spoolPath + "/quarantine" }
    public var deviceIDPath: String { path + "/device-id" }
    public var lockPath: String { path + "/swiftwing.lock" }
    public var recoveryNotePath: String { path + "/database-recovery.json" }

    public var description: String { path }

    /// Creates the state directory, the spool and the quarantine folder when missing (mode 0750).
    /// The daemon calls this on start, before taking the lock; the CLI never does.
    /// Refused to root on a directory another user owns (``checkWritableByThisUser()``).
    public func create() throws(StoreError) {
        try checkWritableByThisUser()
        for directory in [path, spoolPath, quarantinePath] {
            do {
                try FileOperations.makeDirectory(directory, mode: 0o750)
            } catch {
                throw StoreError.fileSystem(error, directory: directory, consequence: "the daemon cannot start")
            }
        }
    }

    /// Refuses root (effective uid 0) a state directory that exists and belongs to another user:
    /// the lock file, database journal and spool files root made there would belong to root, and the
    /// daemon, which runs as the directory's owner, could not write them afterwards. Every command
    /// that changes the directory calls this first (through ``create()``, ``StateDirectoryLock`` and
    /// ``AppDatabase/openForChanges(_:)``). The corresponding C functions are `geteuid` and `lstat`.
    public func checkWritableByThisUser(effectiveUID: uid_t = geteuid()) throws(StoreError) {
        guard effectiveUID == 0 else { return }
        var info = stat()
        guard lstat(path, &info) == 0, info.st_uid != 0 else { return }
        throw StoreError.stateDirectoryOwnedByAnotherUser(
            directory: path, ownerName: Self.userName(info.st_uid), ownerUID: info.st_uid)
    }

    /// The user's name from the password database, if it has one.
    static func userName(_ uid: uid_t) -> String? {
        var entry = passwd()
        var result: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 4096)
        guard getpwuid_r(uid, &entry, &buffer, buffer.count, &result) == 0, let result,
            let name = result.pointee.pw_name
        else { return nil }
        return String(cString: name)
    }
}

extension StateDirectory {
    /// Writes `bytes` to `path` durably (a temporary file beside it, synced, renamed, the folder synced) with `mode`;
    /// a failure is a ``StoreError`` that says `consequence`. For the small files the daemon keeps beside its
    /// database: the device id, the recovery notes.
    func writeFileDurably(_ bytes: some ContiguousBytes, to path: String, mode: mode_t, consequence: String)
        throws(StoreError)
    {
        let failure: SystemCallError? = bytes.withUnsafeBytes { raw in
            do throws(SystemCallError) {
                try FileOperations.writeDurably(
                    raw, to: path, temporaryPath: path + ".tmp." + FileOperations.randomSuffix(), mode: mode)
                return nil
            } catch {
                return error
            }
        }
        if let failure { throw StoreError.fileSystem(failure, directory: self.path, consequence: consequence) }
    }
}
