import Controls
import Foundation
import HTTPEngine
import Logging
import Store
import Talaria
import Uplink

/// The catalogue lookups of a running daemon: books known only by their ISBN completed from
/// `enrichment.provider`. Independent of the recognition backend: it runs without `backend.url`.
struct DaemonEnrichment: Sendable {
    let service: EnrichmentService
    /// The uplink's engine when there is one; otherwise an engine of its own, shut down with it.
    private let engine: CurlEngine
    private let ownsEngine: Bool

    /// `nil` (and one log line) when `enrichment.enabled = false`. `events` hears every book whose
    /// lookup was recorded (the panel shows the title).
    static func make(
        configuration: ApplianceConfiguration, database: AppDatabase, sharing uplinkEngine: CurlEngine?, logger: Logger,
        events: @escaping @Sendable (EnrichmentEvent) -> Void = { _ in }
    ) throws(ApplianceError) -> DaemonEnrichment? {
        let settings = configuration.enrichment
        guard settings.enabled else {
            logger.notice("enrichment.enabled = false: books read from barcodes keep only their ISBN")
            return nil
        }
        var base: URL?
        if let raw = settings.baseURL {
            base = try serviceURL(
                raw, key: "enrichment.base_url", example: "https://openlibrary.org", service: "catalogue")
        }
        let engine =
            uplinkEngine
            ?? CurlEngine(
                configuration: CurlEngine.Configuration(userAgent: "swiftwing/\(ApplianceInfo.version)"),
                logger: Logger(label: "http"))
        let service = EnrichmentService(
            settings: EnrichmentSettings(provider: settings.provider, base: base, version: ApplianceInfo.version),
            transport: engine, database: database, logger: Logger(label: "enrichment"), events: events)
        return DaemonEnrichment(service: service, engine: engine, ownsEngine: uplinkEngine == nil)
    }

    /// Stops the engine when it is this service's own (the uplink stops a shared one).
    func shutdown() {
        if ownsEngine { engine.shutdown() }
    }

    /// Wakes the lookups whenever books land, so a barcode's book is looked up at once rather than
    /// at the service's next look at the library.
    var doorbell: EnrichmentDoorbellFeedback {
        let service = self.service
        return EnrichmentDoorbellFeedback { service.wake() }
    }
}

/// Books landed (read from a barcode, or a backend result that may carry only an ISBN): some may
/// need a catalogue lookup now.
struct EnrichmentDoorbellFeedback: PressFeedback {
    let wake: @Sendable () -> Void

    func pressAccepted(_ press: ShutterPress) {}
    func pressRefused(_ press: ShutterPress, reason: String) {}
    func scanSaved(_ press: ShutterPress) {}
    func notice(_ notice: FeedbackNotice) {
        if notice == .booksLanded { wake() }
    }
}

/// A configured service's URL: https, or plain http to this machine only (a development server).
func serviceURL(_ raw: String, key: String, example: String, service: String) throws(ApplianceError) -> URL {
    guard let url = URL(string: raw), let host = url.host, !host.isEmpty else {
        throw ApplianceError("\(key) \"\(raw)\" is not a URL: write e.g. \(example)")
    }
    guard TalariaEndpoints.allowsPlainHTTP(url) else {
        throw ApplianceError(
            "\(key) \(raw) is plain http:// to \(host), which is not this machine: use https:// "
                + "(plain http is only for a development \(service) on 127.0.0.1)")
    }
    return url
}
