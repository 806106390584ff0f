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

/// The library onto a USB stick: mount the stick privately (`nosuid,nodev,noexec`), write each
/// file to a temporary name, fsync, rename, fsync the folder, unmount.
///
/// Nothing on the stick is ever run or read: the only paths touched are the export's own files.
/// The CSV is made before the stick is mounted, so the stick is mounted only while it is written.
/// Either every file is written or none is left under its final name (files this run already
/// finished are removed again when a later one fails).
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

    /// The file systems tried, in order.
    static let fileSystems = ["vfat", "exfat", "ext4"]

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

    public func run(books: [BookRecord]) throws(ExportError) -> StickExportResult {
        var files: [(name: String, bytes: [UInt8])] = []
        for format in formats {
            files.append((format.fileName(day: day), LibraryCSV.encode(books, format: format)))
        }
        try checkDevice()
        try mount()
        var written: [String] = []
        do throws(ExportError) {
            let needed = files.reduce(0) { $0 + $1.bytes.count }
            let free = freeBytes()
            // Each file may take up to one more allocation block than its size.
            if needed + files.count * 65_536 > free {
                throw .full(device: kernelName, neededBytes: needed, freeBytes: free)
            }
            for file in files {
                let path = mountPoint + "/" + file.name
                do {
                    try LibraryExport.writeDurably(file.bytes, to: path)
                } catch {
                    throw ExportError.classify(error, device: kernelName, neededBytes: needed, freeBytes: free)
                }
                written.append(path)
            }
        } catch {
            for path in written { _ = unlink(path) }
            if !written.isEmpty { try? FileOperations.fsyncDirectory(mountPoint) }
            unmount()
            throw error
        }
        try unmountOrFail()
        return StickExportResult(books: books.count, files: files.map(\.name))
    }

    /// Where the device, or another partition of the same disk, is mounted or used as swap: a USB
    /// boot disk is not a stick to export to. Nil for a stick nobody uses.
    public func inUse() -> String? {
        guard let resolved = realpath("/sys/class/block/\(kernelName)", nil) else { return nil }
        var sysPath = String(cString: resolved)
        free(resolved)
        if FileOperations.exists(sysPath + "/partition") { sysPath = FileOperations.parentDirectory(of: sysPath) }
        let diskName = sysPath.split(separator: "/").last.map(String.init) ?? kernelName
        let names = [diskName] + ((try? FileOperations.directoryEntries(sysPath)) ?? []).filter { $0.hasPrefix(diskName) }
        func text(_ path: String) -> String {
            ((try? FileOperations.readFile(path, limit: 1 << 20)).map { String(decoding: $0, as: UTF8.self) }) ?? ""
        }
        let numbers = Set(names.map { text("/sys/class/block/\($0)/dev").trimmingCharacters(in: .whitespacesAndNewlines) })
        // mountinfo: id parent major:minor root mount-point ...
        for line in text("/proc/self/mountinfo").split(separator: "\n") {
            let fields = line.split(separator: " ")
            if fields.count > 4, numbers.contains(String(fields[2])) { return String(fields[4]) }
        }
        for line in text("/proc/swaps").split(separator: "\n").dropFirst() {
            if let path = line.split(separator: " ").first, names.contains(where: { path == "/dev/\($0)" }) {
                return "swap"
            }
        }
        return nil
    }

    /// A block device the kernel lets us write.
    func checkDevice() throws(ExportError) {
        var info = stat()
        guard stat(device, &info) == 0 else {
            let error = SystemCallError("stat", subject: device, errno: errno)
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

    /// Mounts the first file system of ``fileSystems`` the kernel recognises.
    func mount() throws(ExportError) {
        do {
            try FileOperations.makeDirectory(mountPoint, mode: 0o700)
        } catch {
            throw .stick(device: kernelName, error)
        }
        let flags = UInt(MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_NOATIME)
        // fmask=0133 makes files 0644, the mode the durable write sets (vfat refuses any other chmod).
        for type in Self.fileSystems {
            let options: String
            switch type {
            case "vfat": options = "uid=\(owner.uid),gid=\(owner.gid),fmask=0133,dmask=0022,flush"
            case "exfat": options = "uid=\(owner.uid),gid=\(owner.gid),fmask=0133,dmask=0022"
            default: options = ""
            }
            if Glibc.mount(device, mountPoint, type, flags, options) == 0 { return }
            let error = SystemCallError("mount", subject: "\(device) (\(type))", errno: errno)
            // EINVAL: not this file system; ENODEV: the kernel has no driver for it. Try the next.
            if error.errno == EINVAL || error.errno == ENODEV { continue }
            _ = rmdir(mountPoint)
            throw ExportError.classify(error, device: kernelName, neededBytes: 0, freeBytes: 0)
        }
        _ = rmdir(mountPoint)
        throw .unsupportedFileSystem(device: kernelName, found: udevFileSystemType())
    }

    /// What udev found on the device (`ID_FS_TYPE` in its database), for the message only.
    func udevFileSystemType() -> String? {
        var info = stat()
        guard stat(device, &info) == 0 else { return nil }
        let device = UInt64(info.st_rdev)
        let major = (device >> 8) & 0xfff | (device >> 32) & ~UInt64(0xfff)
        let minor = device & 0xff | (device >> 12) & ~UInt64(0xff)
        guard let bytes = try? FileOperations.readFile("/run/udev/data/b\(major):\(minor)", limit: 65_536) else {
            return nil
        }
        for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n")
        where line.hasPrefix("E:ID_FS_TYPE=") {
            let type = line.dropFirst("E:ID_FS_TYPE=".count)
            return type.isEmpty ? nil : String(type)
        }
        return nil
    }

    func freeBytes() -> Int {
        var info = statvfs()
        guard statvfs(mountPoint, &info) == 0 else { return 0 }
        return Int(info.f_bavail) * Int(info.f_frsize)
    }

    /// Unmounts after a failure: lazily when the stick is gone or busy.
    func unmount() {
        if umount2(mountPoint, 0) != 0 { _ = umount2(mountPoint, Int32(MNT_DETACH)) }
        _ = rmdir(mountPoint)
    }

    /// Unmounts after a success: a failure here means the last writes may not be on the stick.
    func unmountOrFail() throws(ExportError) {
        if umount2(mountPoint, 0) != 0 {
            let error = SystemCallError("umount", subject: mountPoint, errno: errno)
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
        let fd = Glibc.open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else {
            throw .stick(device: device, SystemCallError("open", subject: directory, errno: errno))
        }
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            let code = errno
            if code == EINTR { continue }
            Glibc.close(fd)
            if code == EWOULDBLOCK { throw .busy(device: device) }
            throw .stick(device: device, SystemCallError("flock", subject: directory, errno: code))
        }
        return ExportLock(fd: fd)
    }

    public func release() {
        Glibc.close(fd)
    }
}
