import SwiftWingCore

#if canImport(Glibc)
    import Glibc
#endif

/// Why an export did not happen, worded as advice. ``panelText`` is the short form for the
/// status panel; ``description`` is the whole message for the journal and the terminal.
public enum ExportError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The library could not be read.
    case library(StoreError)
    /// The destination file could not be written (`--to FILE`).
    case file(SystemCallError)
    /// `--device` is not a block device.
    case notABlockDevice(String)
    /// The stick's write-protect switch is on, or the kernel made the device read-only.
    case readOnly(device: String)
    /// udev found no vfat, exFAT or ext4 file system on the device (`found`: what it found instead).
    case unsupportedFileSystem(device: String, found: String?)
    /// The file system's metadata is corrupt (a failed checksum, a block that makes no sense).
    case damaged(device: String, SystemCallError)
    /// The stick's top folder does not let the export write (an ext4 folder owned by root).
    case notWritable(device: String)
    /// Fewer bytes free on the stick than the export needs.
    case full(device: String, neededBytes: Int, freeBytes: Int)
    /// The stick went away while it was mounted (`EIO`, `ENODEV`, `ENXIO`).
    case removed(device: String, SystemCallError)
    /// Another export holds the lock (a second stick plugged in during an export).
    case busy(device: String)
    /// Any other failure of a system call on the stick.
    case stick(device: String, SystemCallError)

    public var description: String {
        switch self {
        case .library(let error):
            return "the library could not be read: \(error.description)"
        case .file(let error):
            return "the export file could not be written: \(error.description); nothing was written under the "
                + "final name: check the folder exists, is writable and has space"
        case .notABlockDevice(let path):
            return "\(path) is not a block device: pass the stick's partition, e.g. --device /dev/sda1 "
                + "(lsblk lists them)"
        case .readOnly(let device):
            return "the USB stick \(device) is read-only (write-protected): slide its lock switch off, "
                + "or use another stick; nothing was written"
        case .unsupportedFileSystem(let device, let found):
            return "the USB stick \(device) has no FAT32, exFAT or ext4 file system"
                + (found.map { " (it has \($0))" } ?? " (it looks unformatted)")
                + ": format it as FAT32 or exFAT on a computer and plug it in again; nothing was written"
        case .damaged(let device, let error):
            return "the file system on the USB stick \(device) is damaged (\(error.description)); it was unmounted "
                + "and nothing more was written: repair it on a computer (fsck, or chkdsk on Windows) or format it"
        case .notWritable(let device):
            return "the top folder of the USB stick \(device) may not be written by the kiosk (on ext4 it belongs to "
                + "root): on a computer make it writable for everyone (sudo chmod 1777 on the stick's folder), "
                + "or format the stick as FAT32 or exFAT; nothing was written"
        case .full(let device, let needed, let free):
            return "the USB stick \(device) is full: the export needs \(Self.size(needed)), \(Self.size(free)) "
                + "are free; delete files from it or use another stick; nothing was written"
        case .removed(let device, let error):
            return "the USB stick \(device) was removed during the export (\(error.reason)); the files on it are "
                + "left as they were: plug it in again and wait for \"safe to remove\""
        case .busy(let device):
            return "another USB stick is being exported to; \(device) was left alone: wait for \"safe to "
                + "remove\", then plug \(device) in again"
        case .stick(let device, let error):
            return "the export to the USB stick \(device) failed: \(error.description); nothing was written "
                + "under the final name: try again or use another stick"
        }
    }

    /// A line short enough for the status panel.
    public var panelText: String {
        switch self {
        case .library: "The library could not be read. See the journal."
        case .file, .notABlockDevice: "Export failed. See the journal."
        case .readOnly: "The stick is write-protected. Unlock it or use another one."
        case .unsupportedFileSystem: "The stick needs FAT32, exFAT or ext4. Format it on a computer."
        case .damaged: "The stick is damaged. Repair or format it on a computer."
        case .notWritable: "The stick's folder is not writable. See the journal."
        case .full(_, let needed, _): "The stick is full (\(Self.size(needed)) needed). Free some space."
        case .removed: "The stick was removed too early. Plug it in again."
        case .busy: "Already exporting to another stick. Plug this one in again after it."
        case .stick: "Export to the stick failed. Try again or use another stick."
        }
    }

    /// The stick error for a failed call: gone, full, read-only or other.
    static func classify(_ error: SystemCallError, device: String, neededBytes: Int, freeBytes: Int) -> ExportError {
        if error.isDeviceGone { return .removed(device: device, error) }
        if error.isNoSpace { return .full(device: device, neededBytes: neededBytes, freeBytes: freeBytes) }
        if error.errno == EROFS || error.errno == EACCES && error.call == "mount" { return .readOnly(device: device) }
        // ext4 reports a corrupt block as EUCLEAN (EFSCORRUPTED) or EBADMSG (EFSBADCRC).
        if error.errno == EUCLEAN || error.errno == EBADMSG { return .damaged(device: device, error) }
        if error.errno == EACCES || error.errno == EPERM { return .notWritable(device: device) }
        return .stick(device: device, error)
    }

    static func size(_ bytes: Int) -> String {
        bytes >= 1_048_576
            ? String(format: "%.1f MB", Double(bytes) / 1_048_576) : String(format: "%.0f KB", Double(bytes) / 1024)
    }
}
