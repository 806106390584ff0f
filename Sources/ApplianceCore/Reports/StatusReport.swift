import Foundation
import Store
import SwiftWingCore

/// `swiftwing status`: the daemon (if one answers), the queue and the library. Reads the database
/// directly as a WAL reader, so it works with the daemon running or not.
public struct StatusReport: Codable, Sendable {
    public struct Daemon: Codable, Sendable {
        public var running: Bool
        public var pid: Int32?
        public var version: String?
        public var startedAt: Date?
        public var camera: String?
        public var cameraState: String?
        public var pressesAccepted: Int?
        public var pressesRefused: Int?
        public var processing: Int?
        public var lastError: String?
        public var shutterInputs: [String]?
        /// Press (kernel event timestamp) to buzzer line set: count, p50/p99/max/mean in µs, buckets.
        public var shutterLatency: LatencySummary?
        /// The backend link: connectivity, rate-limit countdown, jobs in flight.
        public var uplink: UplinkStatus?
        /// `streaming`, `starting`, `reopening` or `missing`.
        public var cameraAvailability: String?
        /// Why no daemon answered, when it did not.
        public var reason: String?

        public init(running: Bool, reason: String? = nil) {
            self.running = running
            self.reason = reason
        }

        /// What a running daemon says about itself.
        public init(_ status: DaemonStatus) {
            self.running = true
            pid = status.pid
            version = status.version
            startedAt = status.startedAt
            camera = status.camera
            cameraState = status.cameraState
            pressesAccepted = status.pressesAccepted
            pressesRefused = status.pressesRefused
            processing = status.processing
            lastError = status.lastError
            shutterInputs = status.shutterInputs
            shutterLatency = status.shutterLatency
            uplink = status.uplink
            cameraAvailability = status.cameraAvailability
        }
    }

    public struct Library: Codable, Sendable {
        public var books: Int
        /// Spines read but not identified, waiting for the owner (`swiftwing review`); nil from a report made
        /// before they were counted.
        public var spinesToCheck: Int?

        public init(books: Int, spinesToCheck: Int? = nil) {
            self.books = books
            self.spinesToCheck = spinesToCheck
        }
    }

    public var stateDirectory: String
    public var daemon: Daemon
    /// Scans per state; `nil` when the database cannot be read (`databaseError` says why).
    public var queue: [String: Int]?
    public var library: Library?
    public var databaseError: String?
    /// The database failed its check on a start and was rebuilt: shown while the old file is kept.
    public var databaseRecovery: DatabaseRecovery?

    public init(stateDirectory: String, daemon: Daemon) {
        self.stateDirectory = stateDirectory
        self.daemon = daemon
    }

    public static func gather(configuration: ApplianceConfiguration) -> StatusReport {
        var daemon = Daemon(running: false)
        do {
            let reply = try ControlClient.send(ControlRequest(command: .status), to: configuration.controlSocket)
            if let status = reply.status { daemon = Daemon(status) }
        } catch {
            daemon.reason = error.description
        }
        var report = StatusReport(stateDirectory: configuration.stateDirectory, daemon: daemon)
        report.databaseRecovery = DatabaseRecovery.current(in: StateDirectory(path: configuration.stateDirectory))
        do {
            report.readCounts(from: try AppDatabase.openReadOnly(StateDirectory(path: configuration.stateDirectory)))
        } catch {
            report.databaseError = error.description
        }
        return report
    }

    /// The queue and library counts; on failure `databaseError` says why.
    public mutating func readCounts(from database: AppDatabase) {
        do {
            let counts = try database.queue.counts()
            queue = Dictionary(uniqueKeysWithValues: ScanState.allCases.map { ($0.rawValue, counts[$0] ?? 0) })
            library = Library(books: try database.library.bookCount(), spinesToCheck: try database.spinesToCheckCount())
            databaseError = nil
        } catch {
            databaseError = error.description
        }
    }

