import FuzzSupport
import SwiftWingCore

/// Bytes as `/proc/self/mountinfo` text through ``MountTable/parse(_:)`` (a line that lacks a field
/// is skipped), and each line again on its own: the same entries either way, every entry with the
/// fields proc(5) promises, never a trap.
func fuzzMountTable(_ bytes: UnsafeRawBufferPointer) {
    let text = String(decoding: bytes, as: UTF8.self)
    let entries = MountTable.parse(text)
    let lines = text.split(separator: "\n", omittingEmptySubsequences: true)
    precondition(entries.count <= lines.count, "more entries than lines")
    precondition(entries == lines.compactMap { MountTable.parseLine($0) }, "whole and line by line differ")
    for entry in entries {
        precondition(entry.device.split(separator: ":", omittingEmptySubsequences: false).count == 2, "no major:minor")
        precondition(!entry.fileSystemType.isEmpty && !entry.source.isEmpty, "a field went missing")
    }
}

@main enum FuzzMain { static func main() { FuzzInput.main(fuzzMountTable) } }
