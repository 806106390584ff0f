import Glibc
import SwiftWingCore
import Testing

/// Issue 36, point 3: a key file is a regular file of at most 4 KiB, never a link, a FIFO or a device.
@Suite struct SecretFileTests {
    private func folder() -> String {
        var template = Array("/tmp/secretfile-XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        precondition(made != nil, "mkdtemp failed")
        return String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    private func write(_ text: String, to path: String) {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        precondition(fd >= 0)
        _ = text.utf8CString.withUnsafeBytes { Glibc.write(fd, $0.baseAddress!, $0.count - 1) }
        close(fd)
    }

    @Test("a regular file gives its key, trimmed")
    func regularFile() throws {
        let path = folder() + "/api-key"
        write("  sekrit-key\n", to: path)
        #expect(try SecretFile.readKey(path) == "sekrit-key")
    }

    @Test("a symbolic link to a key is refused, naming the file and the fix")
    func symbolicLink() throws {
        let directory = folder()
        write("other-secret\n", to: directory + "/target")
        symlink(directory + "/target", directory + "/api-key")
        let error = #expect(throws: SecretFileError.self) { try SecretFile.readKey(directory + "/api-key") }
        #expect(error?.problem == .symbolicLink)
        #expect(error?.description.contains(directory + "/api-key") == true)
        #expect(error?.description.contains("other-secret") == false)
    }

    @Test("a FIFO without a writer is refused at once instead of blocking the open")
    func fifo() throws {
        let path = folder() + "/api-key"
        #expect(mkfifo(path, 0o600) == 0)
        let error = #expect(throws: SecretFileError.self) { try SecretFile.read(path) }
        #expect(error?.problem == .notRegular(kind: "a FIFO"))
    }

    @Test("/dev/zero is refused before anything is read")
    func devZero() throws {
        let error = #expect(throws: SecretFileError.self) { try SecretFile.read("/dev/zero") }
        #expect(error?.problem == .notRegular(kind: "a character device"))
        #expect(error?.description.contains("/dev/zero") == true)
    }

    @Test("a file of 4 KiB is read; one byte more is refused")
    func oversize() throws {
        let directory = folder()
        write(String(repeating: "k", count: 4096), to: directory + "/exact")
        #expect(try SecretFile.read(directory + "/exact").count == 4096)
        write(String(repeating: "k", count: 4097), to: directory + "/over")
        let error = #expect(throws: SecretFileError.self) { try SecretFile.read(directory + "/over") }
        #expect(error?.problem == .tooLarge(limit: 4096))
    }

    @Test("a directory and a missing file are refused with their reason")
    func directoryAndMissing() throws {
        let directory = folder()
        let error = #expect(throws: SecretFileError.self) { try SecretFile.read(directory) }
        #expect(error?.problem == .notRegular(kind: "a directory"))
        let missing = #expect(throws: SecretFileError.self) { try SecretFile.read(directory + "/nothing") }
        #expect(missing?.description.contains("No such file") == true)
    }
}