    /// The state in a few words a person reads at a glance ("Online · 3 queued · 412 books"): the
    /// daemon's STATUS= line in `systemctl status`, and the first line of `swiftwing status`.
    public var headline: String {
        var parts: [String] = []
        guard daemon.running else { return "Not running" }
        switch daemon.cameraAvailability {
        case "starting": parts.append("Camera starting")
        case "reopening": parts.append("Camera reconnecting")
        case "missing": parts.append("Camera missing")
        default: break
        }
        parts.append(Self.connectivityWords(daemon.uplink))
        if let queue {
            let waiting = (queue["queued"] ?? 0) + (queue["uploading"] ?? 0) + (queue["analyzing"] ?? 0)
            parts.append("\(waiting) queued")
            if let failed = queue["failed"], failed > 0 { parts.append("\(failed) failed") }
            if let attention = queue["needs_attention"], attention > 0 { parts.append("\(attention) to check") }
        }
        if let library {
            parts.append("\(library.books) book\(library.books == 1 ? "" : "s")")
            // "spines" to tell them from the scans to check above.
            if let spines = library.spinesToCheck, spines > 0 {
                parts.append("\(spines) spine\(spines == 1 ? "" : "s") to check")
            }
        }
        if databaseError != nil { parts.append("Database unreadable") }
        return parts.joined(separator: " · ")
    }

    private static func connectivityWords(_ uplink: UplinkStatus?) -> String {
        guard let uplink else { return "Offline (no backend.url)" }
        if uplink.apiKeyMissing == true { return "Offline (no API key)" }
        switch uplink.connectivity {
        case "online": return "Online"
        case "rate-limited": return "Rate limited"
        case "busy": return "Backend busy"
        case "unauthorized": return "Unauthorized (API key refused)"
        default: return "Offline"
        }
    }

    public func json() -> String { stableJSON(self) }

    public func text() -> String {
        var lines = ["summary: \(headline)"]
        if daemon.running {
            lines.append("daemon:  running (pid \(daemon.pid ?? 0), swiftwing \(daemon.version ?? "?"))")
            lines.append("camera:  \(daemon.camera ?? "?") — \(daemon.cameraState ?? "?")")
            lines.append(
                "presses: \(daemon.pressesAccepted ?? 0) saved, \(daemon.pressesRefused ?? 0) refused, \(daemon.processing ?? 0) in flight"
            )
            if let lastError = daemon.lastError { lines.append("last refusal: \(lastError)") }
            if let uplink = daemon.uplink {
                var line = "backend: \(uplink.connectivity)"
                if uplink.rateLimitRemainingSeconds > 0 {
                    line += " (uploads resume in \(uplink.rateLimitRemainingSeconds) s)"
                }
                line += ", \(uplink.jobsInFlight)/\(uplink.concurrency) jobs in flight — \(uplink.backend)"
                if uplink.connectivity != "online", let problem = uplink.lastProblem { line += "\n         \(problem)" }
                lines.append(line)
            } else {
                lines.append("backend: none configured (backend.url): scans stay queued on the device")
            }
            if let inputs = daemon.shutterInputs {
                lines.append("shutter: \(inputs.isEmpty ? "control socket only" : inputs.joined(separator: "; "))")
            }
            if let latency = daemon.shutterLatency, latency.count > 0 {
                lines.append(
                    "press→buzzer: p50 \(latency.p50Microseconds ?? 0) µs, p99 \(latency.p99Microseconds ?? 0) µs over \(latency.count) presses"
                )
            }
        } else {
            lines.append("daemon:  not running (\(daemon.reason ?? "no reply"))")
            // A daemon waiting for its state directory or its configuration has no control socket yet.
            lines.append("         under systemd, `systemctl status swiftwing` says why it has not started")
        }
        lines.append("state:   \(stateDirectory)")
        if let queue {
            let order = ScanState.allCases.map(\.rawValue)
            lines.append("queue:   " + order.map { "\($0) \(queue[$0] ?? 0)" }.joined(separator: ", "))
        }
        if let library {
            var line = "library: \(library.books) books"
            if let spines = library.spinesToCheck, spines > 0 {
                line += ", \(spines) spines to check (`swiftwing review list`)"
            }
            lines.append(line)
        }
        if let databaseError { lines.append("database: \(databaseError)") }
        if let databaseRecovery { lines.append("database rebuilt: \(databaseRecovery)") }
        return lines.joined(separator: "\n")
    }
}

/// `swiftwing queue`: every scan, newest first.
public struct QueueReport: Encodable, Sendable {
    public var scans: [ScanRecord]

