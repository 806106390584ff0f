import Foundation
import Identify
import SwiftWingCore
import Testing

/// `swiftwing web pair` against the real daemon drawing its panel into a PNG: the daemon learns of the code over the
/// control socket (the code itself is not sent), and the panel then shows the pairing URL (the page's address and
/// the code) as a QR code that zxing-cpp reads back from the file. The code is never in the daemon's log.
@Suite struct PairingOnThePanelTests {
    @Test func swiftwingWebPairPutsThePairingURLOnThePanelAsAQRCode() throws {
        let harness = try DaemonHarness()
        let panel = harness.root.appendingPathComponent("panel.png").path
        harness.configText = "[web]\nenabled = true\n"
        harness.extraArguments = ["--panel", "png:\(panel)"]
        try harness.startDaemon(waitForCamera: false)
        defer { harness.killDaemon() }

        let paired = harness.run(["web", "pair"] + harness.commonArguments)
        #expect(paired.status == 0, "\(paired.error)")
        #expect(!paired.error.contains("not on the panel"), "\(paired.error)")
        let words = paired.output.split(whereSeparator: \.isWhitespace).map(String.init)
        let code = try #require(words.firstIndex(of: "code").map { words[$0 + 1] })
        let address = try #require(words.firstIndex(of: "open").map { words[$0 + 1] })
        #expect(code.count == 6)

        // The PNG is rewritten (atomically) when the panel thread draws the notice.
        var read: String?
        let deadline = Date().addingTimeInterval(30)
        while read == nil, Date() < deadline {
            if let frame = try? PictureFile.frame(contentsOf: panel) {
                read = try QRCode.read(
                    luma: UnsafeRawBufferPointer(frame.luma), width: frame.width, height: frame.height,
                    stride: frame.layout.lumaStride)
            }
            if read == nil { Thread.sleep(forTimeInterval: 0.1) }
        }
        // The address with the code: it opens the form filled in, as a phone's camera would.
        #expect(read == address + "pair?code=" + code)
        #expect(harness.log.contains("pairing code is on the panel"))
        // Lines about pairing only: six digits may turn up by chance elsewhere (a pid, an id).
        let pairingLines = harness.log.split(separator: "\n").filter { $0.contains("pairing") || $0.contains("code") }
        #expect(!pairingLines.isEmpty)
        #expect(!pairingLines.contains { $0.contains(code) }, "the code is never logged")
    }
}
