import Foundation
import SwiftWingCore
import Testing

@testable import Store

#if canImport(Glibc)
    import Glibc
#endif

private func contents(_ path: String) -> String? {
    (try? FileOperations.readFile(path)).map { String(decoding: $0, as: UTF8.self) }
}

private func names(in directory: String) -> [String] {
    ((try? FileOperations.directoryEntries(directory)) ?? []).sorted()
}

private func file(_ name: String, _ text: String) -> StickFiles.File {
    StickFiles.File(name: name, bytes: Array(text.utf8))
}

@Suite("USB stick export: what a hostile stick cannot do")
struct StickExportTests {
    @Test("free space that a lying statfs reports saturates instead of trapping")
    func freeSpaceSaturates() {
        #expect(FreeSpace.bytes(blocks: 10, blockSize: 4096) == 40_960)
        #expect(FreeSpace.bytes(blocks: UInt64.max, blockSize: 4096) == Int64.max)
        #expect(FreeSpace.bytes(blocks: 1 << 62, blockSize: 4) == Int64.max)
        #expect(FreeSpace.bytes(blocks: UInt64(Int64.max) + 1, blockSize: 1) == Int64.max)
        #expect(FreeSpace.bytes(blocks: 0, blockSize: UInt64.max) == 0)
    }

    @Test("only vfat, exFAT and ext4 as udev reported them; NTFS, ext2, blank and unknown are not mounted")
    func onlyTheReportedFileSystem() {
        #expect(StickFileSystem(udevType: "vfat") == .vfat)
        #expect(StickFileSystem(udevType: "exfat") == .exfat)
        #expect(StickFileSystem(udevType: "ext4") == .ext4)
        for other in ["ntfs", "ntfs3", "ext2", "ext3", "btrfs", "hfsplus", "swap", "VFAT", "vfat ", ""] {
            #expect(StickFileSystem(udevType: other) == nil, "\(other)")
        }
        #expect(StickFileSystem(udevType: nil) == nil)
        let database = UdevProperties(
            text: "S:disk/by-label/SW\nE:ID_FS_USAGE=filesystem\nE:ID_FS_TYPE=exfat\nE:X=a=b\n")
        #expect(database.fileSystemType == "exfat" && database.isFileSystem)
        #expect(database.values["X"] == "a=b")
        let blank = UdevProperties(text: "E:ID_BUS=usb\nE:DEVTYPE=disk\n")
        #expect(blank.fileSystemType == nil && !blank.isFileSystem)
    }

    @Test("every mount is nosuid, nodev, noexec, nosymfollow; ext4 is remounted read-only on an error")
    func mountOptions() {
        let flags = StickFileSystem.mountFlags
        for flag in [MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_NOSYMFOLLOW] {
            #expect(flags & UInt(flag) != 0, "\(flag)")
        }
        #expect(UInt(MS_NOSYMFOLLOW) == 256)
        let owner = (uid: uid_t(999), gid: gid_t(998))
        #expect(StickFileSystem.ext4.mountOptions(owner: owner).split(separator: ",").contains("errors=remount-ro"))
        #expect(StickFileSystem.vfat.mountOptions(owner: owner) == "uid=999,gid=998,fmask=0133,dmask=0022,flush")
        #expect(StickFileSystem.exfat.mountOptions(owner: owner) == "uid=999,gid=998,fmask=0133,dmask=0022")
    }

    @Test("a corrupt ext4 block and a root-owned ext4 folder end with their own advice")
    func damagedAndNotWritable() {
        let crc = ExportError.classify(
            SystemCallError("open", subject: "x", errno: EBADMSG), device: "sda", neededBytes: 1, freeBytes: 1)
        #expect(crc == .damaged(device: "sda", SystemCallError("open", subject: "x", errno: EBADMSG)))
        #expect(crc.panelText == "The stick is damaged. Repair or format it on a computer.")
        #expect(crc.description.contains("file system on the USB stick sda is damaged"))
        let corrupt = ExportError.classify(
            SystemCallError("open", subject: "x", errno: EUCLEAN), device: "sda", neededBytes: 1, freeBytes: 1)
        #expect(corrupt.panelText == crc.panelText)
        let denied = ExportError.classify(
            SystemCallError("open", subject: "x", errno: EACCES), device: "sda", neededBytes: 1, freeBytes: 1)
        #expect(denied == .notWritable(device: "sda"))
        #expect(denied.description.contains("chmod 1777"))
    }

    @Test("a new pair replaces the previous pair and leaves no temporary file")
    func pairReplaced() throws {
        let directory = TemporaryDirectory()
        let files = StickFiles(directory: directory.path)
        try files.replace([file("a.csv", "old a"), file("b.csv", "old b")])
        try files.replace([file("a.csv", "new a"), file("b.csv", "new b")])
        #expect(names(in: directory.path) == ["a.csv", "b.csv"])
        #expect(contents(directory.path + "/a.csv") == "new a")
        #expect(contents(directory.path + "/b.csv") == "new b")
    }

