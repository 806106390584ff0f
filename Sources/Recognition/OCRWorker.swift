import Foundation
import Synchronization

/// How to run the OCR worker (Sources/swiftwing-recognizer-ocr/ocr_worker.py in its virtual environment).
public struct OCRWorkerConfiguration: Sendable {
    /// The Python interpreter of the worker's virtual environment (made by scripts/ocr-venv.sh).
    public var python: String
    /// The worker script.
    public var script: String
    /// The worker's own options, e.g. `["--det-side", "1920"]` (ocr_worker.py --help lists them).
    public var workerArguments: [String]
    /// How long the worker may take to load its models and say it is ready.
    public var startupTimeout: Double
    /// How long one photo may take before the worker is considered hung and killed.
    public var readTimeout: Double

    public init(
        python: String, script: String, workerArguments: [String] = [], startupTimeout: Double = 60,
        readTimeout: Double = 60
    ) {
        self.python = python
        self.script = script
        self.workerArguments = workerArguments
        self.startupTimeout = startupTimeout
        self.readTimeout = readTimeout
    }

    /// Where the worker's virtual environment is in a checkout: `.ocr-venv` at the repository's root.
    public static let checkoutVenvName = ".ocr-venv"
    /// Where the worker script is in a checkout.
    public static let checkoutScriptPath = "Sources/swiftwing-recognizer-ocr/ocr_worker.py"

    /// The worker as installed or in a checkout. `SWIFTWING_OCR_VENV` (a virtual environment's folder) and
    /// `SWIFTWING_OCR_WORKER` (the script) win; otherwise `root` or the folders above the current directory and
    /// above the executable are searched for a checkout with its `.ocr-venv`, then the installed
    /// `/usr/lib/swiftwing-recognizer/ocr`. Throws, naming what is missing and how to make it, when none is found.
    public static func locate(
        root: String? = nil, environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws(OCRWorkerError) -> OCRWorkerConfiguration {
        let files = FileManager.default
        var candidates: [(venv: String, script: String)] = []
        if let venv = environment["SWIFTWING_OCR_VENV"] {
            let script = environment["SWIFTWING_OCR_WORKER"] ?? installedScript
            candidates.append((venv, script))
        }
        var roots: [String] = []
        if let root { roots.append(root) }
        roots += ancestorFolders(of: files.currentDirectoryPath)
        roots += ancestorFolders(
            of: URL(fileURLWithPath: CommandLine.arguments.first ?? "/").deletingLastPathComponent().path)
        for root in roots {
            candidates.append(
                (
                    "\(root)/\(checkoutVenvName)",
                    environment["SWIFTWING_OCR_WORKER"]
                        ?? "\(root)/\(checkoutScriptPath)"
                ))
        }
        candidates.append((installedVenv, environment["SWIFTWING_OCR_WORKER"] ?? installedScript))
        for candidate in candidates {
            let python = "\(candidate.venv)/bin/python3"
            if files.isExecutableFile(atPath: python) && files.fileExists(atPath: candidate.script) {
                return OCRWorkerConfiguration(python: python, script: candidate.script)
            }
        }
        throw .couldNotStart(
            "no OCR worker environment found (looked for \(checkoutVenvName) in a checkout, \(installedVenv), "
                + "and SWIFTWING_OCR_VENV): make one with scripts/ocr-venv.sh \(checkoutVenvName) at the repository's "
                + "root, or set SWIFTWING_OCR_VENV to one")
    }

    static let installedVenv = "/usr/lib/swiftwing-recognizer/ocr-venv"
    static let installedScript = "/usr/lib/swiftwing-recognizer/ocr/ocr_worker.py"
}

/// The real OCR step: a supervised worker process kept warm between photos. One thread of its own talks to the
/// worker (blocking pipe I/O stays off the cooperative pool); photos are read one at a time, in order. A worker that
/// crashes is started anew on the next photo; one that overruns `readTimeout` is killed. Both fail the photo with a
/// retryable ``OCRWorkerError``; the supervisor itself lives on. Its thread holds it until ``shutdown()``.
public final class OCRWorkerSupervisor: TextReading, @unchecked Sendable {
    public let configuration: OCRWorkerConfiguration
    private let clock: any WorkerClock
    // The queue of photos and the stop flag, shared with the I/O thread under `condition`.
    private let condition = NSCondition()
    private var requests: [Request] = []
    private var stopping = false
    private var stopped = false
    // Owned by the I/O thread only.
    private var process: WorkerProcess?
    private let counters = Mutex(Counters())

    private struct Request {
        let bytes: [UInt8]
        let reply: @Sendable (Result<ReadPhoto, OCRWorkerError>) -> Void
    }

    struct Counters {
        var starts = 0
        var workerPID: Int32?
    }

    public init(configuration: OCRWorkerConfiguration, clock: any WorkerClock = MonotonicWorkerClock()) {
        self.configuration = configuration
        self.clock = clock
        let thread = Thread { [self] in serveRequests() }
        thread.name = "ocr-supervisor"
        thread.start()
    }

    /// How many worker processes were started so far (a restart after a crash or a hang adds one).
    public var workerStarts: Int { counters.withLock { $0.starts } }
    /// The running worker's process id, if one runs (benchmarks read its memory from /proc).
    public var workerProcessID: Int32? { counters.withLock { $0.workerPID } }

