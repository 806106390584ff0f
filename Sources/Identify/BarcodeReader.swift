/// Reads every product code in a luma plane the way dedicated barcode readers do, within a fixed
/// amount of work: find candidate regions (``BarcodeLocator``), scan each with ZBar, and when a
/// region gives nothing, retry it contrast-stretched, sharpened, and doubled (small codes) or
/// halved (large ones). ZBar itself scans rows and columns in both directions, so codes turned
/// 90° or upside down read like upright ones. When no region gives a code and the budget allows,
/// the whole frame is scanned (this catches codes the locator missed in small pictures).
///
/// The budget counts pixels handed to ZBar, not milliseconds, so a frame reads the same on a
/// busy machine as on an idle one.
///
/// Not `Sendable` (it owns a ZBar scanner): one reader per worker thread.
public final class BarcodeReader {
    /// How much work one frame may take.
    public struct Budget: Sendable, Hashable {
        /// Pixels handed to ZBar per frame, all attempts together.
        public var scannedPixels: Int

        public init(scannedPixels: Int) {
            self.scannedPixels = scannedPixels
        }

        /// Sized so that reading a 1920x1080 frame costs no more than JPEG-encoding it
        /// (Benchmarks/README.md, "Identify").
        public static let standard = Budget(scannedPixels: 600_000)
    }

    public let budget: Budget
    private let scanner: ZBarScanner
    private let locator = BarcodeLocator()

    public init(budget: Budget = .standard) throws(IdentifyError) {
        self.budget = budget
        self.scanner = try ZBarScanner()
    }

    /// The ZBar library this process runs with, e.g. "0.23.92".
    public static var zbarVersion: String { ZBarScanner.version }

    /// Every valid product code in the plane, each once, in the order found.
    public func read(
        luma plane: UnsafeRawBufferPointer, width: Int, height: Int, stride: Int
    ) throws(IdentifyError) -> [Barcode] {
        guard width > 0, height > 0, stride >= width, plane.count >= stride * (height - 1) + width else {
            throw .badFrame("a \(width)x\(height) plane with stride \(stride) does not fit in \(plane.count) bytes")
        }
        var found = Found()
        var remaining = budget.scannedPixels
        for region in locator.regions(in: plane, width: width, height: height, stride: stride) {
            guard remaining >= region.rect.area else { continue }
            debugLog("region \(region) remaining \(remaining)")
            let crop = GreyImage(plane, region: region.rect, stride: stride)
            try readWithRetries(crop, into: &found, remaining: &remaining)
        }
        if found.barcodes.isEmpty, remaining >= width * height {
            let whole = GreyImage(plane, width: width, height: height, stride: stride)
            try readWithRetries(whole, into: &found, remaining: &remaining)
        }
        return found.barcodes
    }

    /// Scans `image`, then its enhanced versions one after another until one gives a code or the
    /// budget runs out.
    private func readWithRetries(
        _ image: GreyImage, into found: inout Found, remaining: inout Int
    ) throws(IdentifyError) {
        let large = max(image.width, image.height) > Self.smallSide
        let attempts: [(GreyImage) -> GreyImage?] = [
            { $0 },
            { large ? $0.halved() : nil },
            { $0.contrastStretched() },
            { $0.contrastStretched().sharpened(radius: 4, amount: 2) },
            { $0.contrastStretched().sharpened(radius: 1, amount: 1) },
            { large ? nil : $0.doubled() },
        ]
        for attempt in attempts {
            guard let variant = attempt(image), remaining >= variant.pixels.count else { continue }
            remaining -= variant.pixels.count
            let symbols = try scanner.scan(variant)
            debugLog("  attempt \(variant.width)x\(variant.height): \(symbols.map(\.text))")
            if found.add(symbols) { return }
        }
    }

    /// Regions larger than this on their longer side are retried at half the size, smaller ones
    /// at twice the size (last, as that is the most expensive).
    static let smallSide = 640

    /// The codes found so far, each once.
    private struct Found {
        var barcodes: [Barcode] = []

        /// Adds the symbols whose check digits are right; whether there were any.
        mutating func add(_ symbols: [ZBarScanner.Symbol]) -> Bool {
            var valid = false
            for symbol in symbols {
                guard let barcode = Barcode(format: symbol.format, text: symbol.text) else { continue }
                valid = true
                if !barcodes.contains(barcode) { barcodes.append(barcode) }
            }
            return valid
        }
    }
}

import Glibc
func debugLog(_ s: String) { if getenv("IDDEBUG") != nil { print(s) } }
