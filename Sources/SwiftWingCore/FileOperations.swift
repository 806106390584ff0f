// Thin wrappers over the libc file calls (the Store's durable writes, whole-file reads), one per
// call, each throwing SystemCallError with the path it acted on. EINTR is retried everywhere except
// `close`.
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

public enum FileOperations {
    /// The corresponding C function is `open`.
    public static func open(_ path: String, _ flags: Int32, mode: mode_t = 0) throws(SystemCallError) -> Int32 {
        try retryingOnInterrupt("open", subject: path) { Glibc.open(path, flags, mode) }
    }

    /// Closes `fd`, reporting a deferred write error (NFS, some FUSE file systems report them here).
    /// Never retried: on Linux the descriptor is gone even when `close` returns `EINTR`.
    /// The corresponding C function is `close`.
    public static func close(_ fd: Int32, path: String) throws(SystemCallError) {
        if Glibc.close(fd) == -1 {
            let code = errno
            if code != EINTR { throw SystemCallError("close", subject: path, errno: code) }
        }
    }

    /// Writes every byte, looping over short writes. The corresponding C function is `write`.
    public static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, path: String) throws(SystemCallError) {
        var offset = 0
        while offset < bytes.count {
            let remaining = bytes.count - offset
            let written = try retryingOnInterrupt("write", subject: path) {
                Glibc.write(fd, bytes.baseAddress! + offset, remaining)
            }
            offset += written
        }
    }

    /// Reads the file at `path` from its start: all of it, or its first `limit` bytes.
    /// The corresponding C functions are `open`, `fstat` and `read`.
    public static func readFile(_ path: String, limit: Int = .max) throws(SystemCallError) -> [UInt8] {
        let fd = try open(path, O_RDONLY | O_CLOEXEC)
        defer { _ = Glibc.close(fd) }
        var info = stat()
        _ = try retryingOnInterrupt("fstat", subject: path) { fstat(fd, &info) }
        // Sized by fstat, so a photo is one read; what a growing file gains meanwhile is read in chunks after it.
        var result = [UInt8](repeating: 0, count: min(max(Int(info.st_size), 0), limit))
        var filled = 0
        while filled < result.count {
            let wanted = result.count - filled
            let count = try retryingOnInterrupt("read", subject: path) {
                result.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + filled, wanted) }
            }
            if count == 0 { break }  // it shrank
            filled += count
        }
        result.removeLast(result.count - filled)
        var chunk = [UInt8](repeating: 0, count: min(64 << 10, limit - result.count))
        while result.count < limit {
            let wanted = min(chunk.count, limit - result.count)
            let count = try retryingOnInterrupt("read", subject: path) {
                chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress!, wanted) }
            }
            if count == 0 { break }
            result.append(contentsOf: chunk[0..<count])
        }
        return result
    }

    /// Reads `count` bytes at `offset` (fewer at the end of the file). The corresponding C function is `pread`.
    public static func read(
        _ fd: Int32, count: Int, at offset: Int64, path: String
    ) throws(SystemCallError) -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: count)
        let got = try retryingOnInterrupt("pread", subject: path) {
            buffer.withUnsafeMutableBytes { Glibc.pread(fd, $0.baseAddress!, count, off_t(offset)) }
        }
        return Array(buffer[0..<got])
    }

    /// The corresponding C function is `fsync`.
    public static func fsync(_ fd: Int32, path: String) throws(SystemCallError) {
        _ = try retryingOnInterrupt("fsync", subject: path) { Glibc.fsync(fd) }
    }

    /// Makes a directory's entries (a rename, an unlink) durable. The corresponding C function is `fsync`.
    public static func fsyncDirectory(_ path: String) throws(SystemCallError) {
        let fd = try open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        defer { _ = Glibc.close(fd) }
        try fsync(fd, path: path)
    }

    /// The corresponding C function is `fchmod`.
    public static func fchmod(_ fd: Int32, _ mode: mode_t, path: String) throws(SystemCallError) {
        _ = try retryingOnInterrupt("fchmod", subject: path) { Glibc.fchmod(fd, mode) }
    }

    /// The corresponding C function is `rename`.
    public static func rename(_ from: String, to: String) throws(SystemCallError) {
        _ = try retryingOnInterrupt("rename", subject: "\(from) to \(to)") { Glibc.rename(from, to) }
    }

    /// Removes a file; a file that is already gone is not an error. The corresponding C function is `unlink`.
    public static func unlink(_ path: String) throws(SystemCallError) {
        if Glibc.unlink(path) == -1 {
            let code = errno
            if code != ENOENT { throw SystemCallError("unlink", subject: path, errno: code) }
        }
    }

    /// Creates a directory; an existing directory is fine. The corresponding C function is `mkdir`.
    public static func makeDirectory(_ path: String, mode: mode_t) throws(SystemCallError) {
        if Glibc.mkdir(path, mode) == -1 {
            let code = errno
            if code == EEXIST, isDirectory(path) { return }
            throw SystemCallError("mkdir", subject: path, errno: code)
        }
    }

    /// The corresponding C function is `stat`.
    public static func status(_ path: String) throws(SystemCallError) -> stat {
        var info = stat()
        _ = try retryingOnInterrupt("stat", subject: path) { stat(path, &info) }
        return info
    }

    public static func exists(_ path: String) -> Bool {
        access(path, F_OK) == 0
    }

    public static func isDirectory(_ path: String) -> Bool {
        guard let info = try? status(path) else { return false }
        return (info.st_mode & S_IFMT) == S_IFDIR
    }

    /// The names in a directory, without `.` and `..`. The corresponding C function is `readdir`.
    public static func directoryEntries(_ path: String) throws(SystemCallError) -> [String] {
        guard let dir = opendir(path) else { throw SystemCallError("opendir", subject: path, errno: errno) }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    /// Writes `bytes` to `path` so that after a crash the file holds either nothing or all of `bytes`:
    /// a temporary file in the same directory (`O_CREAT|O_EXCL|O_CLOEXEC`, `mode`) → full write →
    /// `fsync` → `rename` → `fsync` of the directory. On any failure no temporary file remains, and
    /// `path` is left as it was (or absent).
    public static func writeDurably(
        _ bytes: UnsafeRawBufferPointer, to path: String, temporaryPath: String, mode: mode_t
    ) throws(SystemCallError) {
        let directory = parentDirectory(of: path)
        let fd = try open(temporaryPath, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode: mode)
        var open = true
        do throws(SystemCallError) {
            try fchmod(fd, mode, path: temporaryPath)  // the umask must not widen or narrow it
            try writeAll(fd, bytes, path: temporaryPath)
            try fsync(fd, path: temporaryPath)
            open = false
            try close(fd, path: temporaryPath)
            try rename(temporaryPath, to: path)
        } catch {
            if open { _ = Glibc.close(fd) }
            _ = Glibc.unlink(temporaryPath)
            throw error
        }
        do throws(SystemCallError) {
            try fsyncDirectory(directory)
        } catch {
            // The rename may not survive a power cut: take the file back so the caller sees one clear failure.
            _ = Glibc.unlink(path)
            throw error
        }
    }

    public static func parentDirectory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    /// A short random hex string for temporary file names.
    public static func randomSuffix() -> String {
        String(UInt64.random(in: 0...UInt64.max), radix: 16)
    }
}
