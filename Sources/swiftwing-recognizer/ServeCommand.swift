import ArgumentParser

/// Scaffolding: being written on its own branch.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "serve")
    func run() async throws { throw ValidationError("serve is not built yet") }
}
