import Appliance
import ArgumentParser
import Foundation
import Logging

@main
struct SwiftWingCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "swiftwing",
        abstract: "Book-scanning kiosk: press the shutter, the shelf becomes a library.",
        version: ApplianceInfo.version,
        subcommands: [
            Run.self, Shutter.self, Status.self, Queue.self, Library.self, Review.self, Export.self, Doctor.self,
            IdentifyPictures.self,
            Web.self,
        ]
    )

    /// The memory settings come before anything else: the threads the runtime starts later take
    /// their stacks and arenas under them (a stack touched before transparent huge pages were off
    /// kept a 2 MiB page). `run` applies them again and logs if they failed.
    static func main() async {
        ApplianceDaemon.tuneMemory()
        await main(nil)
    }
}

/// Options every command takes to find the configuration and the state directory.
struct CommonOptions: ParsableArguments {
    @Option(name: .long, help: "Configuration file (default: /etc/swiftwing/swiftwing.toml if present).")
    var config: String?

    @Option(name: .customLong("state-dir"), help: "State directory: database, spool, device id.")
    var stateDirectory: String?

    @Option(name: .customLong("control-socket"), help: "The daemon's control socket.")
    var controlSocket: String?

    /// Flags override the environment, which overrides the file.
    func load(extra: [(key: String, value: String, flag: String)] = []) throws -> ApplianceConfiguration {
        var overrides = extra
        if let stateDirectory { overrides.append(("daemon.state_directory", absolute(stateDirectory), "--state-dir")) }
        if let controlSocket {
            overrides.append(("daemon.control_socket", absolute(controlSocket), "--control-socket"))
        }
        do {
            return try ConfigurationLoader.load(
                path: config, environment: ProcessInfo.processInfo.environment, overrides: overrides)
        } catch {
            throw CommandFailure(error.description)
        }
    }
}

/// Relative paths on the command line are relative to the working directory.
func absolute(_ path: String) -> String {
    path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
}

/// A failure whose text is the whole message for the operator (no stack, no type name).
struct CommandFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

extension SwiftWingCommand {
    struct Run: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Run the kiosk daemon (what systemd starts).")

        @OptionGroup var common: CommonOptions

        @Option(help: "Camera: /dev/videoN, a /dev/v4l/by-id path, synthetic, or synthetic:DIR of JPEGs.")
        var camera: String?

        @Option(help: "Recognition backend base URL.")
        var backend: String?

        @Option(help: "Status panel: fb:/dev/fb0, png:PATH or none.")
        var panel: String?

        @Option(name: .customLong("log-level"), help: "trace, debug, info, notice, warning, error or critical.")
        var logLevel: String?

        func run() async throws {
            var extra: [(key: String, value: String, flag: String)] = []
            if let camera {
                extra.append(("camera.device", camera.hasPrefix("synthetic") ? camera : absolute(camera), "--camera"))
            }
            if let backend { extra.append(("backend.url", backend, "--backend")) }
            if let panel { extra.append(("panel.output", panel, "--panel")) }
            if let logLevel { extra.append(("daemon.log_level", logLevel, "--log-level")) }
            let configuration: ApplianceConfiguration
            do {
                configuration = try common.load(extra: extra)
            } catch {
                // Said on the panel and held until the file changes, not a restart every few seconds.
                await ApplianceDaemon.holdUnloadableConfiguration(
                    String(describing: error), configurationPath: common.config.map(absolute), panel: panel)
                throw error
            }
            do {
                try await ApplianceDaemon(configuration: configuration, configurationPath: common.config.map(absolute))
                    .run()
            } catch let error as ApplianceError {
                throw CommandFailure(error.description)
            }
        }
    }

    struct Shutter: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Press the shutter through the daemon's control socket; prints the scan id once it is saved.")

        @OptionGroup var common: CommonOptions

        func run() throws {
            let configuration = try common.load()
            let reply: ControlReply
            do {
                reply = try ControlClient.send(ControlRequest(command: .shutter), to: configuration.controlSocket)
            } catch {
                throw CommandFailure(error.description)
            }
            guard reply.ok, let id = reply.scanId else {
                throw CommandFailure("press refused: \(reply.error ?? "no reason given")")
            }
            print(id)
        }
    }

    struct Status: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "The device's state: daemon, camera, queue and library counts. Works with or without the daemon.")

        @OptionGroup var common: CommonOptions

        @Flag(help: "Print stable JSON (documented in README.md).")
        var json = false

        func run() throws {
            let configuration = try common.load()
            let report = StatusReport.gather(configuration: configuration)
            print(json ? report.json() : report.text())
        }
    }

    struct Queue: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "The scans on their way to the library: list them, retry failed ones, discard one.",
            subcommands: [List.self, Retry.self, Discard.self], defaultSubcommand: List.self)

        struct List: ParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "List the scans in the queue (newest first). Works with or without the daemon.")

            @OptionGroup var common: CommonOptions

            @Flag(help: "Print stable JSON (documented in README.md).")
            var json = false

            func run() throws {
                let configuration = try common.load()
                do {
                    let report = try QueueReport.gather(configuration: configuration)
                    print(json ? report.json() : report.text())
                } catch let error as ApplianceError {
                    throw CommandFailure(error.description)
                }
            }
        }

        struct Retry: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Send a failed scan (or every failed scan) again; its photo was kept.")

            @OptionGroup var common: CommonOptions

            @Argument(help: "The scan's id, from `swiftwing queue`.")
            var id: String?

            @Flag(help: "Retry every failed scan.")
            var all = false

            func validate() throws {
                guard (id != nil) != all else { throw ValidationError("give one scan id, or --all") }
            }

            func run() async throws {
                let reply = try await perform(
                    ControlRequest(command: .retry, scanId: id, all: all ? true : nil), common)
                if let ids = reply.scanIds {
                    print(ids.isEmpty ? "no failed scans" : ids.joined(separator: "\n"))
                } else if let id = reply.scanId {
                    print(id)
                }
            }
        }

        struct Discard: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract:
                    "Give up on a scan: its work stops and its photo is deleted (the row stays, marked discarded).")

            @OptionGroup var common: CommonOptions

            @Argument(help: "The scan's id, from `swiftwing queue`.")
            var id: String

            func run() async throws {
                let reply = try await perform(ControlRequest(command: .discard, scanId: id), common)
                print(reply.scanId ?? id)
            }
        }

        static func perform(_ request: ControlRequest, _ common: CommonOptions) async throws -> ControlReply {
            let configuration = try common.load()
            let reply: ControlReply
            do {
                reply = try await QueueAction.perform(request, configuration: configuration)
            } catch {
                throw CommandFailure(error.description)
            }
            guard reply.ok else { throw CommandFailure(reply.error ?? "refused, no reason given") }
            return reply
        }
    }

    struct Doctor: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Check configuration, state directory, camera and libraries; say what to fix.")

        @OptionGroup var common: CommonOptions

        @Option(help: "Check this camera instead of the configured one.")
        var camera: String?

        func run() throws {
            var extra: [(key: String, value: String, flag: String)] = []
            if let camera {
                extra.append(("camera.device", camera.hasPrefix("synthetic") ? camera : absolute(camera), "--camera"))
            }
            let configuration = try common.load(extra: extra)
            let report = DoctorReport.run(configuration: configuration)
            print(report.text())
            if !report.healthy { throw ExitCode(1) }
        }
    }
}
