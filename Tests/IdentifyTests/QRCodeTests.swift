import Identify
import SwiftWingCore
import Testing

/// zxing-cpp's QR writer and reader through the shim: what the panel draws for pairing a browser.
@Suite struct QRCodeTests {
    /// `modules` drawn `scale` pixels a module, black on white, with a quiet zone of four modules.
    private func picture(_ modules: QRModules, scale: Int) -> (plane: [UInt8], side: Int) {
        let side = (modules.side + 8) * scale
        var plane = [UInt8](repeating: 255, count: side * side)
        for y in 0..<side {
            for x in 0..<side {
                let (mx, my) = (x / scale - 4, y / scale - 4)
                if (0..<modules.side).contains(mx), (0..<modules.side).contains(my), modules.isDark(x: mx, y: my) {
                    plane[y * side + x] = 0
                }
            }
        }
        return (plane, side)
    }

    @Test(arguments: ["http://192.168.1.20:8080/", "http://[2001:db8::20]:8080/", "http://swiftwing.local:8080/"])
    func anEncodedAddressReadsBack(address: String) throws {
        let modules = try QRCode.encode(address)
        #expect((modules.side - 21) % 4 == 0, "a QR code's side is 21 + 4 per version")
        #expect(modules.side <= 33, "a short address needs a small code: \(modules.side)")
        let (plane, side) = picture(modules, scale: 3)
        let read = try plane.withUnsafeBytes { try QRCode.read(luma: $0, width: side, height: side, stride: side) }
        #expect(read == address)
    }

    @Test func aBlankPictureHasNoCodeAndABadPlaneIsRefused() throws {
        let blank = [UInt8](repeating: 255, count: 64 * 64)
        #expect(try blank.withUnsafeBytes { try QRCode.read(luma: $0, width: 64, height: 64, stride: 64) } == nil)
        #expect(throws: IdentifyError.self) {
            try blank.withUnsafeBytes { try QRCode.read(luma: $0, width: 64, height: 65, stride: 64) }
        }
    }

    @Test func textTooLongForAnyQRCodeIsAnError() {
        #expect(throws: IdentifyError.self) { try QRCode.encode(String(repeating: "x", count: 8000)) }
    }
}
