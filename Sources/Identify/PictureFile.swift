import Imaging
import SwiftWingCore

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
        do {
            return try FileOperations.readFile(path)
        } catch {
            throw .unreadableFile(path: path, reason: error.reason)
        }
    }
}
