import Panel
import SwiftWingCore
import Testing

/// The pairing screen: the code must be readable on the panel (the golden comparison sees a change of one digit),
/// and never be in the notice's text.
@Suite("Pairing screen")
struct PairingPanelTests {
    static var sample: PanelPairing {
        guard case .pairing(let pairing) = PanelSamples.model("pairing")?.notice else {
            preconditionFailure("PanelSamples has a pairing state")
        }
        return pairing
    }

    @Test("the golden comparison sees one digit of the code change")
    func oneDigitOfTheCodeIsVisible() throws {
        let golden = try PanelImage(contentsOfPNG: "\(GoldenImage.directory)/pairing-480x320-xrgb8888.png")
        let renderer = try PanelRenderer(width: 480, height: 320)
        var pairing = Self.sample
        renderer.render(PanelModel(connectivity: .online, library: 523, notice: .pairing(pairing)))
        let same = GoldenImage.compare(renderer.image, golden, channelTolerance: GoldenTests.channelTolerance)
        #expect(same.differing <= Int(480 * 320 * GoldenTests.maxDifferingFraction))
        pairing.code = "482918"
        renderer.render(PanelModel(connectivity: .online, library: 523, notice: .pairing(pairing)))
        let changed = GoldenImage.compare(renderer.image, golden, channelTolerance: GoldenTests.channelTolerance)
        #expect(changed.differing > Int(480 * 320 * GoldenTests.maxDifferingFraction))
    }

    @Test("the countdown reads m:ss and the notice's text names the address, not the code")
    func noticeText() {
        var pairing = Self.sample
        #expect(pairing.timeLeft == "4:47")
        pairing.secondsLeft = 59
        #expect(pairing.timeLeft == "0:59")
        pairing.secondsLeft = -3
        #expect(pairing.timeLeft == "0:00")
        let notice = PanelNotice.pairing(pairing)
        #expect(notice.title == "PAIR A BROWSER")
        #expect(notice.detail.contains(pairing.address))
        #expect(!notice.detail.contains(pairing.code))
    }

    @Test("a QR code too fine for the panel is left out, and the address is still written")
    func tooFineQRCodeIsLeftOut() throws {
        // A version-40 sized matrix cannot get 2 pixels a module on 320x240.
        let dense = try #require(QRModules(side: 177, dark: (0..<177 * 177).map { $0 % 3 == 0 }))
        let renderer = try PanelRenderer(width: 320, height: 240)
        var pairing = Self.sample
        pairing.qrCode = dense
        renderer.render(PanelModel(notice: .pairing(pairing)))
        var white = 0
        for y in stride(from: 0, to: 240, by: 2) {
            for x in stride(from: 160, to: 320, by: 2) where renderer.image.pixel(x: x, y: y) == .white { white += 1 }
        }
        #expect(white < 200, "no white QR square on the right half (\(white) white samples)")
        pairing.qrCode = Self.sample.qrCode
        renderer.render(PanelModel(notice: .pairing(pairing)))
        var whiteWithCode = 0
        for y in stride(from: 0, to: 240, by: 2) {
            for x in stride(from: 160, to: 320, by: 2) where renderer.image.pixel(x: x, y: y) == .white {
                whiteWithCode += 1
            }
        }
        #expect(whiteWithCode > 1000, "the sample's QR code is drawn on white")
    }
}
