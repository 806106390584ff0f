import NIOPosix

/// Runs blocking work (SQLite, the control socket, files) on NIO's thread pool, never on the cooperative pool
/// the request handlers run on.
func blocking<Value: Sendable>(_ work: @escaping @Sendable () throws -> Value) async throws -> Value {
    try await NIOThreadPool.singleton.runIfActive(work)
}
