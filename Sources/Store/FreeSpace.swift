import SwiftWingCore

#if canImport(Glibc)
    import Glibc
#endif

/// Free space on the file system of the state directory, so the daemon can refuse a press early
/// (with the "disk full" pattern) instead of failing halfway through writing it.
public enum FreeSpace {
    /// A reserve that keeps room for a few photos, the WAL and the journal: 50 MB.
    public static let defaultReserveBytes: Int64 = 50_000_000

    /// Bytes available to an unprivileged process on the file system holding `path`.
    /// The corresponding C function is `statvfs`.
    public static func availableBytes(at path: String) throws(StoreError) -> Int64 {
        var info = statvfs()
        do {
            _ = try retryingOnInterrupt("statvfs", subject: path) { statvfs(path, &info) }
        } catch {
            throw StoreError.fileSystem(error, directory: path, consequence: "free space is unknown")
        }
        return bytes(blocks: UInt64(info.f_bavail), blockSize: UInt64(info.f_frsize))
    }

    /// `blocks * blockSize` as `statvfs` reports them, at most `Int64.max`: a file system (a stick's
    /// crafted superblock, a FUSE server) may report any counts, and they must not trap the process.
    public static func bytes(blocks: UInt64, blockSize: UInt64) -> Int64 {
        let (product, overflow) = blocks.multipliedReportingOverflow(by: blockSize)
        return overflow || product > UInt64(Int64.max) ? .max : Int64(product)
    }

    /// Throws ``StoreError/lowSpace(directory:availableBytes:requiredBytes:)`` when fewer than
    /// `bytes` are available under the state directory.
    public static func require(
        _ bytes: Int64 = defaultReserveBytes, in stateDirectory: StateDirectory
    ) throws(StoreError) {
        let available = try availableBytes(at: stateDirectory.path)
        if available < bytes {
            throw StoreError.lowSpace(directory: stateDirectory.path, availableBytes: available, requiredBytes: bytes)
        }
    }
}
