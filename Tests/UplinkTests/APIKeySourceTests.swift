import Foundation
import Glibc
import Testing

@testable import Uplink

/// Issue 36, point 3: the daemon's key file is opened without following links and is read only if
/// it is a regular file of at most 4 KiB (before, `Data(contentsOf:)` followed links and read a FIFO
/// or /dev/zero until memory ran out).
@Suite struct APIKeySourceTests {
    private func folder() throws -> String {
        let path = NSTemporaryDirectory() + "apikey-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    @Test("a key file that is a symbolic link is refused and the error names the file, not the key")
    func symbolicLinkRefused() throws {
        let directory = try folder()
        try Data("linked-secret\n".utf8).write(to: URL(fileURLWithPath: directory + "/elsewhere"))
        symlink(directory + "/elsewhere", directory + "/api-key")
        let error = #expect(throws: UplinkError.self) { try APIKeySource(path: directory + "/api-key").read() }
        let text = error?.description ?? ""
        #expect(text.contains(directory + "/api-key"))
        #expect(text.contains("symbolic link"))
        #expect(!text.contains("linked-secret"))
    }

    @Test("/dev/zero as the key file is refused without reading it")
    func devZeroRefused() throws {
        let error = #expect(throws: UplinkError.self) { try APIKeySource(path: "/dev/zero").read() }
        #expect(error?.description.contains("character device") == true)
    }

    @Test("a FIFO as the key file is refused at once")
    func fifoRefused() throws {
        let path = try folder() + "/api-key"
        #expect(mkfifo(path, 0o600) == 0)
        let error = #expect(throws: UplinkError.self) { try APIKeySource(path: path).read() }
        #expect(error?.description.contains("FIFO") == true)
    }

    @Test("a 5 KiB key file is refused; a regular one-line file gives the key")
    func sizes() throws {
        let directory = try folder()
        try Data(String(repeating: "x", count: 5000).utf8).write(to: URL(fileURLWithPath: directory + "/big"))
        let error = #expect(throws: UplinkError.self) { try APIKeySource(path: directory + "/big").read() }
        #expect(error?.description.contains("larger than 4096 bytes") == true)
        try Data("the-key\n".utf8).write(to: URL(fileURLWithPath: directory + "/ok"))
        #expect(try APIKeySource(path: directory + "/ok").read() == "the-key")
    }
}
