import ArgumentParser

/// Scaffolding: being written on its own branch.
struct MatchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "match")
    func run() async throws { throw ValidationError("match is not built yet") }
}
