import ArgumentParser
import Foundation
import Logging
import TalariaReferenceServer

/// `talaria-reference`: the reference recognition backend (docs/protocol.md) for development, demos and tests.
@main
struct TalariaReference: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "talaria-reference",
        abstract: "Reference recognition backend speaking the Talaria v3 scan-job protocol, with switchable faults.",
        discussion: """
            Faults are KIND:NAME[:ARG]. Per run: --fault (every matching request). Per request: POST /_faults \
            {"faults": [...]} queues faults, each consumed by the next request of its kind.
            \(Fault.catalog.sorted { $0.key.rawValue < $1.key.rawValue }.map { "  \($0.key.rawValue): \($0.value.joined(separator: ", "))" }.joined(separator: "\n"))
            """)

    @Option(help: "Address to bind.") var host = "127.0.0.1"
    @Option(help: "Port to bind (0 = a free port).") var port = 8787
    @Option(help: "Write the bound port to this file once listening.") var portFile: String?
    @Option(help: "Require 'Authorization: Bearer <key>' on uploads, the key read from this file.") var apiKeyFile:
        String?
    @Option(help: "Upload envelope: sse-absolute, sse-relative, stream-token, status-only.") var envelope =
        "sse-relative"
    @Option(
        help: "A fault applied to every matching request (repeatable), e.g. upload:429-seconds, stream:drop-after:2.")
    var fault: [String] = []
    @Option(help: "Time from upload to the terminal event, in ms.") var recognitionDelayMs = 3000
    @Option(help: "The 'retry:' value sent at the start of each stream, in ms.") var retryMs = 5000
    @Option(help: "Idle time before a stream sends a ping, in ms.") var pingIntervalMs = 30000
    @Option(help: "Multiplies every server-side delay (0.1 = ten times faster).") var timeScale = 1.0
    @Flag(help: "Report progress on a 0–100 scale instead of 0–1.") var progressPercent = false
    @Option(help: "Base URL for absolute URLs (e.g. the TLS front's https://127.0.0.1:8443); default http://<Host>.")
    var publicBaseUrl: String?
    @Option(help: "Log level: trace, debug, info, notice, warning, error, critical.") var logLevel = "info"

    func run() async throws {
        var config = ReferenceConfiguration()
        config.host = host
        config.port = port
        guard let shape = EnvelopeShape(rawValue: envelope) else {
            throw ValidationError(
                "--envelope must be one of " + EnvelopeShape.allCases.map(\.rawValue).joined(separator: ", "))
        }
        config.envelope = shape
        do {
            config.faults = try fault.map { spelling throws(Fault.ParseError) in try Fault.parse(spelling) }
        } catch {
            throw ValidationError(error.description)
        }
        if let apiKeyFile {
            let key = try String(contentsOfFile: apiKeyFile, encoding: .utf8).trimmingCharacters(
                in: .whitespacesAndNewlines)
            guard !key.isEmpty else { throw ValidationError("--api-key-file \(apiKeyFile) is empty") }
            config.apiKey = key
        }
        config.recognitionDelayMs = recognitionDelayMs
        config.retryMs = retryMs
        config.pingIntervalMs = pingIntervalMs
        config.timeScale = timeScale
        config.progressPercent = progressPercent
        config.publicBaseURL = publicBaseUrl

        let level = Logger.Level(rawValue: logLevel) ?? .info
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        var logger = Logger(label: "talaria-reference")
        logger.logLevel = level
        let host = self.host
        let portFile = self.portFile
        let app = ReferenceServer.makeApplication(configuration: config, logger: logger) { port in
            if let portFile {
                try? "\(port)\n".write(toFile: portFile, atomically: true, encoding: .utf8)
            }
            // Unbuffered: scripts wait for exactly this line.
            FileHandle.standardOutput.write(Data("talaria-reference listening on http://\(host):\(port)\n".utf8))
        }
        try await app.runService()
    }
}
