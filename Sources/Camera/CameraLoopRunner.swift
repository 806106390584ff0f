import SwiftWingCore
import Synchronization

/// A loop that owns a camera's descriptors on a thread of its own and says once whether it started.
protocol CameraLoop: AnyObject, Sendable {
    var onStarted: ((Result<Void, CameraError>) -> Void)? { get set }
    func run()
}

/// What every threaded ``FrameSource`` shares: a ``CaptureHub`` fed by one ``CameraLoop`` on a
/// ``DeviceThread``, and the start / stop / capture / status calls over them.
final class CameraLoopRunner: Sendable {
    let hub: CaptureHub
    private let thread = Mutex<DeviceThread?>(nil)

    init(device: String) {
        hub = CaptureHub(device: device)
    }

    /// Starts `makeLoop()` on a thread named `threadName` and returns once it streams, or throws why
    /// it could not start (then its thread has exited). A second start while running does nothing;
    /// a start after stop throws ``CameraError/notRunning(device:)``: a source is used once.
    func start(threadName: String, makeLoop: () -> any CameraLoop) async throws(CameraError) {
        guard hub.beginStarting() else {
            if hub.status.state == .stopped { throw .notRunning(device: hub.device) }
            return
        }
        hub.updateStatus { $0.state = .starting }
        let loop = makeLoop()
        let result: Result<Void, CameraError> = await withCheckedContinuation { continuation in
            loop.onStarted = { continuation.resume(returning: $0) }
            let started = DeviceThread(name: threadName) { loop.run() }
            thread.withLock { $0 = started }
        }
        if case .failure(let error) = result {
            thread.withLock { $0 }?.join()
            throw error
        }
    }

    /// Wakes the loop, waits for it to release the device and exit, and joins its thread.
    func stop() async {
        if hub.requestStop() {
            await hub.waitForExit()
        }
        thread.withLock { $0 }?.join()
    }
}
