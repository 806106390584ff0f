import Controls
import Foundation
import Identify
import Logging
import Panel
import Store
import SwiftWingCore
import Synchronization

/// The pairing code of the library in a browser on the panel, for as long as it works: after `swiftwing web pair`
/// (which tells the daemon over the control socket, without the code) or after the shutter is held
/// ``holdMilliseconds`` (the daemon then makes the code itself, with ``WebPairing/start(configuration:now:)`` as the
/// command does).
///
/// While a code is shown, `web-access.sqlite` is read at each panel refresh, so the code leaves the panel as soon as
/// a browser has used it or it expires; at other times the file is not open. The code goes to the panel only, never
/// to the log.
final class PairingDisplay: Sendable {
    /// How long the shutter is held to pair a browser: 5 s, past the long press (2 s) that retries failed scans.
    static let holdMilliseconds = 5000

    private struct Shown {
        var access: WebAccess
        /// The pairing URL last encoded, and its QR code (encoded again only when the URL changes).
        var encoded: (url: String, modules: QRModules?)?
    }

    private let configuration: ApplianceConfiguration
    private let wallClock: WallClock
    private let addresses: @Sendable () -> [String]
    private let logger: Logger
    private let shown = Mutex<Shown?>(nil)

    init(
        configuration: ApplianceConfiguration, wallClock: WallClock = .system,
        addresses: (@Sendable () -> [String])? = nil, logger: Logger
    ) {
        self.configuration = configuration
        self.wallClock = wallClock
        self.addresses = addresses ?? { WebPairing.addresses(configuration) }
        self.logger = logger
    }

    /// Whether a code is on the panel.
    var isShowing: Bool { shown.withLock { $0 != nil } }

    /// Makes a new code (replacing any earlier one) and shows it; returns until when it works.
    @discardableResult
    func startNew() throws(ApplianceError) -> Date {
        let pairing = try WebPairing.start(configuration: configuration, now: wallClock.now)
        try showWaiting()
        return pairing.expiresAt
    }

    /// Shows the code waiting to be entered; returns until when it works, or nil when no code is waiting.
    @discardableResult
    func showWaiting() throws(ApplianceError) -> Date? {
        guard configuration.web.enabled else {
            throw ApplianceError(
                "the library in a browser is off: set `enabled = true` under [web] in the configuration file, "
                    + "then restart swiftwing and swiftwing-web")
        }
        let access: WebAccess
        let waiting: WebAccess.Pairing?
        do {
            access = try WebAccess.open(StateDirectory(path: configuration.stateDirectory))
            waiting = try access.currentPairing(now: wallClock.now)
        } catch {
            throw ApplianceError(error.description)
        }
        guard let waiting else { return nil }
        shown.withLock { $0 = Shown(access: access, encoded: $0?.encoded) }
        return waiting.expiresAt
    }

    /// Takes the code off the panel (a press: someone is scanning again); the code itself still works.
    func dismiss() {
        shown.withLock { $0 = nil }
    }

    /// The pairing screen while a code is shown and works; nil, and the file let go, once the code is used or
    /// has expired.
    func notice() -> PanelNotice? {
        guard let access = shown.withLock({ $0?.access }) else { return nil }
        let now = wallClock.now
        let pairing: WebAccess.Pairing?
        do {
            pairing = try access.currentPairing(now: now)
        } catch {
            logger.warning(
                "the pairing code could not be read: it is taken off the panel", metadata: ["error": "\(error)"])
            pairing = nil
        }
        guard let pairing else {
            shown.withLock { $0 = nil }
            logger.info("pairing code off the panel: a browser used it, or it expired")
            return nil
        }
        let address = addresses().first ?? "http://\(NetworkAddresses.hostname()).local:\(configuration.web.port)/"
        let modules = qrCode(for: WebPairing.pairingURL(address: address, code: pairing.code))
        let secondsLeft = Int(pairing.expiresAt.timeIntervalSince(now).rounded(.up))
        return .pairing(PanelPairing(code: pairing.code, address: address, qrCode: modules, secondsLeft: secondsLeft))
    }

    private func qrCode(for url: String) -> QRModules? {
        if let encoded = shown.withLock({ $0?.encoded }), encoded.url == url { return encoded.modules }
        var modules: QRModules?
        do {
            modules = try QRCode.encode(url)
        } catch {
            logger.warning("the address is shown without its QR code", metadata: ["error": "\(error)"])
        }
        shown.withLock { $0?.encoded = (url, modules) }
        return modules
    }
}

extension PanelFeeder {
    /// The shutter was held ``PairingDisplay/holdMilliseconds``: a new code on the panel, or why there is none.
    func pairFromHold(_ press: ShutterPress) {
        guard let pairing else { return }
        do {
            let expires = try pairing.startNew()
            logger.notice(
                "shutter held: a browser pairing code is on the panel",
                metadata: ["source": "\(press.source.rawValue)", "expires": "\(UTCDateParts(expires).iso8601)"])
        } catch {
            logger.warning("shutter held: no pairing code", metadata: ["error": "\(error)"])
            show(.message(title: "NO PAIRING", detail: error.description), for: Self.pairingRefusalShownFor)
        }
        refreshSoon()
    }

    /// `swiftwing web pair` made a code: show it (the code is read from `web-access.sqlite`, not sent).
    func showWaitingPairing() -> ControlReply {
        guard let pairing else {
            return .refused("the library in a browser is off ([web] enabled = false): the panel shows no code")
        }
        do {
            guard let expires = try pairing.showWaiting() else {
                return .refused("no pairing code is waiting: run `swiftwing web pair` to make one")
            }
            logger.notice(
                "a browser pairing code is on the panel", metadata: ["expires": "\(UTCDateParts(expires).iso8601)"])
            refreshSoon()
            return ControlReply(ok: true)
        } catch {
            return .refused(error.description)
        }
    }

    /// How long a refused pairing (off, or locked after wrong codes) says so.
    static let pairingRefusalShownFor = Duration.seconds(10)
}
