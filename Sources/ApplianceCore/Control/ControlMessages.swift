import Foundation
import SwiftWingCore

/// What a client asks the daemon over the control socket: one JSON object per line.
public struct ControlRequest: Codable, Equatable, Sendable {
    public enum Command: String, Codable, Sendable, CaseIterable {
        /// Press the shutter, as the physical button does.
        case shutter
        /// The daemon's live state (camera, processing, counts).
        case status
        /// Queue failed scans again: the one in `scanId`, or all of them with `all`.
        case retry
        /// Discard the scan in `scanId`: its work stops and its photo is deleted.
        case discard
        /// `swiftwing export --device` began writing `books` books to a USB stick: "do not remove".
        case exportStarted
        /// The export wrote `books` books into `file` and unmounted the stick: "safe to remove".
        case exportFinished
        /// The export ended without a file: `reason` is the short text for the panel.
        case exportFailed
        /// `swiftwing web pair` made a browser pairing code: the panel shows it (read from `web-access.sqlite`; the
        /// code is not in the request).
        case showPairing
        /// Blocks the processing worker forever, to prove the watchdog restarts a wedged daemon.
        /// Refused unless the daemon runs with `SWIFTWING_TEST_HOOKS=1` (see ``TestHooks``).
        case testWedgeWorker
    }

    public var command: Command
    public var scanId: String?
    public var all: Bool?
    /// For the export messages.
    public var books: Int? = nil
    public var file: String? = nil
    public var reason: String? = nil
    /// The stick's kernel name (`sda1`), and for `exportStarted` the export's process id: the panel
    /// says "do not remove" until that process has ended.
    public var device: String? = nil
    public var pid: Int32? = nil

    public init(command: Command, scanId: String? = nil, all: Bool? = nil) {
        self.command = command
        self.scanId = scanId
        self.all = all
    }

    /// The longest request line read; a longer one is dropped unanswered. A real request is under 1 KiB.
    public static let maximumLength = 64 << 10

    /// Why a line from a client is not a request.
    public struct Problem: Error, Equatable, Sendable, CustomStringConvertible {
        public var description: String
    }

    /// Reads one request line (without its newline), as the daemon does for every connection: at most
    /// ``maximumLength`` bytes of UTF-8 holding one JSON object with a known `command`.
    public static func parse(_ line: some Collection<UInt8>) -> Result<ControlRequest, Problem> {
        let example = "a JSON object like {\"command\":\"shutter\"}"
        guard line.count <= maximumLength else {
            return .failure(Problem(description: "the request is longer than \(maximumLength) bytes: send \(example)"))
        }
        guard String(validating: line, as: UTF8.self) != nil else {
            return .failure(Problem(description: "the request is not UTF-8 text: send \(example)"))
        }
        do {
            return .success(try JSONDecoder().decode(ControlRequest.self, from: Data(line)))
        } catch DecodingError.dataCorrupted(let context) where context.codingPath.count == 1 {
            let known = Command.allCases.map(\.rawValue).joined(separator: ", ")
            return .failure(Problem(description: "unknown command: the daemon knows \(known)"))
        } catch {
            return .failure(Problem(description: "the request is not \(example)"))
        }
    }

    public static func exportStarted(books: Int, device: String? = nil, pid: Int32? = nil) -> ControlRequest {
        var request = ControlRequest(command: .exportStarted)
        request.books = books
        request.device = device
        request.pid = pid
        return request
    }

    public static func exportFinished(books: Int, file: String, device: String? = nil) -> ControlRequest {
        var request = ControlRequest(command: .exportFinished)
        request.books = books
        request.file = file
        request.device = device
        return request
    }

    public static func exportFailed(reason: String, device: String? = nil) -> ControlRequest {
        var request = ControlRequest(command: .exportFailed)
        request.reason = reason
        request.device = device
        return request
    }
}

/// The daemon's answer: one JSON object per line.
public struct ControlReply: Codable, Equatable, Sendable {
    public var ok: Bool
    /// For `shutter`: the id of the scan, once its JPEG and queue row are durable.
    public var scanId: String?
    /// Why the request was refused, as advice a person can act on.
    public var error: String?
    /// For `status`.
    public var status: DaemonStatus?
    /// For `retry`: the scans queued again.
    public var scanIds: [String]? = nil

    public init(
        ok: Bool, scanId: String? = nil, error: String? = nil, status: DaemonStatus? = nil, scanIds: [String]? = nil
    ) {
        self.ok = ok
        self.scanId = scanId
        self.error = error
        self.status = status
        self.scanIds = scanIds
    }

    public static func refused(_ reason: String) -> ControlReply {
        ControlReply(ok: false, scanId: nil, error: reason, status: nil)
    }
}

/// The backend link's state, as `swiftwing status --json` prints it under `daemon.uplink`.
public struct UplinkStatus: Codable, Equatable, Sendable {
    /// `online`, `offline`, `rate-limited`, `busy`, `unauthorized` or `unknown` (no answer yet).
    public var connectivity: String
    /// Seconds until uploads resume after a 429 or a busy 503 (0 when not paused).
    public var rateLimitRemainingSeconds: Int
    public var jobsInFlight: Int
    public var concurrency: Int
    /// Scheme, host and path of the backend (never credentials).
    public var backend: String
    public var lastProblem: String?
    /// Uploads are held because no API key is installed (rather than one the backend refused).
    public var apiKeyMissing: Bool? = nil

    public init(
        connectivity: String, rateLimitRemainingSeconds: Int, jobsInFlight: Int, concurrency: Int, backend: String,
        lastProblem: String?, apiKeyMissing: Bool? = nil
    ) {
        self.connectivity = connectivity
        self.rateLimitRemainingSeconds = rateLimitRemainingSeconds
        self.jobsInFlight = jobsInFlight
        self.concurrency = concurrency
        self.backend = backend
        self.lastProblem = lastProblem
        self.apiKeyMissing = apiKeyMissing
    }
}

/// The daemon's live state, as `swiftwing status --json` prints it under `daemon`.
public struct DaemonStatus: Codable, Equatable, Sendable {
    public var pid: Int32
    public var version: String
    public var startedAt: Date
    public var camera: String
    public var cameraState: String
    public var pressesAccepted: Int
    public var pressesRefused: Int
    public var processing: Int
    public var lastError: String?
    /// The shutter inputs running (GPIO line, key devices); absent from daemons before it was added.
    public var shutterInputs: [String]? = nil
    /// Press (kernel event timestamp) to buzzer line set, GPIO and key presses.
    public var shutterLatency: LatencySummary? = nil
    /// The backend link; absent when no backend is configured.
    public var uplink: UplinkStatus? = nil
    /// `streaming`, `starting`, `reopening` or `missing`: the camera in one word, for the STATUS= line.
    public var cameraAvailability: String? = nil

    public init(
        pid: Int32, version: String, startedAt: Date, camera: String, cameraState: String, pressesAccepted: Int,
        pressesRefused: Int, processing: Int, lastError: String?, shutterInputs: [String]? = nil,
        shutterLatency: LatencySummary? = nil, uplink: UplinkStatus? = nil, cameraAvailability: String? = nil
    ) {
        self.pid = pid
        self.version = version
        self.startedAt = startedAt
        self.camera = camera
        self.cameraState = cameraState
        self.pressesAccepted = pressesAccepted
        self.pressesRefused = pressesRefused
        self.processing = processing
        self.lastError = lastError
        self.shutterInputs = shutterInputs
        self.shutterLatency = shutterLatency
        self.uplink = uplink
        self.cameraAvailability = cameraAvailability
    }
}
