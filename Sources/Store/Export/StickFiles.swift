import SwiftWingCore

#if canImport(Glibc)
    import Glibc
#endif

/// The export's files in one folder of a stick, replaced as a set. Every new file is written under a
/// temporary name and fsynced first; only then are the previous files of the same names moved aside,
/// the new ones renamed into place and the folder fsynced, and the previous ones removed. A failure
/// at any step removes the new files and puts the previous ones back, so the folder holds the
/// previous complete set or the new complete set, never one file of each.
///
/// (A power cut between the renames and the folder's fsync can still leave the previous files under
/// their hidden `.NAME.previous-…` names: a FAT file system has no way to rename two files at once.)
struct StickFiles {
    struct File: Sendable {
        var name: String
        var bytes: [UInt8]
    }

    var directory: String
    /// Writes a file's bytes (``FileOperations/writeAll(_:_:path:)``; tests make it fail).
    var writeAll: (Int32, UnsafeRawBufferPointer, String) throws(SystemCallError) -> Void = FileOperations.writeAll

    func replace(_ files: [File]) throws(SystemCallError) {
        var temporaries: [String] = []
        do throws(SystemCallError) {
            for file in files {
                let path = hiddenPath(file.name, "partial")
                temporaries.append(path)
                try write(file.bytes, to: path)
            }
        } catch {
            for path in temporaries { _ = Glibc.unlink(path) }
            throw error
        }
        var moves: [(final: String, previous: String?)] = []
        do throws(SystemCallError) {
            for (file, temporary) in zip(files, temporaries) {
                let final = directory + "/" + file.name
                var previous: String?
                if FileOperations.exists(final) {
                    let aside = hiddenPath(file.name, "previous")
                    try FileOperations.rename(final, to: aside)
                    previous = aside
                }
                moves.append((final, previous))
                try FileOperations.rename(temporary, to: final)
            }
            try FileOperations.fsyncDirectory(directory)
        } catch {
            for move in moves.reversed() {
                if let previous = move.previous {
                    _ = Glibc.rename(previous, move.final)
                } else {
                    _ = Glibc.unlink(move.final)
                }
            }
            for path in temporaries { _ = Glibc.unlink(path) }
            try? FileOperations.fsyncDirectory(directory)
            throw error
        }
        // The new set is durable; the previous files are no longer needed.
        for case (_, let previous?) in moves { _ = Glibc.unlink(previous) }
        try? FileOperations.fsyncDirectory(directory)
    }

    /// `bytes` into a new file at `path` (mode 0644), fsynced and closed.
    private func write(_ bytes: [UInt8], to path: String) throws(SystemCallError) {
        let fd = try FileOperations.open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode: 0o644)
        do throws(SystemCallError) {
            try FileOperations.fchmod(fd, 0o644, path: path)  // the umask must not widen or narrow it
            var failure: SystemCallError?
            bytes.withUnsafeBytes { buffer in
                do throws(SystemCallError) { try writeAll(fd, buffer, path) } catch { failure = error }
            }
            if let failure { throw failure }
            try FileOperations.fsync(fd, path: path)
        } catch {
            _ = Glibc.close(fd)
            throw error
        }
        try FileOperations.close(fd, path: path)
    }

    /// `dir/.name.<role>-<random>`: hidden, and never a final name.
    private func hiddenPath(_ name: String, _ role: String) -> String {
        "\(directory)/.\(name).\(role)-\(FileOperations.randomSuffix())"
    }
}
