import SwiftWingCore

#if canImport(Glibc)
    import Glibc
#endif

/// Whether a block device, or another partition of the same disk, is in use by the system: a USB
/// boot disk or a disk inside a device mapper, RAID or LVM volume, or a btrfs file system, is not
/// a stick to export to.
public struct BlockDeviceUsage: Sendable {
    /// Where sysfs is (`/sys`; a folder of the same shape in tests).
    public var sysfs: String
    public var mounts: [MountEntry]
    /// The text of `/proc/swaps`.
    public var swaps: String

    public init(sysfs: String = "/sys", mounts: [MountEntry], swaps: String) {
        self.sysfs = sysfs
        self.mounts = mounts
        self.swaps = swaps
    }

    /// This system's state now.
    public static func current() -> BlockDeviceUsage {
        let swaps = (try? FileOperations.readFile("/proc/swaps", limit: 1 << 20)).map {
            String(decoding: $0, as: UTF8.self)
        }
        return BlockDeviceUsage(mounts: (try? MountTable.current()) ?? [], swaps: swaps ?? "")
    }

    /// Where the device `kernelName` (`sda1`) or its disk's other partitions are used: a mount point,
    /// `swap`, `held by dm-0` (device mapper, RAID, LVM: `holders/` in sysfs) or `btrfs <uuid>`.
    /// Nil for a stick nobody uses.
    public func user(of kernelName: String) -> String? {
        guard let resolved = realpath("\(sysfs)/class/block/\(kernelName)", nil) else { return nil }
        var diskPath = String(cString: resolved)
        free(resolved)
        if FileOperations.exists(diskPath + "/partition") { diskPath = FileOperations.parentDirectory(of: diskPath) }
        let diskName = diskPath.split(separator: "/").last.map(String.init) ?? kernelName
        let partitions = ((try? FileOperations.directoryEntries(diskPath)) ?? []).filter {
            $0.hasPrefix(diskName) && FileOperations.exists("\(diskPath)/\($0)/partition")
        }
        let names = [diskName] + partitions.sorted()
        let numbers = Set(
            names.compactMap { name in
                text("\(sysfs)/class/block/\(name)/dev").map { $0.trimmed(of: " \n") }
            })
        for entry in mounts {
            if numbers.contains(entry.device) || names.contains(where: { entry.source == "/dev/\($0)" }) {
                return entry.mountPoint
            }
        }
        for line in swaps.split(separator: "\n").dropFirst() {
            if let path = line.split(separator: " ").first, names.contains(where: { path == "/dev/\($0)" }) {
                return "swap"
            }
        }
        for name in names {
            let folder = name == diskName ? diskPath : "\(diskPath)/\(name)"
            if let holder = ((try? FileOperations.directoryEntries(folder + "/holders")) ?? []).sorted().first {
                return "held by \(holder)"
            }
        }
        // A btrfs file system lists every device it spans, mounted or not, in /sys/fs/btrfs/<uuid>/devices.
        for uuid in ((try? FileOperations.directoryEntries("\(sysfs)/fs/btrfs")) ?? []).sorted() {
            for name in names where FileOperations.exists("\(sysfs)/fs/btrfs/\(uuid)/devices/\(name)") {
                return "btrfs \(uuid)"
            }
        }
        return nil
    }

    private func text(_ path: String) -> String? {
        (try? FileOperations.readFile(path, limit: 4096)).map { String(decoding: $0, as: UTF8.self) }
    }
}

extension String {
    fileprivate func trimmed(of set: String) -> String {
        var slice = Substring(self)
        while let first = slice.first, set.contains(first) { slice = slice.dropFirst() }
        while let last = slice.last, set.contains(last) { slice = slice.dropLast() }
        return String(slice)
    }
}
