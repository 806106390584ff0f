import ArgumentParser
import Foundation
import HTTPEngine
import Hummingbird
import Logging
import Recognition
import SwiftWingCore
import TalariaReferenceServer

#if canImport(Glibc)
    import Glibc
#endif

/// `swiftwing-recognizer serve`: the recognition backend protocol (docs/protocol.md) with the real recognizer in it,
/// so the daemon's queue, uplink, retries and library use it as any backend (`backend.url = "http://127.0.0.1:PORT"`).
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serves the recognition backend protocol: shelf photos in, books from the catalogue out.",
        discussion: """
            Each upload becomes a job: its photo is read (OCR), the text grouped into spines and the spines \
            matched against the catalogue, with progress on the job's event stream. Spines that match nothing \
            are reported as unmatched, or looked up on Open Library when --open-library is given. \
            See docs/recognizer.md.
            """)

    @OptionGroup var catalogueOptions: CatalogueOptions
    @Option(help: "Address to bind (127.0.0.1 on the kiosk; the LAN address on a home server).") var host = "127.0.0.1"
    @Option(help: "Port to bind (0 = a free port).") var port = 8788
    @Option(help: "Open Library's base URL for spines the catalogue does not match, e.g. https://openlibrary.org.")
    var openLibrary: String?
    @Option(help: "Write the bound port to this file once listening.") var portFile: String?
    @Option(help: "Require 'Authorization: Bearer <key>' on uploads, the key read from this file.") var apiKeyFile:
        String?
    @Option(help: "Photos with more pixels are refused before decoding, in megapixels.") var maxMegapixels = 40
    @Option(help: "A photo not read within this many seconds fails its job (retryable).")
    var recognitionTimeoutSeconds = 120
    @Option(
        help: """
            Photos that may wait or be read at once; past that, a new upload is refused with 503 BUSY and \
            Retry-After (the device sends it again later).
            """)
    var maxWaitingPhotos = 4
    @Option(help: "Seconds a client refused with 503 BUSY is asked to wait before sending the photo again.")
    var busyRetryAfterSeconds = 10
    @Option(
        help: """
            A connection that sends nothing for this many seconds while its request is read, or between requests, \
            is closed (an open event stream is not).
            """)
    var idleTimeoutSeconds = 30
    @Option(help: "An upload whose photo is not received within this many seconds is refused with 408 (retryable).")
    var uploadDeadlineSeconds = 120
    @Option(help: "Event streams that may be open at once for one job; another is refused with 429.")
    var maxStreamsPerJob = 4
    @Option(help: "A finished job the device never cleaned up is forgotten this many hours after it finished.")
    var forgetFinishedJobsAfterHours = 24
    @Option(help: "Log level: trace, debug, info, notice, warning, error, critical.") var logLevel = "info"
    @Flag(help: "Check the catalogue and the recognizer (OCR worker included), print whether they are ready, and exit.")
    var check = false

    func validate() throws {
        // Each at least 1, and at most a bound past any sensible value: megapixels become pixels, seconds and hours
        // become durations, nanoseconds and milliseconds, and those products must not overflow.
        let limits: [(option: String, value: Int, most: Int, advice: String)] = [
            (
                "--max-waiting-photos", maxWaitingPhotos, 1000,
                "each waiting photo holds up to 24 MB; give what the memory allows, e.g. 4"
            ),
            (
                "--max-megapixels", maxMegapixels, 1000,
                "give at least the camera's size in megapixels (12 for a 4056x3040 sensor), e.g. 40"
            ),
            (
                "--recognition-timeout-seconds", recognitionTimeoutSeconds, 86_400,
                "give a few times what one photo takes to read on this machine, e.g. 120"
            ),
            (
                "--busy-retry-after-seconds", busyRetryAfterSeconds, 86_400,
                "give about the time one photo takes to read, e.g. 10"
            ),
            (
                "--idle-timeout-seconds", idleTimeoutSeconds, 86_400,
                "give a time in which a slow Wi-Fi can stall and recover, e.g. 30"
            ),
            (
                "--upload-deadline-seconds", uploadDeadlineSeconds, 86_400,
                "give a time in which the largest photo arrives over the slowest link, e.g. 120"
            ),
            (
                "--max-streams-per-job", maxStreamsPerJob, 1000,
                "the kiosk opens one at a time; give a few more for its reconnections, e.g. 4"
            ),
            (
                "--forget-finished-jobs-after-hours", forgetFinishedJobsAfterHours, 8760,
                "give a time in which a device that was offline comes back for its results, e.g. 24"
            ),
        ]
        for (option, value, most, advice) in limits where !(1...most).contains(value) {
            throw ValidationError("\(option) must be from 1 to \(most) (got \(value)): \(advice)")
        }
    }

    func run() async throws {
        var apiKey: String?
        if let apiKeyFile {
            // O_NOFOLLOW, regular files only, at most 4 KiB (issue 36): not a FIFO or /dev/zero read without end.
            let key: String
            do { key = try SecretFile.readKey(apiKeyFile) } catch { throw ValidationError("--api-key-file: \(error)") }
            guard !key.isEmpty else { throw ValidationError("--api-key-file \(apiKeyFile) is empty") }
            apiKey = key
        }
        let level = Logger.Level(rawValue: logLevel) ?? .info
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        var logger = Logger(label: "swiftwing-recognizer")
        logger.logLevel = level
        if let warning = RecognitionService.openAccessWarning(host: host, apiKey: apiKey) {
            logger.warning("\(warning)")
        }

        let catalogues = try catalogueOptions.paths()
        var books = 0
        for catalogue in catalogues {
            do {
                books += try CatalogueFileCheck.check(catalogue)
            } catch {
                throw ServeFailure("the catalogue cannot be used: \(error)")
            }
        }
        var openLibraryURL: URL?
        if let openLibrary {
            guard let url = URL(string: openLibrary), url.scheme == "http" || url.scheme == "https", url.host != nil
            else {
                throw ValidationError(
                    "--open-library must be an http(s) URL such as https://openlibrary.org (got \(openLibrary))")
            }
            openLibraryURL = url
        }

        let shelf = try await RecognizerAssembly.make(
            catalogues: catalogues, library: catalogueOptions.library, logger: logger)
        if check {
            print("ready: catalogues \(catalogues.joined(separator: ", ")) (\(books) books), recognizer ready")
            return
        }
        let settings = settings(catalogues: catalogues, books: books, apiKey: apiKey)
        // One engine for every open-set lookup; its transfer thread ends with the service.
        let engine = openLibraryURL.map { _ in
            CurlEngine(
                configuration: CurlEngine.Configuration(
                    userAgent: "swiftwing-recognizer/\(SwiftWingVersion.string)", maximumBodyBytes: 1 << 20))
        }
        defer { engine?.shutdown() }
        let openLibrary = openLibraryURL.flatMap { url in engine.map { OpenLibrarySearch(base: url, transport: $0) } }
        let recognizer = ServiceRecognizer(shelf: shelf, openLibrary: openLibrary, logger: logger)
        let host = self.host
        let portFile = self.portFile
        let app = RecognitionService.makeApplication(settings: settings, recognizer: recognizer, logger: logger) {
            port in
            if let portFile { try? "\(port)\n".write(toFile: portFile, atomically: true, encoding: .utf8) }
            // Unbuffered: scripts and tests wait for exactly this line.
            FileHandle.standardOutput.write(Data("swiftwing-recognizer listening on http://\(host):\(port)\n".utf8))
        }
        try await app.runService()
    }
}

