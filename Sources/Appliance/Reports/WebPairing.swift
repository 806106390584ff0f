import Foundation
import Store

/// `swiftwing web pair|revoke`: who may use the library in a browser (``WebAccess``), from the device's shell.
public enum WebPairing {
    /// A new pairing code and the addresses to open, as `swiftwing web pair` prints them.
    public static func pair(configuration: ApplianceConfiguration, now: Date = Date()) throws(ApplianceError) -> String
    {
        let pairing = try start(configuration: configuration, now: now)
        let minutes = Int(WebAccess.codeLifetime / 60)
        return """
            code \(pairing.code) (works \(minutes) minutes, once)
            open \(addresses(configuration).joined(separator: " or ")) on a phone or computer on the same network
            and enter the code there
            """
    }

    /// A new pairing code in `web-access.sqlite`, replacing any earlier one: for `swiftwing web pair` and for the
    /// daemon when the shutter is held (the panel shows it). Refused while the library in a browser is off or
    /// pairing is locked after wrong codes.
    public static func start(configuration: ApplianceConfiguration, now: Date) throws(ApplianceError)
        -> WebAccess.Pairing
    {
        guard configuration.web.enabled else {
            throw ApplianceError(
                "the library in a browser is off: set `enabled = true` under [web] in the configuration file "
                    + "(\(ApplianceConfiguration.defaultPath)), then `systemctl restart swiftwing-web`, and pair again")
        }
        let state = StateDirectory(path: configuration.stateDirectory)
        // Root would leave web-access.sqlite root's, and the web process (the daemon's user) could not check codes.
        try LibraryManagement.refuseForeignOwner(state.databasePath)
        let result: Result<WebAccess.Pairing, WebAccess.PairingLocked>
        do {
            result = try WebAccess.open(state).startPairing(now: now)
        } catch {
            throw ApplianceError(error.description)
        }
        switch result {
        case .failure(let locked): throw ApplianceError(locked.description)
        case .success(let pairing): return pairing
        }
    }

    /// Ends every browser's pairing; returns how many there were.
    public static func revoke(configuration: ApplianceConfiguration) throws(ApplianceError) -> Int {
        let state = StateDirectory(path: configuration.stateDirectory)
        try LibraryManagement.refuseForeignOwner(state.databasePath)
        do {
            return try WebAccess.open(state).revokeAll()
        } catch {
            throw ApplianceError(error.description)
        }
    }

    /// The page that pairs with `code`, as the panel's QR code carries it: `http://192.168.1.20:8080/pair?code=482913`
    /// for the address `http://192.168.1.20:8080/`. Opening it shows the form with the code filled in; only pressing
    /// Pair (a POST) pairs, so a link preview or a prefetch of the address uses no attempt.
    public static func pairingURL(address: String, code: String) -> String {
        (address.hasSuffix("/") ? address : address + "/") + "pair?code=" + code
    }

    /// `http://192.168.1.20:8080/` for each address the page listens on.
    public static func addresses(_ configuration: ApplianceConfiguration) -> [String] {
        let port = configuration.web.port
        func url(_ address: String) -> String {
            address.contains(":") ? "http://[\(address)]:\(port)/" : "http://\(address):\(port)/"
        }
        let listening = configuration.web.address
        guard listening == "0.0.0.0" || listening == "::" else { return [url(listening)] }
        let found = NetworkAddresses.current().filter { !$0.address.lowercased().hasPrefix("fe80:") }
            .filter { listening == "::" || $0.family == .ipv4 }
        return found.isEmpty ? ["http://\(NetworkAddresses.hostname()).local:\(port)/"] : found.map { url($0.address) }
    }
}
