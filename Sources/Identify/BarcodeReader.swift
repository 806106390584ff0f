import SwiftWingCore

/// Reads every product code in a luma plane the way dedicated barcode readers do, within a fixed
/// amount of work: find candidate regions (``BarcodeLocator``), scan each with ZBar along the
/// rows (bars standing up) or columns (bars lying down), ask zxing-cpp when ZBar finds nothing,
/// and retry the most code-like region halved or doubled, contrast-stretched and sharpened.
/// ZBar decodes each scanline in both directions, so upside-down codes read like upright ones.
/// A small picture (half the budget or less) is first scanned whole, as ZBar alone would; when no
/// region gives a code and the budget allows, the whole frame is retried with the enhancements
/// (this catches codes the locator missed in small pictures).
///
/// The budget counts pixels handed to ZBar, not milliseconds, so a frame reads the same on a
/// busy machine as on an idle one.
///
/// Not `Sendable` (it owns a ZBar scanner): one reader per worker thread.
public final class BarcodeReader {
    /// How much work one frame may take.
    public struct Budget: Sendable, Hashable {
        /// Pixels handed to ZBar and zxing-cpp per frame, all attempts together.
        public var scannedPixels: Int

        public init(scannedPixels: Int) {
            self.scannedPixels = scannedPixels
        }

        /// Sized so that reading a 1920x1080 frame costs no more than JPEG-encoding it
        /// (Benchmarks/README.md, "Identify").
        public static let standard = Budget(scannedPixels: 400_000)
    }

    public let budget: Budget
    private let scanner: ZBarScanner
    private let zxing = ZXingReader()
    private let locator = BarcodeLocator()

    public init(budget: Budget = .standard) throws(IdentifyError) {
        self.budget = budget
        self.scanner = try ZBarScanner()
    }

    /// The barcode libraries this process runs with, e.g. "ZBar 0.23.92, zxing-cpp 1.4.0".
    public static var libraryVersions: String { "ZBar \(ZBarScanner.version), zxing-cpp \(ZXingReader.version)" }

    /// Every valid product code in the plane, each once, in the order found.
    ///
    /// With `detail`, the plane is a scaled copy of a larger frame: the detail's regions (the frame's regions as
    /// captured, ``detail(captured:width:height:stride:budget:)``) are read first, as a code the scaling shrank below
    /// ZBar's resolution still has its bars there; then the plane's own regions where no code was read yet.
    public func read(
        luma plane: UnsafeRawBufferPointer, width: Int, height: Int, stride: Int, detail: LumaDetail? = nil
    ) throws(IdentifyError) -> [Barcode] {
        guard width > 0, height > 0, stride >= width, plane.count >= stride * (height - 1) + width else {
            throw .badFrame("a \(width)x\(height) plane with stride \(stride) does not fit in \(plane.count) bytes")
        }
        if let detail, detail.width < width || detail.height < height {
            throw .badFrame(
                "detail of a \(detail.width)x\(detail.height) frame cannot be behind a \(width)x\(height) frame")
        }
        var found = Found()
        var remaining = budget.scannedPixels
        var read: [PixelRect] = []
        // A picture of at most half the budget is first scanned whole, every row and column, as ZBar alone (zbarimg)
        // scans it: on such pictures the reader finds at least what ZBar alone finds, then looks for more.
        let scannedWhole = width * height <= budget.scannedPixels / 2
        if scannedWhole {
            let whole = GreyImage(plane, width: width, height: height, stride: stride)
            remaining -= whole.pixels.count
            _ = found.add(try scanner.scan(whole, lines: .all))
        }
        if let detail {
            // The regions at the resolution captured are read first, plain and with zxing-cpp only (the enhanced
            // retries are for faint codes), within a budget of their own, so they never take pixels from the reads
            // below. A code read there is not looked for again on the scaled frame, where its region would get the
            // costlier retries (a small code's bars are blurred there); a region that gives nothing at full
            // resolution is still read on the scaled frame as without a detail.
            var detailRemaining = budget.scannedPixels
            let shrinkX = Double(width) / Double(detail.width)
            let shrinkY = Double(height) / Double(detail.height)
            for crop in detail.crops where !crop.faint || found.barcodes.isEmpty {
                let here = PixelRect(x: crop.x, y: crop.y, width: crop.width, height: crop.height)
                    .scaled(x: shrinkX, y: shrinkY).clipped(width: width, height: height)
                guard !read.contains(where: { $0.covers(mostOf: here) }), crop.pixels.count <= detailRemaining else {
                    continue
                }
                let before = found.barcodes.count
                let image = GreyImage(width: crop.width, height: crop.height, pixels: crop.pixels)
                let lines: ZBarScanner.Lines = crop.barsVertical ? .alongRows : .alongColumns
                try readWithRetries(
                    image, lines: lines, attempts: [.plain, .zxing], into: &found, remaining: &detailRemaining)
                if found.barcodes.count > before { read.append(here) }
            }
        }
        for (rank, region) in locator.regions(in: plane, width: width, height: height, stride: stride).enumerated() {
            // A region mostly inside one that gave a code is the same code again.
            guard !read.contains(where: { $0.covers(mostOf: region.rect) }) else { continue }
            // Only the most code-like region gets the enhanced retries (they cost more than the
            // scans); the others get the two cheap looks, and faint ones (few bar cells, loosely
            // packed: lettering, grain) none once the frame gave a code.
            let weak = region.score < Self.strongScore
            if weak, !found.barcodes.isEmpty { continue }
            var crop = GreyImage(plane, region: region.rect, stride: stride)
            // A region too large for what is left of the budget is read at half size.
            if crop.pixels.count > remaining, let half = crop.halved() { crop = half }
            guard crop.pixels.count <= remaining else { continue }
            let before = found.barcodes.count
            let attempts: [Attempt] = weak || rank > 0 ? [.plain, .halved, .zxing] : Attempt.allCases
            let lines: ZBarScanner.Lines = region.barsVertical ? .alongRows : .alongColumns
            try readWithRetries(crop, lines: lines, attempts: attempts, into: &found, remaining: &remaining)
            if found.barcodes.count > before { read.append(region.rect) }
        }
        if found.barcodes.isEmpty, remaining >= width * height {
            let whole = GreyImage(plane, width: width, height: height, stride: stride)
            let attempts = Attempt.allCases.filter { !scannedWhole || $0 != .plain }
            try readWithRetries(whole, attempts: attempts, into: &found, remaining: &remaining)
        }
        return found.barcodes
    }

