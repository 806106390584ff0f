import ArgumentParser

/// `swiftwing-recognizer`: reads book spines on shelf photos and matches them against a catalogue, offline.
/// `serve` speaks the recognition backend protocol (docs/protocol.md) so the daemon uses it like any backend.
@main
struct SwiftWingRecognizer: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "swiftwing-recognizer",
        abstract: "Identifies books on shelf photos: OCR of the spines, matched against a catalogue.",
        subcommands: [ServeCommand.self, ReadCommand.self, MatchCommand.self]
    )
}
