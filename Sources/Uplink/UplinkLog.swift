import Foundation
import HTTPEngine
import Talaria

/// How the uplink writes what it saw into logs and status lines: short, and never a credential.
enum UplinkLog {
    /// Scheme, host and path only: a base URL never carries credentials into logs.
    static func redacted(_ url: URL) -> String {
        var components = URLComponents(url: url, resolvingAgainstBaseURL: false)
        components?.user = nil
        components?.password = nil
        components?.query = nil
        return components?.string ?? "<backend>"
    }

    static func summary(_ outcome: TransferOutcome) -> String {
        switch outcome {
        case .connectFailed(let detail), .timedOut(let detail), .connectionLost(let detail): detail
        case .response(let status, _, let body): "HTTP \(status) \(preview(body))"
        }
    }

    static func preview(_ body: [UInt8]) -> String {
        let text = String(decoding: body.prefix(160), as: UTF8.self)
        return text.replacingOccurrences(of: "\n", with: " ")
    }
}
