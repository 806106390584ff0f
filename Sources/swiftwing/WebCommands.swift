import Appliance
import ArgumentParser
import Foundation

extension SwiftWingCommand {
    struct Web: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "The library in a browser (swiftwing-web): pair a browser, or unpair them all.",
            subcommands: [Pair.self, Revoke.self])

        struct Pair: ParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Print a 6-digit code (valid 5 minutes, once) that pairs one browser, and the page's address."
            )

            @OptionGroup var common: CommonOptions

            func run() throws {
                let configuration = try common.load()
                do {
                    print(try WebPairing.pair(configuration: configuration))
                } catch {
                    throw CommandFailure(error.description)
                }
                // The panel shows the code too (the daemon reads it from the state directory: it is not sent).
                do {
                    let reply = try ControlClient.send(
                        ControlRequest(command: .showPairing), to: configuration.controlSocket)
                    if !reply.ok {
                        FileHandle.standardError.write(
                            Data("note: not on the panel: \(reply.error ?? "refused")\n".utf8))
                    }
                } catch {
                    FileHandle.standardError.write(Data("note: not on the panel (\(error.description))\n".utf8))
                }
            }
        }

        struct Revoke: ParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "End every browser's pairing: each must pair again with a new code.")

            @OptionGroup var common: CommonOptions

            func run() throws {
                let configuration = try common.load()
                do {
                    let count = try WebPairing.revoke(configuration: configuration)
                    print("ended \(count) browser \(count == 1 ? "session" : "sessions")")
                } catch {
                    throw CommandFailure(error.description)
                }
            }
        }
    }
}
