import Testing

@testable import SwiftWingCore

#if canImport(Glibc)
    import Glibc
#endif

@Suite struct ChildSpawnTests {
    /// Runs `script` under /bin/sh as a spawned child and returns what it wrote to stdout.
    private func output(ofShell script: String) throws -> String {
        var pipeEnds: [Int32] = [-1, -1]
        #expect(pipe(&pipeEnds) == 0)
        let null = open("/dev/null", O_RDWR | O_CLOEXEC)
        defer { close(null) }
        let pid = try spawnChild(
            executable: "/bin/sh", arguments: ["-c", script], standardInput: null, standardOutput: pipeEnds[1],
            standardError: null)
        close(pipeEnds[1])
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(pipeEnds[0], $0.baseAddress, $0.count) }
            if count <= 0 { break }
            bytes += chunk[..<count]
        }
        close(pipeEnds[0])
        var status: Int32 = 0
        _ = waitpid(pid, &status, 0)
        return String(decoding: bytes, as: UTF8.self)
    }

    @Test func aChildGetsItsThreeStreamsAndNoOtherDescriptorOfOurs() throws {
        // Without close-on-exec, as a library might leave one: an exec'd child would keep it. Numbered high, so no
        // descriptor the shell opens while it lists its own can carry the same number.
        let opened = open("/dev/null", O_RDONLY)
        let leaky = fcntl(opened, F_DUPFD, 100)
        close(opened)
        #expect(leaky >= 100)
        #expect(fcntl(leaky, F_GETFD) & FD_CLOEXEC == 0)
        defer { close(leaky) }
        let listed = try output(ofShell: "for f in /proc/$$/fd/*; do echo \"${f##*/}\"; done")
        let descriptors = Set(listed.split(separator: "\n").compactMap { Int32($0) })
        #expect(descriptors.isSuperset(of: [0, 1, 2]), "the child's descriptors: \(listed)")
        #expect(!descriptors.contains(leaky), "descriptor \(leaky) of the parent reached the child: \(listed)")
    }

    @Test func aMissingExecutableIsAnErrorNamingIt() {
        #expect {
            _ = try spawnChild(
                executable: "/nonexistent/worker", arguments: [], standardInput: 0, standardOutput: 1,
                standardError: 2)
        } throws: { error in
            let failure = error as? SystemCallError
            return failure?.errno == ENOENT && failure?.subject == "/nonexistent/worker"
        }
    }
}
