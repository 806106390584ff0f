import Foundation
import Logging

/// Control-socket commands that break the daemon on purpose, for the guest tests that prove systemd
/// recovers it. They answer only when the daemon was started with `SWIFTWING_TEST_HOOKS=1` in its
/// environment (a unit drop-in), so no client, script or typo can wedge a device in the field.
struct TestHooks: Sendable {
    static let environmentVariable = "SWIFTWING_TEST_HOOKS"

    let enabled: Bool
    let worker: BoundedWorker
    let logger: Logger

    init(worker: BoundedWorker, logger: Logger, environment: [String: String] = ProcessInfo.processInfo.environment) {
        self.enabled = environment[Self.environmentVariable] == "1"
        self.worker = worker
        self.logger = logger
    }

    func handle(_ request: ControlRequest) -> ControlReply {
        guard enabled else {
            return .refused(
                "\(request.command.rawValue) is a test hook: start the daemon with \(Self.environmentVariable)=1 "
                    + "(a unit drop-in) to use it; never on a device in use")
        }
        guard let slot = worker.reserve() else {
            return .refused("every processing slot is busy: try the test hook again when presses are done")
        }
        logger.critical("test hook: the processing worker now blocks forever; the watchdog should restart the daemon")
        Task.detached {
            _ = try? await slot.run { () -> Void in
                while true { sleep(3600) }
            }
        }
        return ControlReply(ok: true, scanId: nil, error: nil, status: nil)
    }
}
