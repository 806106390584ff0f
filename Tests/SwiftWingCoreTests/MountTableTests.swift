import Foundation
import SwiftWingTesting
import Testing

@testable import SwiftWingCore

#if canImport(Glibc)
    import Glibc
#endif

@Suite struct MountTableTests {
    @Test func theLineFromProc5() throws {
        let entries = MountTable.parse(
            "36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue\n")
        let entry = try #require(entries.first)
        #expect(entries.count == 1)
        #expect(entry.id == 36 && entry.parentID == 35 && entry.device == "98:0")
        #expect(entry.root == "/mnt1" && entry.mountPoint == "/mnt2" && entry.mountOptions == "rw,noatime")
        #expect(entry.fileSystemType == "ext3" && entry.source == "/dev/root")
        #expect(entry.superOptions == "rw,errors=continue")
    }

    @Test func noOptionalFieldsSeveralOptionalFieldsAndEscapedPaths() {
        let entries = MountTable.parse(
            """
            22 1 8:1 / / rw - ext4 /dev/sda1 rw
            23 22 8:17 / /media/My\\040Stick\\011tab\\134back rw shared:5 master:2 propagate_from:1 - vfat /dev/sdb1 rw
            """)
        #expect(entries.map(\.mountPoint) == ["/", "/media/My Stick\ttab\\back"])
        #expect(entries.map(\.source) == ["/dev/sda1", "/dev/sdb1"])
    }

    @Test func malformedLinesAreSkippedNotTrusted() {
        let text = """
            garbage
            1 2 3:4 / /x rw - ext4
            x 2 3:4 / /x rw - ext4 /dev/a rw
            1 2 3-4 / /x rw - ext4 /dev/a rw
            1 2 3:4 / /x rw shared:1 ext4 /dev/a rw more
            1 2 :4 / /x rw - ext4 /dev/a rw
            1 2 99999999999:4 / /x rw - ext4 /dev/a rw
            5 6 7:8 / /ok\\ rw - ext4 /dev/\\777 rw
            """
        let entries = MountTable.parse(text)
        #expect(entries.count == 1)
        #expect(entries.first?.mountPoint == "/ok\\")
        #expect(entries.first?.source == "/dev/\\777")
    }

    @Test func thisProcessSeesItsRoot() throws {
        #expect(try MountTable.current().contains { $0.mountPoint == "/" })
    }

    @Test func aWatchedProcessEndsOnceAndTheWatchSaysSo() throws {
        let child = Process()
        child.executableURL = URL(fileURLWithPath: "/bin/sleep")
        child.arguments = ["30"]
        try child.run()
        let watch = try ProcessWatch(pid: child.processIdentifier)
        #expect(!watch.hasEnded)
        child.killAndReap()
        #expect(watch.hasEnded)
        #expect(throws: SystemCallError.self) { try ProcessWatch(pid: Int32.max) }
    }
}
