import ApplianceCore
import ArgumentParser
import Foundation
import Hummingbird
import Logging
import WebInterface

/// `swiftwing-web`: the library in a browser, a process of its own beside the daemon (which never depends on it).
@main
struct SwiftWingWeb: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "swiftwing-web",
        abstract: "Serve the library to browsers on the network (see, search, correct and export it).",
        version: ApplianceInfo.version)

    @Option(name: .long, help: "Configuration file (default: /etc/swiftwing/swiftwing.toml if present).")
    var config: String?

    @Option(name: .customLong("state-dir"), help: "State directory of the daemon: database, spool.")
    var stateDirectory: String?

    @Option(name: .customLong("control-socket"), help: "The daemon's control socket.")
    var controlSocket: String?

    @Option(help: "Listen on this port instead of [web] port (0: any free port, printed at start).")
    var port: Int?

    func run() async throws {
        var overrides: [(key: String, value: String, flag: String)] = []
        if let stateDirectory { overrides.append(("daemon.state_directory", absolute(stateDirectory), "--state-dir")) }
        if let controlSocket {
            overrides.append(("daemon.control_socket", absolute(controlSocket), "--control-socket"))
        }
        var configuration: ApplianceConfiguration
        do {
            configuration = try ConfigurationLoader.load(
                path: config, environment: ProcessInfo.processInfo.environment, overrides: overrides)
        } catch {
            throw ValidationError(error.description)
        }
        if let port { configuration.web.port = port }
        var logger = Logger(label: "swiftwing-web")
        logger.logLevel = configuration.logLevel
        guard configuration.web.enabled else {
            logger.notice(
                "the library in a browser is off: set `enabled = true` under [web] in the configuration file to serve it"
            )
            print("swiftwing-web: off ([web] enabled = false); nothing to serve")
            return
        }
        let app: WebApp
        do {
            app = try WebApp(settings: WebSettings(configuration: configuration), logger: logger)
        } catch {
            throw ValidationError(error.description)
        }
        let address = configuration.web.address
        try await app.makeApplication(onRunning: { port in
            // Unbuffered, so a supervisor or test reading the pipe sees it at once.
            FileHandle.standardOutput.write(Data("swiftwing-web: listening on \(address) port \(port)\n".utf8))
        }).runService()
    }

    private func absolute(_ path: String) -> String {
        path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
    }
}
