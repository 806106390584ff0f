import SwiftWingCore

#if canImport(Glibc)
    import Glibc
#endif

/// The file systems an export mounts, each only when udev found it on the device (`ID_FS_TYPE`):
/// a stick's own kernel driver is the one that parses its (untrusted) metadata, and no other.
public enum StickFileSystem: String, Sendable, CaseIterable {
    case vfat
    case exfat
    case ext4

    /// The file system udev reported, or nil for any other (NTFS, ext2, btrfs, swap, none).
    public init?(udevType: String?) {
        guard let udevType, let type = StickFileSystem(rawValue: udevType) else { return nil }
        self = type
    }

    /// Nothing on the stick runs, opens a device or follows a symbolic link (`nosymfollow`, Linux 5.10).
    public static let mountFlags = UInt(MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_NOATIME | MS_NOSYMFOLLOW)

    /// The mount options for files owned by `owner` (vfat and exFAT have no owners of their own).
    /// fmask=0133 makes files 0644, the mode the durable write sets (vfat refuses any other chmod).
    /// ext4 is remounted read-only on an error whatever its superblock asks (`errors=panic` would
    /// stop the kiosk at the first corrupt block).
    public func mountOptions(owner: (uid: uid_t, gid: gid_t)) -> String {
        switch self {
        case .vfat: "uid=\(owner.uid),gid=\(owner.gid),fmask=0133,dmask=0022,flush"
        case .exfat: "uid=\(owner.uid),gid=\(owner.gid),fmask=0133,dmask=0022"
        case .ext4: "errors=remount-ro"
        }
    }
}

/// What udev's database says about a block device (`/run/udev/data/b<major>:<minor>`, lines `E:KEY=VALUE`).
public struct UdevProperties: Sendable, Equatable {
    public var values: [String: String]

    public init(text: String) {
        var values: [String: String] = [:]
        // Lines split on the LF byte: split on the Character "\n" kept "\r\n" (one grapheme) inside a value, so
        // "E:A=x\r\nE:ID_FS_TYPE=vfat" gave A the rest of the record (found by Fuzz/FuzzUdevProperties).
        for line in text.utf8.split(separator: UInt8(ascii: "\n")) where line.starts(with: "E:".utf8) {
            let pair = line.dropFirst(2)
            guard let equals = pair.firstIndex(of: UInt8(ascii: "=")) else { continue }
            values[String(decoding: pair[..<equals], as: UTF8.self)] =
                String(decoding: pair[pair.index(after: equals)...], as: UTF8.self)
        }
        self.values = values
    }

    /// The properties of the block device at `path`, or nil when udev has no record of it.
    public static func of(device path: String, database: String = "/run/udev/data") -> UdevProperties? {
        guard let info = try? FileOperations.status(path), info.st_mode & S_IFMT == S_IFBLK else { return nil }
        let device = UInt64(info.st_rdev)
        let major = (device >> 8) & 0xfff | (device >> 32) & ~UInt64(0xfff)
        let minor = device & 0xff | (device >> 12) & ~UInt64(0xff)
        guard let bytes = try? FileOperations.readFile("\(database)/b\(major):\(minor)", limit: 1 << 20) else {
            return nil
        }
        return UdevProperties(text: String(decoding: bytes, as: UTF8.self))
    }

    /// `ID_FS_TYPE` when udev calls the content a file system (`ID_FS_USAGE=filesystem`).
    public var fileSystemType: String? {
        guard let type = values["ID_FS_TYPE"], !type.isEmpty else { return nil }
        return type
    }

    public var isFileSystem: Bool { values["ID_FS_USAGE"] == "filesystem" }
}
