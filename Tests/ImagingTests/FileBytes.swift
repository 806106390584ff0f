#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Plain file helpers for tests (no Foundation).
enum FileBytes {
    static func read(_ path: String) -> [UInt8]? {
        guard let file = fopen(path, "rb") else { return nil }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = chunk.withUnsafeMutableBytes { fread($0.baseAddress, 1, $0.count, file) }
            if count == 0 { break }
            bytes += chunk[0..<count]
        }
        return bytes
    }

    static func write(_ bytes: [UInt8], to path: String) -> Bool {
        guard let file = fopen(path, "wb") else { return false }
        defer { fclose(file) }
        return bytes.withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, file) } == bytes.count
    }

    static func temporaryPath(_ name: String) -> String {
        let folder = getenv("TMPDIR").map { String(cString: $0) } ?? "/tmp"
        return "\(folder)/swiftwing-imaging-\(getpid())-\(name)"
    }

    static func remove(_ path: String) { unlink(path) }
}