    /// The candidate regions of a frame as captured, before it is scaled down: what ``read(luma:width:height:stride:
    /// detail:)`` reads first, where a code the scaling shrank below ZBar's resolution still has its bars. Located on
    /// the captured pixels, four rows of each cell row (every fourth row on a 1080p frame, where cells are 16 pixels;
    /// a 12 MP frame's cells are 30–55 pixels, and reading every fourth row of them cost as much as the whole read of
    /// the scaled frame). A large region (a code among spines or print) is located again inside itself, on two rows of
    /// each of its cell rows. The most code-like first, up to `budget`'s pixels in all.
    public static func detail(
        captured plane: UnsafeRawBufferPointer, width: Int, height: Int, stride: Int, budget: Budget = .standard
    ) -> LumaDetail? {
        guard width > 0, height > 0, stride >= width, plane.count >= stride * (height - 1) + width else { return nil }
        var crops: [LumaDetail.Crop] = []
        var taken: [PixelRect] = []
        var remaining = budget.scannedPixels
        var coarse = BarcodeLocator()
        coarse.sampledRowsPerCell = 4
        // Inside a large region, two rows of each cell row (cells of 12 pixels or more; every fourth row below that):
        // a code's bars run the whole cell row, so two rows find it as four did (IdentifyBench: the same counts at
        // every size, one row lost a code), at fewer reads.
        var inner = BarcodeLocator()
        inner.sampledRowsPerCell = 2
        for region in coarse.regions(in: plane, width: width, height: height, stride: stride) {
            var pieces = [region]
            if region.rect.area > budget.scannedPixels / 4 {
                let rect = region.rect
                let inside = UnsafeRawBufferPointer(rebasing: plane[(rect.y * stride + rect.x)...])
                pieces = inner.regions(in: inside, width: rect.width, height: rect.height, stride: stride).map {
                    var piece = $0
                    piece.rect.x += rect.x
                    piece.rect.y += rect.y
                    return piece
                }
            }
            for piece in pieces {
                let rect = piece.rect
                guard rect.area <= remaining, !taken.contains(where: { $0.covers(mostOf: rect) }) else { continue }
                remaining -= rect.area
                taken.append(rect)
                var crop = LumaDetail.Crop(
                    copying: plane, stride: stride, x: rect.x, y: rect.y, width: rect.width, height: rect.height)
                crop.barsVertical = piece.barsVertical
                crop.faint = piece.score < strongScore
                crops.append(crop)
            }
        }
        return crops.isEmpty ? nil : LumaDetail(width: width, height: height, crops: crops)
    }

    /// One way of reading a region, in the order tried.
    private enum Attempt: CaseIterable {
        /// ZBar on the pixels as they are.
        case plain
        /// ZBar on a half-size copy (large regions only): noise averaged out, a quarter of the cost.
        case halved
        /// zxing-cpp, which follows bars that are skewed or bent where ZBar's straight scanlines
        /// cross too few of them.
        case zxing
        /// ZBar after a contrast stretch, then after two unsharp masks (wide, then narrow).
        case stretched, sharpenedWide, sharpenedNarrow
        /// ZBar on a double-size copy (small regions only): narrow bars get wider.
        case doubled
    }

    /// Reads `image` one attempt after another until one gives a valid code or the budget runs out.
    private func readWithRetries(
        _ image: GreyImage, lines: ZBarScanner.Lines = .all, attempts: [Attempt] = Attempt.allCases,
        into found: inout Found, remaining: inout Int
    ) throws(IdentifyError) {
        let large = max(image.width, image.height) > Self.smallSide
        for attempt in attempts {
            // What the attempt will scan, checked against the budget before any work is done on it.
            let size: Int
            switch attempt {
            case .halved: size = large ? (image.width / 2) * (image.height / 2) : 0
            case .doubled: size = large ? 0 : 4 * image.pixels.count
            default: size = image.pixels.count
            }
            guard size > 0, size <= remaining else { continue }
            let variant: GreyImage?
            switch attempt {
            case .plain, .zxing: variant = image
            case .halved: variant = image.halved()
            case .stretched: variant = image.contrastStretched()
            case .sharpenedWide: variant = image.contrastStretched().sharpened(radius: 4, amount: 2)
            case .sharpenedNarrow: variant = image.contrastStretched().sharpened(radius: 1, amount: 1)
            case .doubled: variant = image.doubled()
            }
            guard let variant else { continue }
            remaining -= variant.pixels.count
            // zxing-cpp throwing (caught in its shim) costs only its own attempt; ZBar's go on.
            let symbols = attempt == .zxing ? (try? zxing.scan(variant)) ?? [] : try scanner.scan(variant, lines: lines)
            if found.add(symbols) { return }
        }
    }

    /// Regions scoring less (bar cells x fill) get no enhanced retries; a code filling a tenth of
    /// a frame scores in the hundreds.
    static let strongScore = 20.0

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
