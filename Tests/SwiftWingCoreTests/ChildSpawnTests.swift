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

    @Test func aChildStartsWithNoSignalBlockedOrIgnored() throws {
        // Blocked here as libdispatch blocks them on the threads Swift concurrency runs on; SIGPIPE ignored as the
        // Swift runtime leaves it. Only this thread's mask changes; the disposition is the process's, put back after.
        var blocked = sigset_t()
        sigemptyset(&blocked)
        sigaddset(&blocked, SIGTERM)
        sigaddset(&blocked, SIGINT)
        var previous = sigset_t()
        #expect(pthread_sigmask(SIG_BLOCK, &blocked, &previous) == 0)
        defer { pthread_sigmask(SIG_SETMASK, &previous, nil) }
        let pipeAction = signal(SIGPIPE, SIG_IGN)
        defer { signal(SIGPIPE, pipeAction) }
        let status = try output(ofShell: "exec grep -E '^Sig(Blk|Ign):' /proc/self/status")
        let masks = Dictionary(
            uniqueKeysWithValues: status.split(separator: "\n").compactMap { line -> (String, UInt64)? in
                let parts = line.split(separator: ":").map { $0.trimmingCharacters(in: .whitespaces) }
                guard parts.count == 2, let mask = UInt64(parts[1], radix: 16) else { return nil }
                return (parts[0], mask)
            })
        #expect(masks["SigBlk"] == 0, "the child's signals: \(status)")
        // Signals 1–31 (glibc keeps two of its own real-time signals, 32 and 33, as it likes).
        #expect(masks["SigIgn"].map { $0 & 0x7fff_ffff } == 0, "the child's signals: \(status)")
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
