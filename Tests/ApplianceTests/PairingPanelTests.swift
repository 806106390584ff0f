import Controls
import Foundation
import Identify
import Logging
import Panel
import Store
import SwiftWingCore
import SwiftWingTesting
import Synchronization
import Testing

@testable import Appliance

/// The browser pairing code on the panel: made by a 5 s hold (timed on a ManualClock) or by
/// `swiftwing web pair`, read from a real `web-access.sqlite`, drawn with its address and a QR code of the pairing
/// URL that zxing-cpp reads back, and gone once used or expired. The code never reaches the log.
@Suite struct PairingPanelTests {
    static let address = "http://192.168.1.20:8080/"

    final class NullSink: PanelOutputSink {
        let width = 800, height = 480, summary = "null"
        func present(_ image: PanelImage, damage: [PanelRect]) throws(PanelError) {}
    }

    /// Every line logged.
    final class LogLines: Sendable {
        private let lines = Mutex<[String]>([])
        func append(_ line: String) { lines.withLock { $0.append(line) } }
        func contain(_ text: String) -> Bool { lines.withLock { $0.contains { $0.contains(text) } } }
    }

    /// A feeder with pairing on, over a fresh state directory; everything it logs goes to `logged`.
    final class Device: Sendable {
        let clock = ManualClock()
        let directory: String
        let configuration: ApplianceConfiguration
        let panel: StatusPanel
        let feeder: PanelFeeder
        let logged = LogLines()

        init(webEnabled: Bool = true) throws {
            directory = NSTemporaryDirectory() + "pairing-panel-\(UUID().uuidString)"
            let state = StateDirectory(path: directory)
            try state.create()
            var configuration = ApplianceConfiguration()
            configuration.stateDirectory = directory
            configuration.web.enabled = webEnabled
            self.configuration = configuration
            let logged = self.logged
            let logger = Logger(label: "test") { _ in CapturingHandler { line in logged.append(line) } }
            let camera = CameraSupervisor(device: "/dev/video9", logger: logger) { throw ApplianceError("no camera") }
            panel = try StatusPanel(sink: NullSink(), clock: clock, logger: logger)
            let pairing =
                webEnabled
                ? PairingDisplay(
                    configuration: configuration, wallClock: clock.wallClock(),
                    addresses: { [PairingPanelTests.address] },
                    logger: logger) : nil
            feeder = PanelFeeder(
                panel: panel, database: try AppDatabase.inMemory(), stateDirectory: state, camera: camera,
                cameraName: "/dev/video9", settings: PanelFeeder.Settings(), logger: logger, pairing: pairing,
                clock: clock, wallClock: clock.wallClock())
        }

        func access() throws -> WebAccess { try WebAccess.open(StateDirectory(path: directory)) }

        var shownPairing: PanelPairing? {
            feeder.refresh()
            if case .pairing(let pairing) = panel.model.notice { return pairing }
            return nil
        }

        func remove() { try? FileManager.default.removeItem(atPath: directory) }
    }

    /// The shutter as the daemon wires it: a detector on the daemon's timing fed by a ManualClock, its events
    /// through the router to the long press (recorded) and the extended hold (the feeder's pairing).
    final class HeldShutter: Sendable {
        final class Counter: Sendable {
            private let value = Atomic<Int>(0)
            func add() { value.add(1, ordering: .relaxed) }
            var count: Int { value.load(ordering: .relaxed) }
        }

        let longPresses = Counter()
        private let detector: Mutex<PressDetector>
        private let router: ShutterEventRouter
        private let clock: ManualClock
        private let origin = MonotonicInstant(nanoseconds: 10_000_000_000)

        init(device: Device) {
            clock = device.clock
            detector = Mutex(
                PressDetector(
                    timing: PressTiming(
                        longPressMilliseconds: 2000, extendedHoldMilliseconds: PairingDisplay.holdMilliseconds),
                    source: .gpio))
            let longPresses = self.longPresses
            let action = LongPressAction(
                retryFailedScans: {
                    longPresses.add()
                    return 0
                }, queueCounts: { [:] }, addresses: { [] }, hostname: { "swiftwing-test" }, show: { _, _ in },
                logger: Logger(label: "test"))
            let feeder = device.feeder
            router = ShutterEventRouter(
                feedback: feeder, press: { _ in }, longPress: action,
                extendedHold: { press in feeder.pairFromHold(press) })
        }

