import Imaging
import SwiftWingCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Reads a JPEG or PNG picture file into a frame, whatever its extension says: the first bytes
/// decide.
public enum PictureFile {
    public static func frame(contentsOf path: String) throws(IdentifyError) -> YUV420Frame {
        let bytes = try contents(of: path)
        if PNGDecoder.isPNG(bytes) { return try PNGDecoder().decode(bytes, source: path) }
        guard bytes.starts(with: [0xFF, 0xD8]) else {
            throw .unreadableFile(path: path, reason: "neither a JPEG nor a PNG (its first bytes say otherwise)")
        }
        do {
            return try JPEGDecoder().decode(bytes, source: path)
        } catch {
            throw .undecodableJPEG(error.description)
        }
    }

    private static func contents(of path: String) throws(IdentifyError) -> [UInt8] {
        guard let file = fopen(path, "rb") else {
            throw .unreadableFile(path: path, reason: String(cString: strerror(errno)))
        }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = chunk.withUnsafeMutableBytes { fread($0.baseAddress, 1, $0.count, file) }
            bytes.append(contentsOf: chunk.prefix(count))
            if count < chunk.count { break }
        }
        guard ferror(file) == 0 else { throw .unreadableFile(path: path, reason: "read error") }
        return bytes
    }
}
