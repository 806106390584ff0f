#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The data files SwiftWing ships beside its code (the shelf photos the synthetic camera replays):
/// `Fixtures/<name>` in the source tree, `<prefix>/share/swiftwing/<name>` once installed.
///
/// The one place that knows where they are, so a debug build, a release build in any scratch folder
/// and an installed binary all find the same photos.
public enum ShippedFiles {
    /// Names a data folder explicitly (e.g. `/srv/photos` holding `shelves/`); checked first.
    public static let environmentVariable = "SWIFTWING_DATA_DIR"

    /// The first of ``candidates(_:executable:)`` that exists, or `nil` when none does.
    public static func folder(_ name: String) -> String? {
        candidates(name).first { isDirectory($0) }
    }

    /// Where the folder `name` is looked for, in order:
    /// 1. `$SWIFTWING_DATA_DIR/<name>`;
    /// 2. `<dir of the executable>/../share/swiftwing/<name>` (what `make install` and the package lay out);
    /// 3. `<source tree>/Fixtures/<name>`, the tree this file was compiled from, wherever the build folder is.
    public static func candidates(_ name: String, executable: String? = currentExecutable()) -> [String] {
        var folders: [String] = []
        if let root = getenv(environmentVariable).map({ String(cString: $0) }), !root.isEmpty {
            folders.append(root + "/" + name)
        }
        if let executable {
            folders.append(parent(parent(executable)) + "/share/swiftwing/" + name)
        }
        folders.append(sourceTree + "/Fixtures/" + name)
        return folders
    }

    /// The package root: this file is `<root>/Sources/SwiftWingCore/ShippedFiles.swift`.
    public static let sourceTree: String = parent(parent(parent(#filePath)))

    /// The running program's path, symlinks resolved (`/proc/self/exe`).
    public static func currentExecutable() -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let length = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard length > 0 else { return nil }
        return String(decoding: buffer[0..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    private static func isDirectory(_ path: String) -> Bool { FileOperations.isDirectory(path) }

    private static func parent(_ path: String) -> String { FileOperations.parentDirectory(of: path) }
}
