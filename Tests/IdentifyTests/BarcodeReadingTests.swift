import Foundation
import Identify
import Imaging
import SwiftWingCore
import Testing

@Suite("Barcode reading on real photos")
struct BarcodeReadingTests {
    /// Counts the pictures of a set whose expected code `FrameIdentifier` reads.
    func passes(_ set: String, count: Int) throws -> (passed: Int, missed: [String]) {
        let identifier = try FrameIdentifier()
        var passed = 0
        var missed: [String] = []
        for (path, digits) in try Fixtures.barcodeSet(set, expectedCount: count) {
            let codes = try identifier.identify(frame: try Fixtures.frame(path)).barcodes.map(\.text)
            if codes.contains(digits) { passed += 1 } else { missed.append(path) }
        }
        return (passed, missed)
    }

    @Test("ean13-1: at least 32 of 34 (zxing-cpp's single-pass figure)")
    func ean13Set1() throws {
        let result = try passes("ean13-1", count: 34)
        #expect(result.passed >= 32, "missed: \(result.missed)")
    }

    @Test("ean13-3: all 55")
    func ean13Set3() throws {
        let result = try passes("ean13-3", count: 55)
        #expect(result.passed == 55, "missed: \(result.missed)")
    }

    @Test("two codes in one frame are both read")
    func twoCodesInOneFrame() throws {
        let first = try Fixtures.barcodeSet("ean13-3", expectedCount: 55)[0]
        let second = try Fixtures.barcodeSet("ean13-1", expectedCount: 34)[0]
        #expect(first.digits != second.digits)
        let frame = Fixtures.sideBySide([try Fixtures.frame(first.path), try Fixtures.frame(second.path)])
        let texts = Set(try FrameIdentifier().identify(frame: frame).barcodes.map(\.text))
        #expect(texts == [first.digits, second.digits])
    }

    @Test(
        "codes turned 90°, 180° and 270° read like upright ones",
        arguments: [
            FrameRotation.clockwise90, .upsideDown, .clockwise270,
        ])
    func rotatedCodes(rotation: FrameRotation) throws {
        let identifier = try FrameIdentifier()
        // Several pictures, so one lucky read cannot pass the test.
        for (path, digits) in try Fixtures.barcodeSet("ean13-3", expectedCount: 55).prefix(5) {
            let turned = try rotated(try Fixtures.frame(path), by: rotation)
            #expect(try identifier.identify(frame: turned).barcodes.map(\.text) == [digits], "\(path) at \(rotation)")
        }
    }

    @Test("a padded Y plane (stride > width) reads the same as a packed one")
    func paddedStride() throws {
        let (path, digits) = try Fixtures.barcodeSet("ean13-3", expectedCount: 55)[1]
        let packed = try Fixtures.frame(path)
        let layout = YUV420Layout(width: packed.width, height: packed.height, lumaStride: packed.width + 64)
        let padded = YUV420Frame(layout: layout)
        padded.buffer.bytes.initializeMemory(as: UInt8.self, repeating: 0)
        for row in 0..<packed.height {
            for column in 0..<packed.width {
                padded.luma[row * layout.lumaStride + column] = packed.luma[row * packed.layout.lumaStride + column]
            }
        }
        #expect(try FrameIdentifier().identify(frame: padded).barcodes.map(\.text) == [digits])
    }

    @Test("codes a large sensor's scaling shrinks are read again from the frame as captured")
    func reReadAtFullResolution() throws {
        let identifier = try FrameIdentifier()
        let shelf = try Fixtures.frame(Fixtures.shelves + "/one_shelf.jpg")
        let background = try YUV420Scaler().resized(shelf, width: 3840, height: 2160)
        var onScaled = 0
        var reRead = 0
        var onFull = 0
        // Every fifth picture of the small-code set: 240x240 photos whose codes are two pixels a module as taken.
        let cases = try Fixtures.barcodeSet("ean13-3", expectedCount: 55).enumerated().filter { $0.offset % 5 == 0 }
        for (_, (path, digits)) in cases {
            let camera = Fixtures.pasted(try Fixtures.frame(path), into: background)
            let scaled = try YUV420Scaler().downscaled(camera, maxLongEdge: 1920)
            if try identifier.identify(frame: scaled).barcodes.map(\.text).contains(digits) { onScaled += 1 }
            let codes = try identifier.identify(frame: scaled, fullResolution: camera).barcodes.map(\.text)
            if codes.contains(digits) { reRead += 1 }
            if try identifier.identify(frame: camera).barcodes.map(\.text).contains(digits) { onFull += 1 }
        }
        // At half size these codes are below ZBar's resolution: the scaled frame alone reads (almost) none of them.
        #expect(onScaled <= cases.count / 4, "scaled: \(onScaled) of \(cases.count)")
        #expect(reRead >= onFull, "re-read \(reRead), full frame \(onFull) of \(cases.count)")
        #expect(reRead > onScaled, "re-read \(reRead), scaled \(onScaled) of \(cases.count)")
    }

