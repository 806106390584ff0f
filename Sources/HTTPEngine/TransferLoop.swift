import CCurl
import Foundation
import Logging
import SwiftWingCore
import Synchronization

/// libcurl's process-wide set-up. `curl_global_init` is not thread-safe; a Swift static's
/// initializer runs exactly once per process.
enum CurlGlobal {
    /// `curl_global_init`'s result, and whether libssh2 (which Debian's libcurl links) was told
    /// first to leave its crypto library alone (see `sw_curl_global_init_default`).
    static let setUp: (result: CURLcode, libssh2CryptoSkipped: Bool) = {
        var skipped: Int32 = 0
        let result = sw_curl_global_init_default(&skipped)
        return (result, skipped != 0)
    }()
}

/// The transfer thread: one curl multi handle, owned and driven by one named thread.
///
/// Other threads never touch the multi handle; they queue a command under a lock and call
/// `curl_multi_wakeup`, which interrupts `curl_multi_poll`. The multi handle is freed in `deinit`,
/// after the thread ended, so a late wakeup never meets a freed handle.
final class TransferLoop: @unchecked Sendable {
    private enum Command {
        case add(Transfer)
        case cancel(Transfer)
        case resume(Transfer)
        case stop
    }

    private struct Queue {
        var commands: [Command] = []
        var stopping = false
    }

    private let multi: UnsafeMutableRawPointer
    private let queue = Mutex(Queue())
    private let configuration: CurlEngine.Configuration
    private let logger: Logger
    // Set once at the end of `init`, before any other thread can see this loop.
    private var thread: DeviceThread?

    // Transfer-thread state.
    private var active: [UnsafeMutableRawPointer: Transfer] = [:]

    init(configuration: CurlEngine.Configuration, logger: Logger) {
        let global = CurlGlobal.setUp.result
        precondition(global == CURLE_OK, "curl_global_init failed: \(global.rawValue)")
        guard let multi = curl_multi_init() else { fatalError("curl_multi_init failed (out of memory)") }
        self.multi = multi
        self.configuration = configuration
        self.logger = logger
        _ = sw_curl_multi_setopt_long(
            multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, max(1, configuration.maximumConcurrentConnections))

        // The thread holds the loop until `run()` returns, so `deinit` never meets a running thread.
        thread = DeviceThread(name: "swiftwing-http") { self.run() }
    }

    deinit {
        curl_multi_cleanup(multi)
    }

    // MARK: Any thread

    /// Queues `transfer`; after `stop()` it fails at once with `.engineStopped`.
    func submit(_ transfer: Transfer) {
        if !enqueue(.add(transfer)) { transfer.complete(.failure(.engineStopped)) }
    }

    /// Asks for `transfer` to end with `.cancelled`, promptly. Harmless when it already ended.
    func cancel(_ transfer: Transfer) {
        transfer.cancelRequested.store(true, ordering: .releasing)
        guard !transfer.isCompleted else { return }
        _ = enqueue(.cancel(transfer))
    }

    /// Unpauses a stream whose consumer caught up.
    func resume(_ transfer: Transfer) {
        guard !transfer.isCompleted else { return }
        _ = enqueue(.resume(transfer))
    }

    /// Fails every transfer with `.engineStopped`, ends the thread and waits for it. Idempotent;
    /// from the transfer thread itself it does not wait.
    func stop() {
        let first = queue.withLock { queue in
            guard !queue.stopping else { return false }
            queue.commands.append(.stop)
            queue.stopping = true
            return true
        }
        if first { curl_multi_wakeup(multi) }
        thread?.join()
    }

    private func enqueue(_ command: Command) -> Bool {
        let queued = queue.withLock { queue in
            guard !queue.stopping else { return false }
            queue.commands.append(command)
            return true
        }
        // Thread-safe by design: it writes to curl's internal wakeup pipe.
        if queued { curl_multi_wakeup(multi) }
        return queued
    }