    @Test("the second file failing keeps the previous pair whole: the first is not replaced, nothing is removed")
    func secondFileFailsPreviousPairStays() throws {
        let directory = TemporaryDirectory()
        try StickFiles(directory: directory.path).replace([file("a.csv", "old a"), file("b.csv", "old b")])
        var failing = StickFiles(directory: directory.path)
        failing.writeAll = { fd, bytes, path throws(SystemCallError) in
            if path.contains("b.csv") { throw SystemCallError("write", subject: path, errno: EIO) }
            try FileOperations.writeAll(fd, bytes, path: path)
        }
        let error = #expect(throws: SystemCallError.self) {
            try failing.replace([file("a.csv", "new a"), file("b.csv", "new b")])
        }
        #expect(error?.errno == EIO)
        #expect(names(in: directory.path) == ["a.csv", "b.csv"])
        #expect(contents(directory.path + "/a.csv") == "old a")
        #expect(contents(directory.path + "/b.csv") == "old b")
    }

    @Test(
        "a stick that fills up during the second file keeps the previous pair (a real tmpfs, ENOSPC)",
        .enabled(if: canMountTmpfs, "needs tmpfs mounts (root in a sandbox that allows them)"))
    func fullStickPreviousPairStays() throws {
        let directory = TemporaryDirectory()
        #expect(directory.mountTmpfs(kilobytes: 96))
        let files = StickFiles(directory: directory.path)
        try files.replace([file("a.csv", "old a"), file("b.csv", "old b")])
        let big = String(repeating: "x", count: 200_000)
        #expect(throws: SystemCallError.self) { try files.replace([file("a.csv", "new a"), file("b.csv", big)]) }
        #expect(names(in: directory.path) == ["a.csv", "b.csv"])
        #expect(contents(directory.path + "/a.csv") == "old a")
        #expect(contents(directory.path + "/b.csv") == "old b")
    }

    @Test("the first pair on a stick: a failure leaves no file at all")
    func firstPairFailsNothingLeft() throws {
        let directory = TemporaryDirectory()
        var failing = StickFiles(directory: directory.path)
        failing.writeAll = { _, _, path throws(SystemCallError) in
            throw SystemCallError("write", subject: path, errno: ENOSPC)
        }
        #expect(throws: SystemCallError.self) { try failing.replace([file("a.csv", "a"), file("b.csv", "b")]) }
        #expect(names(in: directory.path).isEmpty)
    }
}

/// A sysfs of the same shape as the kernel's: /sys/class/block/NAME links into devices/…/block/DISK[/PART].
private final class FakeSysfs {
    let directory = TemporaryDirectory()
    var root: String { directory.path }

    init() throws {
        let disk = root + "/devices/pci0000:00/usb1/block/sdb"
        try make(disk + "/holders")
        try write(disk + "/dev", "8:16\n")
        try make(root + "/class/block")
        try link(disk, root + "/class/block/sdb")
        for (index, name) in ["sdb1", "sdb2"].enumerated() {
            try make("\(disk)/\(name)/holders")
            try write("\(disk)/\(name)/dev", "8:\(17 + index)\n")
            try write("\(disk)/\(name)/partition", "\(index + 1)\n")
            try link("\(disk)/\(name)", root + "/class/block/\(name)")
        }
    }

    func make(_ path: String) throws {
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }
    func write(_ path: String, _ text: String) throws { try Data(text.utf8).write(to: URL(fileURLWithPath: path)) }
    func link(_ target: String, _ path: String) throws {
        try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: target)
    }
}

@Suite("USB stick export: a disk the system uses is not a stick")
struct BlockDeviceUsageTests {
    private func line(_ device: String, _ mountPoint: String, _ type: String, _ source: String) -> String {
        "40 1 \(device) / \(mountPoint) rw,relatime shared:1 - \(type) \(source) rw"
    }

    @Test("a stick nobody uses is free")
    func free() throws {
        let sysfs = try FakeSysfs()
        let mounts = MountTable.parse(line("8:1", "/", "ext4", "/dev/sda1"))
        #expect(BlockDeviceUsage(sysfs: sysfs.root, mounts: mounts, swaps: "").user(of: "sdb1") == nil)
    }

    @Test("another partition of the same disk mounted, by number or by source (btrfs reports an anonymous number)")
    func mounted() throws {
        let sysfs = try FakeSysfs()
        let byNumber = MountTable.parse(line("8:18", "/boot", "vfat", "/dev/sdb2"))
        #expect(BlockDeviceUsage(sysfs: sysfs.root, mounts: byNumber, swaps: "").user(of: "sdb1") == "/boot")
        let bySource = MountTable.parse(line("0:45", "/srv/data", "btrfs", "/dev/sdb2"))
        #expect(BlockDeviceUsage(sysfs: sysfs.root, mounts: bySource, swaps: "").user(of: "sdb1") == "/srv/data")
    }

    @Test("a partition held by device mapper, RAID or LVM (sysfs holders)")
    func held() throws {
        let sysfs = try FakeSysfs()
        try sysfs.make(sysfs.root + "/devices/pci0000:00/usb1/block/sdb/sdb2/holders/dm-0")
        #expect(BlockDeviceUsage(sysfs: sysfs.root, mounts: [], swaps: "").user(of: "sdb1") == "held by dm-0")
    }

    @Test("a member of a btrfs file system, mounted or not")
    func btrfsMember() throws {
        let sysfs = try FakeSysfs()
        try sysfs.make(sysfs.root + "/fs/btrfs/6f1c-uuid/devices")
        try sysfs.link(sysfs.root + "/class/block/sdb2", sysfs.root + "/fs/btrfs/6f1c-uuid/devices/sdb2")
        #expect(BlockDeviceUsage(sysfs: sysfs.root, mounts: [], swaps: "").user(of: "sdb1") == "btrfs 6f1c-uuid")
    }

    @Test("swap on the disk")
    func swap() throws {
        let sysfs = try FakeSysfs()
        let swaps = "Filename\tType\tSize\tUsed\tPriority\n/dev/sdb2 partition 1048572 0 -2\n"
        #expect(BlockDeviceUsage(sysfs: sysfs.root, mounts: [], swaps: swaps).user(of: "sdb1") == "swap")
    }
}
