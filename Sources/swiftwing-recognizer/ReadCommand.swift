import ArgumentParser

/// Scaffolding: being written on its own branch.
struct ReadCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "read")
    func run() async throws { throw ValidationError("read is not built yet") }
}
