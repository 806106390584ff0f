import FuzzSupport
import Store

/// A udev database record (`/run/udev/data/b<major>:<minor>`, lines `E:KEY=VALUE`) through the reader the USB
/// export trusts to pick a file system. The same as a plain line-by-line reading; no key or value holds a line
/// end; a file system type is never empty.
func fuzzUdevProperties(_ bytes: UnsafeRawBufferPointer) {
    let text = String(decoding: bytes, as: UTF8.self)
    let properties = UdevProperties(text: text)
    // The plain reading: every `E:` line of the bytes, the last of a key winning.
    var expected: [String: String] = [:]
    for line in Array(text.utf8).split(separator: 10)
    where line.count >= 2 && line.first == 69 && line.dropFirst().first == 58 {
        let pair = Array(line.dropFirst(2))
        guard let equals = pair.firstIndex(of: 61) else { continue }
        expected[String(decoding: pair[..<equals], as: UTF8.self)] =
            String(decoding: pair[(equals + 1)...], as: UTF8.self)
    }
    precondition(properties.values == expected, "the reader and a plain reading disagree")
    for (key, value) in properties.values {
        precondition(!key.utf8.contains(10) && !value.utf8.contains(10), "a line end inside a property")
    }
    if let type = properties.fileSystemType { precondition(!type.isEmpty) }
}

@main enum FuzzMain { static func main() { FuzzInput.main(fuzzUdevProperties) } }
