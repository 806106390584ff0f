import Foundation

/// A server the tests run as a real child process on a loopback port: started with its output appended to a log
/// file, then waited for until its own "listening" line is in that log and the port accepts connections (a port
/// answering alone could be another test's server that took the port meanwhile).
public enum ServerLaunch {
    /// The server did not come up: why, with what it wrote since this start.
    public struct Failure: Error, CustomStringConvertible {
        public enum Reason: Equatable, Sendable {
            /// It ended before listening, with this status.
            case exited(status: Int32)
            /// It did not listen within the deadline (it was stopped).
            case notListening(seconds: Double)
        }

        public var name: String
        public var port: Int
        public var reason: Reason
        /// What it wrote to its log since this start.
        public var output: String

        public var description: String {
            switch reason {
            case .exited(let status):
                "\(name) exited with status \(status) during start:\n\(output)"
            case .notListening(let seconds):
                "\(name) did not listen on 127.0.0.1:\(port) within \(seconds) s (stopped):\n\(output)"
            }
        }
    }

    /// Runs `executable` with `arguments` (which make it listen on `port`), its standard output and error appended
    /// to `logPath` (created when absent), and returns it once it has written `readyLine` and `port` accepts
    /// connections; the caller stops it. Throws ``Failure`` when it exits first, or when `seconds` pass (then it is
    /// stopped here: a server that never listens is of no use to a test).
    public static func start(
        _ name: String, executable: String, arguments: [String], port: Int, logPath: String,
        readyLine: String = "listening on", within seconds: Double
    ) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if !FileManager.default.fileExists(atPath: logPath) {
            _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        }
        let log = try FileHandle(forWritingTo: URL(fileURLWithPath: logPath))
        defer { try? log.close() }
        let logStart = Int(log.seekToEndOfFile())
        process.standardOutput = log
        process.standardError = log
        try process.run()
        func output() -> String {
            let written = (try? Data(contentsOf: URL(fileURLWithPath: logPath)))?.dropFirst(logStart) ?? Data()
            return String(decoding: written, as: UTF8.self)
        }
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            guard process.isRunning else {
                process.waitUntilExit()
                throw Failure(
                    name: name, port: port, reason: .exited(status: process.terminationStatus), output: output())
            }
            if output().contains(readyLine), LoopbackSocket.acceptsConnections(port: port) { return process }
            Thread.sleep(forTimeInterval: 0.05)
        }
        process.killAndReap()  // a server that never listened may never see a SIGTERM either
        throw Failure(name: name, port: port, reason: .notListening(seconds: seconds), output: output())
    }
}