    public func read(jpeg: [UInt8]) async throws -> ReadPhoto {
        try await withCheckedThrowingContinuation { continuation in
            enqueue(jpeg) { result in continuation.resume(with: result.mapError { $0 as any Error }) }
        }
    }

    /// Starts the worker now (loading its models) rather than on the first photo.
    public func warmUp() async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            enqueue([]) { result in
                continuation.resume(with: result.map { _ in () }.mapError { $0 as any Error })
            }
        }
    }

    /// Lets the worker finish (it exits when its input closes), kills it after a moment if it does not, and ends
    /// the I/O thread. Photos still queued fail as retryable. Waits until all that is done.
    public func shutdown() {
        condition.lock()
        stopping = true
        condition.broadcast()
        while !stopped { condition.wait() }
        condition.unlock()
    }

    private func enqueue(_ bytes: [UInt8], reply: @escaping @Sendable (Result<ReadPhoto, OCRWorkerError>) -> Void) {
        condition.lock()
        if stopping {
            condition.unlock()
            reply(.failure(.couldNotStart("the recognizer is shutting down")))
            return
        }
        requests.append(Request(bytes: bytes, reply: reply))
        condition.signal()
        condition.unlock()
    }

    private func serveRequests() {
        while true {
            condition.lock()
            while requests.isEmpty && !stopping { condition.wait() }
            if stopping {
                let abandoned = requests
                requests.removeAll()
                condition.unlock()
                for request in abandoned { request.reply(.failure(.couldNotStart("the recognizer is shutting down"))) }
                process?.finish(grace: 2, clock: clock)
                process = nil
                counters.withLock { $0.workerPID = nil }
                condition.lock()
                stopped = true
                condition.broadcast()
                condition.unlock()
                return
            }
            let request = requests.removeFirst()
            condition.unlock()
            // An empty request only warms the worker up.
            let result: Result<ReadPhoto, OCRWorkerError>
            do throws(OCRWorkerError) {
                let worker = try runningWorker()
                result =
                    request.bytes.isEmpty
                    ? .success(ReadPhoto(width: 0, height: 0, lines: []))
                    : .success(
                        try read(request.bytes, on: worker))
            } catch {
                result = .failure(error)
            }
            request.reply(result)
        }
    }

    private func runningWorker() throws(OCRWorkerError) -> WorkerProcess {
        if let process { return process }
        let started = try WorkerProcess(
            executable: configuration.python, arguments: [configuration.script] + configuration.workerArguments)
        counters.withLock {
            $0.starts += 1
            $0.workerPID = started.pid
        }
        let line: [UInt8]
        do {
            line = try started.readLine(deadline: clock.now + configuration.startupTimeout, clock: clock)
        } catch {
            started.kill()
            counters.withLock { $0.workerPID = nil }
            switch error {
            case .deadlinePassed:
                throw .couldNotStart(
                    "the OCR worker \(configuration.script) did not load its models within "
                        + "\(configuration.startupTimeout) s")
            case .ended(let detail):
                throw .couldNotStart(detail)
            }
        }
        guard let ready = try? JSONDecoder().decode(ReadyLine.self, from: Data(line)), ready.ready else {
            started.kill()
            counters.withLock { $0.workerPID = nil }
            throw .protocolViolation(
                "its first line should say it is ready; it was: \(String(decoding: line.prefix(200), as: UTF8.self))")
        }
        process = started
        return started
    }

    private func read(_ bytes: [UInt8], on worker: WorkerProcess) throws(OCRWorkerError) -> ReadPhoto {
        guard bytes.count <= Int(UInt32.max) else {
            throw .unreadableImage("\(bytes.count) bytes is more than the OCR worker's protocol carries (4 GiB)")
        }
        let length = UInt32(bytes.count)
        let frame =
            [UInt8(length >> 24), UInt8((length >> 16) & 0xff), UInt8((length >> 8) & 0xff), UInt8(length & 0xff)]
            + bytes
        let line: [UInt8]
        do {
            let deadline = clock.now + configuration.readTimeout
            try worker.write(frame, deadline: deadline, clock: clock)
            line = try worker.readLine(deadline: deadline, clock: clock)
        } catch {
            worker.kill()
            process = nil
            counters.withLock { $0.workerPID = nil }
            switch error {
            case .deadlinePassed: throw .timedOut(seconds: configuration.readTimeout)
            case .ended(let detail): throw .crashed(detail)
            }
        }
        let reply: WorkerReply
        do {
            reply = try JSONDecoder().decode(WorkerReply.self, from: Data(line))
        } catch {
            // Out of step with the worker: start afresh next time.
            worker.kill()
            process = nil
            counters.withLock { $0.workerPID = nil }
            throw .protocolViolation("\(error) in the line \(String(decoding: line.prefix(200), as: UTF8.self))")
        }
        if let message = reply.error { throw .unreadableImage(message) }
        guard let width = reply.width, let height = reply.height, let lines = reply.lines else {
            throw .protocolViolation("a reply without width, height and lines")
        }
        return ReadPhoto(width: width, height: height, lines: lines, separators: reply.separators ?? [])
    }

    private struct ReadyLine: Decodable {
        let ready: Bool
    }

    private struct WorkerReply: Decodable {
        let error: String?
        let width: Int?
        let height: Int?
        let lines: [TextLine]?
        let separators: [SpineSeparator]?
    }
}