    // MARK: Transfer thread

    private func run() {
        var stopping = false
        while !stopping {
            let commands = queue.withLock { queue in
                defer { queue.commands = [] }
                return queue.commands
            }
            for command in commands {
                switch command {
                case .add(let transfer):
                    if stopping { transfer.complete(.failure(.engineStopped)) } else { start(transfer) }
                case .cancel(let transfer):
                    if let easy = transfer.easy, active[easy] != nil { end(transfer, .cancelled) }
                case .resume(let transfer):
                    if let easy = transfer.easy, active[easy] != nil {
                        transfer.isPausedForConsumer = false
                        _ = curl_easy_pause(easy, sw_curl_pause_continue())
                    }
                case .stop:
                    stopping = true
                }
            }
            guard !stopping else { break }

            var running: Int32 = 0
            _ = curl_multi_perform(multi, &running)
            collectFinished()
            // Returns on socket activity, curl's next timer, a wakeup, or after a second at most.
            _ = curl_multi_poll(multi, nil, 0, 1000, nil)
        }
        for transfer in Array(active.values) { end(transfer, .engineStopped) }
        logger.debug("HTTP engine stopped")
    }

    private func start(_ transfer: Transfer) {
        guard !transfer.cancelRequested.load(ordering: .acquiring) else {
            transfer.complete(.failure(.cancelled))
            return
        }
        do {
            try transfer.prepare(configuration)
        } catch {
            transfer.releaseHandle()
            transfer.complete(.failure(error))
            return
        }
        guard let easy = transfer.easy else { return }
        let code = curl_multi_add_handle(multi, easy)
        guard code == CURLM_OK else {
            transfer.releaseHandle()
            let text = String(cString: curl_multi_strerror(code))
            transfer.complete(.failure(.other(code: Int(code.rawValue), detail: "curl_multi_add_handle: \(text)")))
            return
        }
        active[easy] = transfer
    }

    /// Reads curl's "done" messages and ends those transfers.
    /// The corresponding C function is `curl_multi_info_read`.
    private func collectFinished() {
        var finished: [(Transfer, CURLcode)] = []
        var remaining: Int32 = 0
        while let message = curl_multi_info_read(multi, &remaining) {
            guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle,
                let transfer = active[easy]
            else { continue }
            finished.append((transfer, message.pointee.data.result))
        }
        for (transfer, code) in finished {
            remove(transfer)
            transfer.finish(code: code)
            log(transfer, outcome: nil, code: code)
            transfer.releaseHandle()
        }
    }

    /// Ends a transfer curl has not finished: cancelled or engine stopped.
    private func end(_ transfer: Transfer, _ error: HTTPError) {
        remove(transfer)
        transfer.complete(.failure(error))
        log(transfer, outcome: error, code: CURLE_OK)
        transfer.releaseHandle()
    }

    private func remove(_ transfer: Transfer) {
        guard let easy = transfer.easy else { return }
        _ = curl_multi_remove_handle(multi, easy)
        active[easy] = nil
    }

    /// One debug line per transfer: method, URL without query, status, bytes, milliseconds. Never headers.
    private func log(_ transfer: Transfer, outcome: HTTPError?, code: CURLcode) {
        guard logger.logLevel <= .debug else { return }
        let elapsed = transfer.clock.now - transfer.startedAt
        var metadata: Logger.Metadata = [
            "method": "\(transfer.request.method.rawValue)",
            "url": "\(transfer.target.redacted)",
            "status": "\(transfer.status)",
            "bytes": "\(transfer.receivedBytes)",
            "ms": "\(Transfer.milliseconds(elapsed))",
        ]
        if let outcome {
            metadata["error"] = "\(outcome)"
        } else if code != CURLE_OK {
            metadata["error"] = "\(transfer.error(for: code))"
        }
        logger.debug("HTTP transfer ended", metadata: metadata)
    }
}