    @Test("the detail of a 12 MP frame, located on four rows a cell row, holds the small codes pasted into it")
    func detailOfLargeFrame() throws {
        let shelf = try Fixtures.frame(Fixtures.shelves + "/one_shelf.jpg")
        let background = try YUV420Scaler().resized(shelf, width: 4624, height: 3468)
        // Every fifth picture of the small-code set, each in the middle of the frame.
        let cases = try Fixtures.barcodeSet("ean13-3", expectedCount: 55).enumerated().filter { $0.offset % 5 == 0 }
        var held = 0
        for (_, (path, _)) in cases {
            let picture = try Fixtures.frame(path)
            let camera = Fixtures.pasted(picture, into: background)
            let detail = BarcodeReader.detail(
                captured: UnsafeRawBufferPointer(camera.luma), width: camera.width, height: camera.height,
                stride: camera.layout.lumaStride)
            let (x, y) = (camera.width / 2, camera.height / 2)
            let crops = detail?.crops ?? []
            if crops.contains(where: { $0.x <= x && x < $0.x + $0.width && $0.y <= y && y < $0.y + $0.height }) {
                held += 1
            }
            #expect((detail?.byteCount ?? 0) <= BarcodeReader.Budget.standard.scannedPixels)
        }
        #expect(held >= cases.count * 3 / 4, "the code's region is in the detail for \(held) of \(cases.count)")
    }

    @Test("every code ZBar alone reads in a fixture picture (zbarimg, every scanline) the reader reads too")
    func atLeastWhatZBarAloneReads() throws {
        let identifier = try FrameIdentifier()
        var zbarRead = 0
        for (set, count) in [("ean13-1", 34), ("ean13-3", 55)] {
            for (path, digits) in try Fixtures.barcodeSet(set, expectedCount: count) {
                guard try Self.zbarimg(path).contains(digits) else { continue }
                zbarRead += 1
                let ours = try identifier.identify(frame: try Fixtures.frame(path)).barcodes.map(\.text)
                #expect(ours.contains(digits), "zbarimg reads \(digits) in \(path); the reader found \(ours)")
            }
        }
        // zbarimg reads most of both sets: the comparison covers real work.
        #expect(zbarRead >= 70, "zbarimg read only \(zbarRead) of 89 pictures")
    }

    /// The codes `zbarimg` (ZBar's own command, every row and column) prints for a picture.
    static func zbarimg(_ path: String) throws -> [String] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/zbarimg")
        process.arguments = ["-q", "--raw", path]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            Issue.record("zbarimg could not run (\(error)): install zbar-tools (scripts/install-deps.sh test does)")
            throw error
        }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self).split(whereSeparator: \.isNewline).map(String.init)
    }

    @Test("detail of a frame smaller than the one it stands behind is refused")
    func detailSmallerThanFrame() throws {
        let reader = try BarcodeReader()
        let plane = [UInt8](repeating: 128, count: 64 * 48)
        let detail = LumaDetail(width: 32, height: 24, crops: [])
        #expect(throws: IdentifyError.self) {
            try plane.withUnsafeBytes { luma in
                _ = try reader.read(luma: luma, width: 64, height: 48, stride: 64, detail: detail)
            }
        }
    }

    @Test("a shelf photo without a barcode gives none")
    func noCodeOnShelf() throws {
        let frame = try Fixtures.frame(Fixtures.shelves + "/two_shelves.jpg")
        let small = try YUV420Scaler().resized(frame, width: 1920, height: 1080)
        #expect(try FrameIdentifier().identify(frame: small).barcodes.isEmpty)
    }

    @Test("a plane too small for its stated size is refused with advice")
    func badPlane() throws {
        let reader = try BarcodeReader()
        let bytes = [UInt8](repeating: 0, count: 100)
        #expect(throws: IdentifyError.self) {
            try bytes.withUnsafeBytes { try reader.read(luma: $0, width: 20, height: 20, stride: 20) }
        }
    }
}
