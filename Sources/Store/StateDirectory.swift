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

    public var description: String { path }

    /// Creates the state directory, the spool and the quarantine folder when missing (mode 0750).
    /// The daemon calls this on start, before taking the lock; the CLI never does.
    public func create() throws(StoreError) {
        for directory in [path, spoolPath, quarantinePath] {
            do {
                try FileOperations.makeDirectory(directory, mode: 0o750)
            } catch {
                throw StoreError.fileSystem(error, directory: directory, consequence: "the daemon cannot start")
            }
        }
    }
}
