import Foundation
import SwiftWingCore

#if canImport(Glibc)
    import Glibc
#endif

/// What an export to a stick wrote.
public struct StickExportResult: Sendable, Equatable {
    public var books: Int
    /// The file names on the stick, in its top folder.
    public var files: [String]
}

/// The library onto a USB stick: mount the stick privately with the one file system udev found on
/// it (`nosuid,nodev,noexec,nosymfollow`; ext4 with `errors=remount-ro`), write the files
/// (``StickFiles``), unmount.
///
/// Nothing on the stick is ever run or read: the only paths touched are the export's own files.
/// The CSV is made before the stick is mounted, so the stick is mounted only while it is written.
public struct StickExport: Sendable {
    /// The block device, e.g. `/dev/sda1`.
    public var device: String
    /// Where the mount point is made (the unit's RuntimeDirectory).
    public var workDirectory: String
    public var formats: [ExportFormat]
    /// `YYYY-MM-DD` for the file names.
    public var day: String
    /// The owner of the files on vfat/exFAT, which have no owners of their own.
    public var owner: (uid: uid_t, gid: gid_t)
    /// udev's database, where the file system type comes from.
    public var udevDatabase = "/run/udev/data"

    public init(
        device: String, workDirectory: String, formats: [ExportFormat], day: String,
        owner: (uid: uid_t, gid: gid_t) = (getuid(), getgid())
    ) {
        self.device = device
        self.workDirectory = workDirectory
        self.formats = formats
        self.day = day
        self.owner = owner
    }

    /// The device's kernel name, `sda1`.
    public var kernelName: String { device.split(separator: "/").last.map(String.init) ?? device }

    public var mountPoint: String { workDirectory + "/stick" }

    /// Writes the library in each of ``formats`` and, when the device read any spine it did not identify, those
    /// spines as their own file (``SpinesCSV``): nothing read is left off the stick.
    public func run(books: [BookRecord], spines: [SpineToCheck] = []) throws(ExportError) -> StickExportResult {
        var files: [StickFiles.File] = []
        for format in formats {
            files.append(
                StickFiles.File(name: format.fileName(day: day), bytes: LibraryCSV.encode(books, format: format)))
        }
        if !spines.isEmpty {
            files.append(StickFiles.File(name: SpinesCSV.fileName(day: day), bytes: SpinesCSV.encode(spines)))
        }
        try checkDevice()
        let fileSystem = try fileSystemType()
        try mount(fileSystem)
        do throws(ExportError) {
            let needed = files.reduce(0) { $0 + $1.bytes.count }
            let free = freeBytes()
            // Each file may take up to one more allocation block than its size.
            if needed + files.count * 65_536 > free {
                throw .full(device: kernelName, neededBytes: needed, freeBytes: free)
            }
            do {
                try StickFiles(directory: mountPoint).replace(files)
            } catch {
                throw ExportError.classify(error, device: kernelName, neededBytes: needed, freeBytes: free)
            }
        } catch {
            unmount()
            throw error
        }
        try unmountOrFail()
        return StickExportResult(books: books.count, files: files.map(\.name))
    }

    /// Where the device, or another partition of the same disk, is used by the system (``BlockDeviceUsage``).
    public func inUse() -> String? {
        BlockDeviceUsage.current().user(of: kernelName)
    }

    /// A block device the kernel lets us write.
    func checkDevice() throws(ExportError) {
        let info: stat
        do {
            info = try FileOperations.status(device)
        } catch {
            if error.errno == ENOENT || error.isDeviceGone { throw .removed(device: kernelName, error) }
            throw .stick(device: kernelName, error)
        }
        guard info.st_mode & S_IFMT == S_IFBLK else { throw .notABlockDevice(device) }
        // The write-protect switch shows up as the block device's read-only flag.
        if let flag = try? FileOperations.readFile("/sys/class/block/\(kernelName)/ro", limit: 8),
            flag.first == UInt8(ascii: "1")
        {
            throw .readOnly(device: kernelName)
        }
    }

    /// The file system udev found on the device, when it is one the export mounts.
    func fileSystemType() throws(ExportError) -> StickFileSystem {
        let properties = UdevProperties.of(device: device, database: udevDatabase)
        let type = properties?.fileSystemType
        guard properties?.isFileSystem == true, let fileSystem = StickFileSystem(udevType: type) else {
            throw .unsupportedFileSystem(device: kernelName, found: type)
        }
        return fileSystem
    }

    /// Mounts the device as `fileSystem`, and as nothing else.
    func mount(_ fileSystem: StickFileSystem) throws(ExportError) {
        do {
            try FileOperations.makeDirectory(mountPoint, mode: 0o700)
        } catch {
            throw .stick(device: kernelName, error)
        }
        do {
            try Mounting.mount(
                device, on: mountPoint, type: fileSystem.rawValue, flags: StickFileSystem.mountFlags,
                options: fileSystem.mountOptions(owner: owner))
        } catch {
            _ = rmdir(mountPoint)
            // EINVAL: the kernel found no valid file system of that type there after all.
            if error.errno == EINVAL { throw .damaged(device: kernelName, error) }
            if error.errno == ENODEV { throw .unsupportedFileSystem(device: kernelName, found: fileSystem.rawValue) }
            throw ExportError.classify(error, device: kernelName, neededBytes: 0, freeBytes: 0)
        }
    }

    func freeBytes() -> Int {
        var info = statvfs()
        guard (try? retryingOnInterrupt("statvfs", subject: mountPoint, { statvfs(mountPoint, &info) })) != nil else {
            return 0
        }
        return Int(FreeSpace.bytes(blocks: UInt64(info.f_bavail), blockSize: UInt64(info.f_frsize)))
    }

    /// Unmounts after a failure: lazily when the stick is gone or busy.
    func unmount() {
        if (try? Mounting.unmount(mountPoint)) == nil { try? Mounting.unmount(mountPoint, detach: true) }
        _ = rmdir(mountPoint)
    }

    /// Unmounts after a success: a failure here means the last writes may not be on the stick.
    func unmountOrFail() throws(ExportError) {
        do {
            try Mounting.unmount(mountPoint)
        } catch {
            unmount()
            throw ExportError.classify(error, device: kernelName, neededBytes: 0, freeBytes: 0)
        }
        _ = rmdir(mountPoint)
    }
}

/// One export at a time: an exclusive `flock` on a directory every export shares (the state
/// directory; the daemon's own lock is a file inside it). Held until the process ends (or ``release()``).
public final class ExportLock: Sendable {
    private let fd: Int32

    private init(fd: Int32) { self.fd = fd }

    /// Fails with ``ExportError/busy(device:)`` when another export holds it.
    public static func acquire(directory: String, device: String) throws(ExportError) -> ExportLock {
        let fd: Int32
        do {
            fd = try FileOperations.open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        } catch {
            throw .stick(device: device, error)
        }
        let acquired: Bool
        do {
            acquired = try FileLock.tryExclusive(fd, path: directory)
        } catch {
            Glibc.close(fd)
            throw .stick(device: device, error)
        }
        guard acquired else {
            Glibc.close(fd)
            throw .busy(device: device)
        }
        return ExportLock(fd: fd)
    }

    public func release() {
        Glibc.close(fd)
    }
}
