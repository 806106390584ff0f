import Appliance
import ArgumentParser

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
