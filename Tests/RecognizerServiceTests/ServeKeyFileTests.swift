import Foundation
import Glibc
import Testing

/// Issue 36, point 3: `serve --api-key-file` takes a regular file of at most 4 KiB only, and says why not.
@Suite struct ServeKeyFileTests {
    private func refusal(keyFile: String) throws -> String {
        let (status, message, _) = try ServeStartupTests().serveOnAnEmptyCatalogue(["--api-key-file", keyFile])
        #expect(status != 0)
        #expect(!message.contains("the catalogue is empty"), "the key file was read: \(message)")
        #expect(message.contains(keyFile), "\(message)")
        return message
    }

    @Test func aSymbolicLinkIsNotFollowed() throws {
        let directory = NSTemporaryDirectory() + "serve-key-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try "a-secret\n".write(toFile: directory + "/real", atomically: true, encoding: .utf8)
        symlink(directory + "/real", directory + "/api-key")
        let message = try refusal(keyFile: directory + "/api-key")
        #expect(message.contains("symbolic link"), "\(message)")
        #expect(!message.contains("a-secret"))
    }

    @Test func devZeroAndAFIFOAreRefusedWithoutReading() throws {
        #expect(try refusal(keyFile: "/dev/zero").contains("character device"))
        let fifo = NSTemporaryDirectory() + "serve-key-fifo-" + UUID().uuidString
        #expect(mkfifo(fifo, 0o600) == 0)
        #expect(try refusal(keyFile: fifo).contains("FIFO"))
    }

    @Test func anOversizeKeyFileIsRefused() throws {
        let path = NSTemporaryDirectory() + "serve-key-big-" + UUID().uuidString
        try String(repeating: "k", count: 4097).write(toFile: path, atomically: true, encoding: .utf8)
        #expect(try refusal(keyFile: path).contains("larger than 4096 bytes"))
    }
}
