import Foundation
import Store
import Uplink

/// `swiftwing queue retry ID|--all` and `swiftwing queue discard ID`: through the running daemon's
/// uplink when there is one (so a scan in flight is stopped first and the uplink wakes), else
/// straight on the store (the daemon is stopped, or has no backend).
struct QueueCommands: Sendable {
    let database: AppDatabase
    let spool: SpoolDirectory
    let uplink: UplinkService?

    func handle(_ request: ControlRequest) async -> ControlReply {
        do throws(StoreError) {
            switch request.command {
            case .retry:
                if request.all == true {
                    let ids = try await retryAll()
                    var reply = ControlReply(ok: true)
                    reply.scanIds = ids.map { $0.uuidString.lowercased() }
                    return reply
                }
                let id = try Self.scanID(request.scanId)
                let record = try await retry(id)
                return ControlReply(ok: true, scanId: record.idString)
            case .discard:
                let id = try Self.scanID(request.scanId)
                let record = try await discard(id)
                return ControlReply(ok: true, scanId: record.idString)
            case .shutter, .status, .exportStarted, .exportFinished, .exportFailed, .showPairing, .testWedgeWorker:
                return .refused("\(request.command.rawValue) is not a queue command")
            }
        } catch {
            return .refused(error.description)
        }
    }

    func retryAll() async throws(StoreError) -> [UUID] {
        if let uplink { return try await uplink.retryFailed() }
        return try ScanQueue(database: database).retryAllFailed()
    }

    func retry(_ id: UUID) async throws(StoreError) -> ScanRecord {
        if let uplink { return try await uplink.retry(id) }
        return try ScanQueue(database: database).retry(id)
    }

    func discard(_ id: UUID) async throws(StoreError) -> ScanRecord {
        if let uplink { return try await uplink.discard(id) }
        let record = try ScanQueue(database: database).markDiscarded(id)
        try spool.remove(scan: id)
        return record
    }

    static func scanID(_ text: String?) throws(StoreError) -> UUID {
        guard let text, let id = UUID(uuidString: text) else { throw StoreError.invalidScanID(text ?? "") }
        return id
    }
}

extension ControlReply {
    init(ok: Bool, scanId: String? = nil) {
        self.init(ok: ok, scanId: scanId, error: nil, status: nil)
    }
}

/// The CLI's side of `swiftwing queue retry|discard`.
public enum QueueAction {
    /// Asks the running daemon; when none answers, acts on the store directly while holding the
    /// state directory's lock (so a daemon starting meanwhile waits for it, or this fails clearly).
    public static func perform(_ request: ControlRequest, configuration: ApplianceConfiguration)
        async throws(ApplianceError)
        -> ControlReply
    {
        do {
            return try ControlClient.send(request, to: configuration.controlSocket)
        } catch .daemonNotRunning {
            // Nobody serves the socket: the store is ours for a moment.
        } catch {
            throw ApplianceError(error.description)
        }
        let state = StateDirectory(path: configuration.stateDirectory)
        do {
            let lock = try StateDirectoryLock.acquire(stateDirectory: state)
            defer { lock.release() }
            let database = try AppDatabase.open(state)
            return await QueueCommands(database: database, spool: SpoolDirectory(state), uplink: nil).handle(request)
        } catch {
            throw ApplianceError(error.description)
        }
    }
}
