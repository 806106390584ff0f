// Mounting, the mount table and whole-file locks: thin wrappers over `mount`, `umount2`, `flock` and
// the text of `/proc/self/mountinfo`, each retried on EINTR as SystemCall.swift says.
#if canImport(Glibc)
    import Glibc
#endif

/// One line of `/proc/self/mountinfo` (proc(5)): `36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3
/// /dev/root rw,errors=continue`. Paths are unescaped (the kernel writes space, tab, newline and
/// backslash as `\040`, `\011`, `\012`, `\134`).
public struct MountEntry: Sendable, Equatable {
    public var id: Int
    public var parentID: Int
    /// The `major:minor` of the mounted file system's `st_dev` (an anonymous one for btrfs, NFS, tmpfs).
    public var device: String
    /// The folder of the file system mounted here (`/` for a whole file system).
    public var root: String
    public var mountPoint: String
    public var mountOptions: String
    public var fileSystemType: String
    /// What was mounted, e.g. `/dev/sda1`; `none` or a name for virtual file systems.
    public var source: String
    public var superOptions: String
}

/// The mount table of `/proc/self/mountinfo`, parsed without trusting it: a line that does not have
/// the fields proc(5) promises is skipped, never a trap.
public enum MountTable {
    /// The mount table of this process's mount namespace.
    public static func current() throws(SystemCallError) -> [MountEntry] {
        parse(String(decoding: try FileOperations.readFile("/proc/self/mountinfo", limit: 16 << 20), as: UTF8.self))
    }

    /// Every well-formed line of `text`, in order.
    public static func parse(_ text: String) -> [MountEntry] {
        text.split(separator: "\n", omittingEmptySubsequences: true).compactMap { parseLine($0) }
    }

    /// One line, or nil when it lacks a field (the optional fields end at a lone `-`).
    public static func parseLine(_ line: Substring) -> MountEntry? {
        let fields = line.split(separator: " ", omittingEmptySubsequences: true)
        guard fields.count >= 10, let id = Int(fields[0]), let parent = Int(fields[1]),
            let separator = fields[6...].firstIndex(of: "-"), separator + 3 < fields.count
        else { return nil }
        let device = fields[2]
        guard let colon = device.firstIndex(of: ":"), UInt32(device[..<colon]) != nil,
            UInt32(device[device.index(after: colon)...]) != nil
        else { return nil }
        return MountEntry(
            id: id, parentID: parent, device: String(device), root: unescape(fields[3]),
            mountPoint: unescape(fields[4]), mountOptions: String(fields[5]),
            fileSystemType: unescape(fields[separator + 1]), source: unescape(fields[separator + 2]),
            superOptions: String(fields[separator + 3]))
    }

    /// `\NNN` (three octal digits, at most `\377`) as the byte it stands for; anything else as it is.
    public static func unescape(_ field: Substring) -> String {
        let bytes = Array(field.utf8)
        guard bytes.contains(UInt8(ascii: "\\")) else { return String(field) }
        var result: [UInt8] = []
        result.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: "\\"), index + 3 < bytes.count,
                let value = octal(bytes[(index + 1)..<(index + 4)])
            {
                result.append(value)
                index += 4
            } else {
                result.append(bytes[index])
                index += 1
            }
        }
        return String(decoding: result, as: UTF8.self)
    }

    private static func octal(_ digits: ArraySlice<UInt8>) -> UInt8? {
        guard digits.count == 3 else { return nil }
        var value = 0
        for digit in digits {
            guard digit >= UInt8(ascii: "0"), digit <= UInt8(ascii: "7") else { return nil }
            value = value * 8 + Int(digit - UInt8(ascii: "0"))
        }
        return value <= 0xFF ? UInt8(value) : nil
    }
}

public enum Mounting {
    /// Mounts `source` on `target`. The corresponding C function is `mount`.
    public static func mount(
        _ source: String, on target: String, type: String, flags: UInt, options: String
    ) throws(SystemCallError) {
        _ = try retryingOnInterrupt("mount", subject: "\(source) (\(type)) on \(target)") {
            Glibc.mount(source, target, type, flags, options)
        }
    }

    /// Unmounts `target`; `detach` lets a busy or vanished file system go lazily (`MNT_DETACH`).
    /// The corresponding C function is `umount2`.
    public static func unmount(_ target: String, detach: Bool = false) throws(SystemCallError) {
        _ = try retryingOnInterrupt("umount", subject: target) { umount2(target, detach ? Int32(MNT_DETACH) : 0) }
    }
}

public enum FileLock {
    /// Takes an exclusive `flock` on `fd` without waiting: false when another open file holds it.
    /// The corresponding C function is `flock`.
    public static func tryExclusive(_ fd: Int32, path: String) throws(SystemCallError) -> Bool {
        do {
            _ = try retryingOnInterrupt("flock", subject: path) { flock(fd, LOCK_EX | LOCK_NB) }
            return true
        } catch {
            if error.errno == EWOULDBLOCK { return false }
            throw error
        }
    }
}