        private var now: MonotonicInstant {
            origin.advanced(
                byNanoseconds: Int64(clock.now.offset.components.seconds) * 1_000_000_000
                    + clock.now.offset.components.attoseconds / 1_000_000_000)
        }

        /// Events so far, handed to the router as the input thread does.
        @discardableResult
        func edge(active: Bool) -> [ShutterEvent] {
            let events = detector.withLock { $0.edge(active: active, at: now) }
            events.forEach(router.handle)
            return events
        }

        @discardableResult
        func tick() -> [ShutterEvent] {
            let events = detector.withLock { $0.advance(to: now) }
            events.forEach(router.handle)
            return events
        }
    }

    private func until(_ condition: () -> Bool) async {
        let deadline = ContinuousClock.now + .seconds(10)
        // Polls the router's tasks: nothing to await.
        while !condition(), ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(5)) }
    }

    @Test func aFiveSecondHoldShowsANewCodeForFiveMinutes() async throws {
        let device = try Device()
        defer { device.remove() }
        let shutter = HeldShutter(device: device)
        shutter.edge(active: true)
        device.clock.advance(by: .milliseconds(4999))
        let early = shutter.tick()
        #expect(early.count == 2, "the press and the long press by 4.999 s")
        await until { shutter.longPresses.count == 1 }
        #expect(shutter.longPresses.count == 1, "a hold past 2 s still retries failed scans")
        #expect(device.shownPairing == nil, "no code before 5 s")
        #expect(try device.access().currentPairing(now: device.clock.wallClock().now) == nil)

        device.clock.advance(by: .milliseconds(1))
        #expect(shutter.tick().count == 1)
        await until { device.feeder.pairing?.isShowing == true }
        let stored = try #require(try device.access().currentPairing(now: device.clock.wallClock().now))
        let shown = try #require(device.shownPairing)
        #expect(shown.code == stored.code)
        #expect(shown.code.count == 6 && shown.code.allSatisfy(\.isNumber))
        #expect(shown.address == Self.address)
        #expect(shown.timeLeft == "5:00")
        // The QR code opens the pairing form with the code filled in (pressing Pair there pairs).
        let url = WebPairing.pairingURL(address: shown.address, code: stored.code)
        #expect(url == "http://192.168.1.20:8080/pair?code=\(stored.code)")
        #expect(shown.qrCode == (try QRCode.encode(url)))
        #expect(shutter.longPresses.count == 1, "the hold is not a second long press")

        // Still up a second before the code expires, counting down; gone when it does.
        device.clock.advance(by: .seconds(299))
        #expect(device.shownPairing?.timeLeft == "0:01")
        device.clock.advance(by: .seconds(1))
        #expect(device.shownPairing == nil)
        #expect(device.panel.model.notice == nil)
        #expect(device.feeder.pairing?.isShowing == false)
        shutter.edge(active: false)
        #expect(!device.logged.contain(stored.code), "the code is never logged")
        #expect(device.logged.contain("pairing code is on the panel"))
    }

    @Test func theCodeOfSwiftwingWebPairShowsUntilABrowserUsesIt() throws {
        let device = try Device()
        defer { device.remove() }
        let printed = try WebPairing.pair(configuration: device.configuration, now: device.clock.wallClock().now)
        #expect(device.shownPairing == nil, "not before the daemon is told")
        #expect(device.feeder.showWaitingPairing().ok)
        let shown = try #require(device.shownPairing)
        #expect(printed.contains("code \(shown.code) "))

        // A browser enters it: the next refresh takes it down.
        let now = device.clock.wallClock().now
        #expect(
            try device.access().redeem(code: shown.code, tokenHash: "hash", now: now)
                == .paired(expiresAt: now.addingTimeInterval(WebAccess.sessionLifetime)))
        #expect(device.shownPairing == nil)
        #expect(!device.logged.contain(shown.code))
    }

    @Test func aPressTakesTheCodeOffThePanelButTheCodeStillWorks() throws {
        let device = try Device()
        defer { device.remove() }
        _ = try WebPairing.pair(configuration: device.configuration, now: device.clock.wallClock().now)
        #expect(device.feeder.showWaitingPairing().ok)
        let shown = try #require(device.shownPairing)
        device.feeder.pressAccepted(ShutterPress(time: .now(), source: .gpio))
        #expect(device.shownPairing == nil)
        #expect(try device.access().currentPairing(now: device.clock.wallClock().now)?.code == shown.code)
    }

    @Test func withoutACodeOrWithTheWebOffNothingIsShown() throws {
        let device = try Device()
        defer { device.remove() }
        let reply = device.feeder.showWaitingPairing()
        #expect(!reply.ok)
        #expect(reply.error?.contains("swiftwing web pair") == true)
        #expect(device.shownPairing == nil)

        let off = try Device(webEnabled: false)
        defer { off.remove() }
        #expect(off.feeder.showWaitingPairing().error?.contains("off") == true)
        off.feeder.pairFromHold(ShutterPress(time: .now(), source: .gpio))
        #expect(off.shownPairing == nil)
        #expect(!FileManager.default.fileExists(atPath: off.directory + "/web-access.sqlite"))
    }

    @Test func aLockedPairingSaysSoOnThePanel() throws {
        let device = try Device()
        defer { device.remove() }
        let now = device.clock.wallClock().now
        _ = try device.access().startPairing(now: now)
        for _ in 0..<WebAccess.wrongCodesBeforeLock {
            _ = try device.access().redeem(code: "wrong!", tokenHash: "hash", now: now)
        }
        device.feeder.pairFromHold(ShutterPress(time: .now(), source: .gpio))
        device.feeder.refresh()
        #expect(device.panel.model.notice?.title == "NO PAIRING")
        #expect(device.panel.model.notice?.detail.contains("locked") == true)
    }

    @Test func theHoldIsFiveSecondsWithTheWebOnAndStaysPastALongerLongPress() {
        var configuration = ApplianceConfiguration()
        #expect(ShutterControls.extendedHoldMilliseconds(configuration) == nil, "off with [web] off (the default)")
        configuration.web.enabled = true
        #expect(ShutterControls.extendedHoldMilliseconds(configuration) == 5000)
        configuration.shutter.longPressMilliseconds = 0
        #expect(ShutterControls.extendedHoldMilliseconds(configuration) == 5000, "long presses off")
        configuration.shutter.longPressMilliseconds = 6000
        #expect(ShutterControls.extendedHoldMilliseconds(configuration) == 7000)
    }

    // MARK: Drawing

    /// The panel's picture as an 8-bit grey plane, for the barcode reader.
    private func luma(_ image: PanelImage) -> [UInt8] {
        var plane = [UInt8](repeating: 0, count: image.width * image.height)
        image.withPixelsReadOnly { pixels in
            for y in 0..<image.height {
                let row = (pixels + y * image.stride).assumingMemoryBound(to: UInt32.self)
                for x in 0..<image.width {
                    let c = row[x]
                    let grey = (299 * Int(c >> 16 & 0xFF) + 587 * Int(c >> 8 & 0xFF) + 114 * Int(c & 0xFF)) / 1000
                    plane[y * image.width + x] = UInt8(grey)
                }
            }
        }
        return plane
    }

    private func readQR(_ image: PanelImage) throws -> String? {
        let plane = luma(image)
        return try plane.withUnsafeBytes {
            try QRCode.read(luma: $0, width: image.width, height: image.height, stride: image.width)
        }
    }

    @Test(arguments: [(800, 480), (480, 320), (320, 240)])
    func theDrawnQRCodeReadsBackAsTheAddress(size: (width: Int, height: Int)) throws {
        let address = "http://[2001:db8::20]:8080/"
        let renderer = try PanelRenderer(width: size.width, height: size.height)
        renderer.render(PanelModel(library: 523))
        #expect(try readQR(renderer.image) == nil, "no QR code on the ordinary screen")
        let pairing = PanelPairing(
            code: "482913", address: address, qrCode: try QRCode.encode(address), secondsLeft: 300)
        #expect(renderer.render(PanelModel(library: 523, notice: .pairing(pairing))) == [renderer.layout.bounds])
        #expect(try readQR(renderer.image) == address)
    }

    @Test func thePanelSampleIsTheQRCodeZXingMakes() throws {
        guard case .pairing(let sample) = PanelSamples.model("pairing")?.notice else {
            Issue.record("no pairing sample")
            return
        }
        let url = WebPairing.pairingURL(address: sample.address, code: sample.code)
        let made = try QRCode.encode(url)
        let rows = (0..<made.side).map { y in String((0..<made.side).map { made.isDark(x: $0, y: y) ? "#" : "." }) }
        #expect(sample.qrCode == made, "PanelSamples.sampleQRCode for \(url):\n\(rows.joined(separator: "\n"))")
        #expect(sample.qrCode?.side == 29)
    }
}
