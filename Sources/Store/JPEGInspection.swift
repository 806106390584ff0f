/// What reconciliation needs to know about a JPEG found in the spool without a queue row.
struct JPEGInspection: Hashable, Sendable {
    var width: Int
    var height: Int

    /// Checks that `bytes` is a whole JPEG (starts with SOI `FF D8`, ends with EOI `FF D9`) and reads
    /// its size from the first SOF segment. Returns a reason when it is not usable.
    static func inspect(_ bytes: [UInt8]) -> Result<JPEGInspection, InvalidJPEG> {
        guard bytes.count >= 4, bytes[0] == 0xFF, bytes[1] == 0xD8 else {
            return .failure(InvalidJPEG(reason: "does not start with a JPEG SOI marker (FF D8)"))
        }
        guard bytes[bytes.count - 2] == 0xFF, bytes[bytes.count - 1] == 0xD9 else {
            return .failure(InvalidJPEG(reason: "does not end with a JPEG EOI marker (FF D9): truncated"))
        }
        var index = 2
        while index + 3 < bytes.count {
            guard bytes[index] == 0xFF else {
                return .failure(InvalidJPEG(reason: "no marker at byte \(index)"))
            }
            var marker = bytes[index + 1]
            while marker == 0xFF, index + 2 < bytes.count {  // fill bytes
                index += 1
                marker = bytes[index + 1]
            }
            if marker == 0x01 || (0xD0...0xD7).contains(marker) {  // no length
                index += 2
                continue
            }
            if marker == 0xDA || marker == 0xD9 { break }  // image data starts: no SOF seen
            let length = Int(bytes[index + 2]) << 8 | Int(bytes[index + 3])
            guard length >= 2, index + 2 + length <= bytes.count else {
                return .failure(InvalidJPEG(reason: "segment at byte \(index) runs past the end"))
            }
            let isSOF = (0xC0...0xCF).contains(marker) && marker != 0xC4 && marker != 0xC8 && marker != 0xCC
            if isSOF {
                guard length >= 7 else { return .failure(InvalidJPEG(reason: "SOF segment too short")) }
                let height = Int(bytes[index + 5]) << 8 | Int(bytes[index + 6])
                let width = Int(bytes[index + 7]) << 8 | Int(bytes[index + 8])
                guard width > 0, height > 0 else {
                    return .failure(InvalidJPEG(reason: "frame header gives a size of \(width)x\(height)"))
                }
                return .success(JPEGInspection(width: width, height: height))
            }
            index += 2 + length
        }
        return .failure(InvalidJPEG(reason: "no frame header (SOF) before the image data"))
    }
}

struct InvalidJPEG: Error, Hashable, Sendable {
    var reason: String
}