extension ServeCommand {
    /// The service's settings from the options.
    func settings(catalogues: [String], books: Int, apiKey: String?) -> RecognitionService.Settings {
        var settings = RecognitionService.Settings(catalogue: catalogues.joined(separator: ", "), books: books)
        settings.host = host
        settings.port = port
        settings.maxPixels = maxMegapixels * 1_000_000
        settings.recognitionTimeout = .seconds(recognitionTimeoutSeconds)
        settings.apiKey = apiKey
        settings.maxWaitingPhotos = maxWaitingPhotos
        settings.busyRetryAfterSeconds = busyRetryAfterSeconds
        settings.idleTimeout = .seconds(idleTimeoutSeconds)
        settings.uploadDeadline = .seconds(uploadDeadlineSeconds)
        settings.maxStreamsPerJob = maxStreamsPerJob
        settings.finishedJobRetention = .seconds(forgetFinishedJobsAfterHours * 3600)
        return settings
    }
}

struct ServeFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// The protocol server set up as a recognition service rather than the reference backend.
package enum RecognitionService {
    package struct Settings: Sendable {
        /// The catalogue files searched, ", " between them.
        package var catalogue: String
        package var books: Int
        package var host = "127.0.0.1"
        package var port = 8788
        package var maxPixels = 40_000_000
        package var recognitionTimeout: Duration = .seconds(120)
        package var apiKey: String?
        /// Photos waiting or being read at once; a new upload past that is refused with `503 BUSY` for now.
        package var maxWaitingPhotos = 4
        /// A finished job never cleaned up is forgotten this long after it finished.
        package var finishedJobRetention: Duration = .seconds(24 * 3600)
        /// The `Retry-After` of `503 BUSY`, in seconds.
        package var busyRetryAfterSeconds = 10
        /// A connection silent this long while its request is read, or between requests, is closed.
        package var idleTimeout: Duration = .seconds(30)
        /// An upload's photo not received within this long is answered `408 UPLOAD_TIMEOUT`.
        package var uploadDeadline: Duration = .seconds(120)
        /// Event streams open at once for one job; another is refused with `429`.
        package var maxStreamsPerJob = 4

        package init(catalogue: String, books: Int) {
            self.catalogue = catalogue
            self.books = books
        }
    }

    static func configuration(_ settings: Settings) -> ReferenceConfiguration {
        var configuration = ReferenceConfiguration()
        configuration.serverName = "swiftwing-recognizer"
        configuration.host = settings.host
        configuration.port = settings.port
        configuration.apiKey = settings.apiKey
        configuration.imageCheck = .structure(maxPixels: settings.maxPixels)
        // A full-size 12 MP photo at high quality can pass 10 MB; the pixel limit is what bounds the work.
        configuration.maxImageBytes = 24_000_000
        configuration.recognitionTimeout = settings.recognitionTimeout
        configuration.recognitionDelayMs = 0
        configuration.retryMs = 2000
        configuration.pingIntervalMs = 15000
        configuration.faultEndpoints = false
        configuration.catalogEndpoints = false
        // The OCR worker reads one photo at a time: each waiting one holds up to maxImageBytes.
        configuration.maxWaitingPhotos = settings.maxWaitingPhotos
        // A home server runs for months: jobs the device cleaned up, or left, are not kept.
        configuration.forgetFinishedJobsAfter = settings.finishedJobRetention
        configuration.busyRetryAfterSeconds = settings.busyRetryAfterSeconds
        // A kiosk whose Wi-Fi dies mid-upload sends no FIN: without these its place would be held for hours.
        configuration.idleTimeout = settings.idleTimeout
        configuration.uploadDeadline = settings.uploadDeadline
        // Each open stream polls its job; anyone holding the job's token could otherwise open any number.
        configuration.maxStreamsPerJob = settings.maxStreamsPerJob
        // A stream to a kiosk whose network died ends after a minute of unacknowledged pings (four ping intervals).
        configuration.unacknowledgedDataTimeout = .seconds(60)
        configuration.statsNeedAPIKey = true
        configuration.jobControlFromLoopbackOnlyWithoutKey = true
        configuration.healthDetails = [
            "catalogue": settings.catalogue.components(separatedBy: ", ")
                .map { URL(fileURLWithPath: $0).lastPathComponent }.joined(separator: ", "),
            "catalogueBooks": String(settings.books),
        ]
        return configuration
    }

    /// What `serve` warns of when it listens beyond loopback with no API key; nil when it does not.
    package static func openAccessWarning(host: String, apiKey: String?) -> String? {
        // A bind only this machine can reach: the loopback names and addresses the kiosk's uplink trusts.
        guard apiKey == nil, !TransferTarget.isLoopback(host) else { return nil }
        return "listening on \(host) with no API key: anyone on that network can upload photos and read the "
            + "results; set a key with --api-key-file FILE and give the kiosk the same key (docs/recognizer.md, "
            + "\"On another machine\"), or bind 127.0.0.1"
    }

    package static func makeApplication(
        settings: Settings, recognizer: any PhotoRecognizing, clock: any Clock<Duration> = ContinuousClock(),
        logger: Logger,
        onRunning: @escaping @Sendable (Int) async -> Void = { _ in }
    ) -> some ApplicationProtocol {
        let configuration = configuration(settings)
        let state = ReferenceState(configuration: configuration, recognizer: recognizer, clock: clock)
        return ReferenceServer.makeApplication(
            configuration: configuration, state: state, logger: logger, onRunning: onRunning)
    }
}
