/// The size of a JPEG read from its markers alone (ITU T.81 B.1): no pixel is decoded, so a photo too large to
/// decode in the service's memory is refused before any recognizer sees it.
public struct JPEGHeader: Sendable, Equatable {
    public var width: Int
    public var height: Int
    public var pixels: Int { width * height }

    public enum Problem: Error, Sendable, Equatable, CustomStringConvertible {
        case notJPEG
        case truncated(String)
        case malformed(String)
        case tooManyPixels(width: Int, height: Int, limit: Int)

        public var description: String {
            switch self {
            case .notJPEG: "the 'photos[]' part is not a JPEG image (it does not start with FF D8)"
            case .truncated(let what): "the JPEG image is truncated (\(what)); send the whole file"
            case .malformed(let what): "the JPEG image is malformed (\(what))"
            case .tooManyPixels(let width, let height, let limit):
                "the image is \(width)x\(height) (\(width * height / 1_000_000) MP); at most \(limit / 1_000_000) MP are read: "
                    + "scale it down (the kiosk sends at most imaging.max_long_edge)"
            }
        }
    }

    /// Reads the frame header (SOF) and checks the file is whole: markers up to the first scan, and the end of
    /// image marker (FF D9) at the end (trailing padding allowed).
    public static func read(_ bytes: some RandomAccessCollection<UInt8>) throws(Problem) -> JPEGHeader {
        let data = Array(bytes)
        guard data.count >= 3, data[0] == 0xFF, data[1] == 0xD8 else { throw .notJPEG }
        var i = 2
        var frame: JPEGHeader?
        while true {
            guard i < data.count else { throw .truncated("it ends before the first scan") }
            guard data[i] == 0xFF else { throw .malformed("no marker at byte \(i)") }
            while i < data.count, data[i] == 0xFF { i += 1 }  // fill bytes
            guard i < data.count else { throw .truncated("it ends inside a marker") }
            let marker = data[i]
            i += 1
            if marker == 0xD8 || marker == 0x01 || (0xD0...0xD7).contains(marker) { continue }  // no length
            if marker == 0xD9 { throw .malformed("the end of image comes before any scan") }
            guard i + 2 <= data.count else { throw .truncated("it ends inside the length of marker FF \(hex(marker))") }
            let length = Int(data[i]) << 8 | Int(data[i + 1])
            guard length >= 2 else { throw .malformed("marker FF \(hex(marker)) has length \(length)") }
            guard i + length <= data.count else { throw .truncated("marker FF \(hex(marker)) runs past the end") }
            // SOF0–SOF15 except DHT (C4), JPG (C8) and DAC (CC).
            if (0xC0...0xCF).contains(marker), ![0xC4, 0xC8, 0xCC].contains(marker) {
                guard length >= 8 else { throw .malformed("the frame header is \(length) bytes") }
                let height = Int(data[i + 3]) << 8 | Int(data[i + 4])
                let width = Int(data[i + 5]) << 8 | Int(data[i + 6])
                guard width > 0, height > 0 else { throw .malformed("the frame is \(width)x\(height)") }
                frame = JPEGHeader(width: width, height: height)
            }
            i += length
            if marker == 0xDA { break }  // start of scan: entropy-coded data follows
        }
        guard let frame else { throw .malformed("no frame header (SOF) before the first scan") }
        var end = data.count
        while end > i, data[end - 1] == 0x00 || data[end - 1] == 0x0A || data[end - 1] == 0x0D { end -= 1 }
        guard end - i >= 2, data[end - 2] == 0xFF, data[end - 1] == 0xD9 else {
            throw .truncated("it does not end with the end-of-image marker FF D9")
        }
        return frame
    }

    /// Reads the header and refuses more than `maxPixels`.
    public static func check(_ bytes: some RandomAccessCollection<UInt8>, maxPixels: Int) throws(Problem) -> JPEGHeader
    {
        let header = try read(bytes)
        guard header.pixels <= maxPixels else {
            throw .tooManyPixels(width: header.width, height: header.height, limit: maxPixels)
        }
        return header
    }

    private static func hex(_ byte: UInt8) -> String {
        let digits = Array("0123456789ABCDEF")
        return String([digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]])
    }
}