    public static func gather(configuration: ApplianceConfiguration) throws -> QueueReport {
        do {
            let state = StateDirectory(path: configuration.stateDirectory)
            let database = try AppDatabase.openReadOnly(state)
            let spool = SpoolDirectory(state)
            // The database keeps names inside the spool; a person (or a script) wants full paths.
            let scans = try database.queue.scans(includeDiscarded: true).map { scan in
                var scan = scan
                scan.imagePath = spool.path(of: scan.imagePath)
                scan.thumbnailPath = scan.thumbnailPath.map { spool.path(of: $0) }
                return scan
            }
            return QueueReport(scans: scans.sorted { $0.createdAt > $1.createdAt })
        } catch {
            throw ApplianceError(error.description)
        }
    }

    public func json() -> String { stableJSON(self) }

    public func text() -> String {
        guard !scans.isEmpty else { return "the queue is empty" }
        return scans.map { scan in
            var line =
                "\(scan.idString)  \(scan.state.rawValue.padding(toLength: 15, withPad: " ", startingAt: 0)) "
                + "\(UTCDateParts(scan.createdAt).iso8601)  \(scan.width)x\(scan.height)  \(scan.imageSize / 1024) KiB"
            if scan.discardedAt != nil { line += "  discarded" }
            if scan.attempts > 0 { line += "  attempts \(scan.attempts)" }
            if let quality = scan.quality, quality.isPoor { line += "  \(quality.verdict.rawValue) frame" }
            if !scan.barcodes.isEmpty { line += "  barcodes " + scan.barcodes.map(\.text).joined(separator: ",") }
            if let error = scan.lastError { line += "  — \(error)" }
            return line
        }.joined(separator: "\n")
    }
}

/// The `--json` form every command prints: sorted keys, ISO 8601 dates, plain slashes.
func stableJSON(_ value: some Encodable) -> String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
    // The form of `.iso8601`, written without a date formatter (``UTCDateParts``).
    encoder.dateEncodingStrategy = .custom { date, encoder in
        var container = encoder.singleValueContainer()
        try container.encode(UTCDateParts(date).iso8601)
    }
    return String(decoding: (try? encoder.encode(value)) ?? Data("{}".utf8), as: UTF8.self)
}

/// `swiftwing library`: the books, oldest first.
public struct LibraryReport: Encodable, Sendable {
    public var books: [BookRecord]

    public init(books: [BookRecord]) {
        self.books = books
    }

    public static func gather(configuration: ApplianceConfiguration, search: String? = nil) throws(ApplianceError)
        -> LibraryReport
    {
        do {
            let database = try AppDatabase.openReadOnly(StateDirectory(path: configuration.stateDirectory))
            if let search, !search.isEmpty {
                return LibraryReport(books: try database.library.searchBooks(matching: search))
            }
            return LibraryReport(books: try database.library.books())
        } catch {
            throw ApplianceError(error.description)
        }
    }

    private enum CodingKeys: String, CodingKey {
        case books
    }

    /// Each book with its computed `needsReview` (``LibraryEntry``).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(books.map(LibraryEntry.init), forKey: .books)
    }

    public func json() -> String { stableJSON(self) }

    /// One line per book, its id first (the id `library show|edit|delete` take).
    public func text() -> String {
        guard !books.isEmpty else { return "the library is empty" }
        var lines = books.map { book in
            var line =
                "\(book.id.map(String.init) ?? "-")".padding(toLength: 5, withPad: " ", startingAt: 0) + " "
                + "\((book.isbn13 ?? book.isbn10 ?? "no ISBN").padding(toLength: 13, withPad: " ", startingAt: 0))  "
                + (book.title.isEmpty && book.source == .barcode ? "(from its barcode; title pending)" : book.title)
            if !book.authors.isEmpty { line += " — " + book.authors.joined(separator: ", ") }
            if let date = book.publishedDate { line += " (\(date))" }
            if book.needsReview { line += "  [review: \(book.reviewReason ?? Self.lowConfidence(book))]" }
            return line
        }
        lines.append("\(books.count) book\(books.count == 1 ? "" : "s")")
        return lines.joined(separator: "\n")
    }

    /// Why a book without a reason of its own needs review.
    public static func lowConfidence(_ book: BookRecord) -> String {
        guard let confidence = book.confidence, confidence < BookRecord.reviewThreshold else {
            return "the backend asked for review"
        }
        return "confidence \(Int((confidence * 100).rounded()))%"
    }
}
