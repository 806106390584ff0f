import Foundation
import HTTPEngine
import SwiftWingCore
import Talaria

extension DoctorReport {
    /// Whether backend.url is a swiftwing-recognizer that answers (`GET {base}/health` says
    /// `"service": "swiftwing-recognizer"`). A loopback backend.url that nothing answers is the
    /// recognizer on this kiosk not running; any other backend is left to "backend reachable".
    static func recognizerCheck(_ configuration: ApplianceConfiguration, timeout: Duration = .seconds(5)) -> Check {
        guard let raw = configuration.backend.url, let base = URL(string: raw), base.host != nil else {
            return Check(name: "recognizer", ok: true, detail: "no backend.url")
        }
        let loopback = base.scheme == "http" && TalariaEndpoints.allowsPlainHTTP(base)
        let engine = CurlEngine(
            configuration: CurlEngine.Configuration(
                userAgent: "swiftwing/\(ApplianceInfo.version)", caFile: configuration.backend.caFile))
        defer { engine.shutdown() }
        let request = HTTPRequest(
            method: .get, url: base.appendingPathComponent("health"),
            timeouts: HTTPTimeouts(connect: timeout, total: timeout, stall: timeout))
        let outcome = BlockingThread.waitForTask { () async throws(HTTPError) in try await engine.send(request) }
        switch outcome {
        case .success(let response):
            let health = (try? JSONSerialization.jsonObject(with: Data(response.body))) as? [String: Any]
            guard response.status == 200, health?["service"] as? String == "swiftwing-recognizer" else {
                return Check(
                    name: "recognizer", ok: true, detail: "\(raw) is not a swiftwing-recognizer (another backend)")
            }
            let catalogue = health?["catalogue"] as? String ?? "?"
            let books = health?["catalogueBooks"] as? String ?? "?"
            return Check(
                name: "recognizer", ok: true,
                detail: "\(raw) is a swiftwing-recognizer (catalogue \(catalogue), \(books) books)")
        case .failure(let error):
            guard loopback else {
                return Check(name: "recognizer", ok: true, detail: "\(raw) did not answer (see \"backend reachable\")")
            }
            return Check(
                name: "recognizer", ok: false,
                detail:
                    "nothing answers at \(raw) (\(error)). Fix: import a catalogue to /etc/swiftwing/catalogue.csv, then "
                    + "`systemctl enable --now swiftwing-recognizer`; `journalctl -u swiftwing-recognizer` says why it stopped"
            )
        }
    }
}
