import SwiftWingCore

/// Reads every product code in a luma plane the way dedicated barcode readers do, within a fixed
/// amount of work: find candidate regions (``BarcodeLocator``), scan each with ZBar along the
/// rows (bars standing up) or columns (bars lying down), ask zxing-cpp when ZBar finds nothing,
/// and retry the most code-like region halved or doubled, contrast-stretched and sharpened.
/// ZBar decodes each scanline in both directions, so upside-down codes read like upright ones.
/// When no region gives a code and the budget allows, the whole frame is scanned (this catches
/// codes the locator missed in small pictures).
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
    /// With `detail`, the plane is a scaled copy of a larger frame: regions are located on the plane (cheap, and the
    /// same figures as a 1080p frame) and a region that gives no code is read again from the detail, the frame's
    /// pixels as captured, where a code the scaling shrank below ZBar's resolution still has its bars.
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
        var reReadCrops: Set<Int> = []
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
            if found.barcodes.count == before, let detail {
                // The region's pieces as captured, plain and with zxing-cpp only: the enhanced retries are for faint
                // codes, and these pixels are several times as many.
                let large = Self.captured(region.rect, width: width, height: height, in: detail)
                for index in detail.crops.indices where !reReadCrops.contains(index) {
                    let crop = detail.crops[index]
                    let rect = PixelRect(x: crop.x, y: crop.y, width: crop.width, height: crop.height)
                    guard large.covers(mostOf: rect), rect.area <= remaining else { continue }
                    reReadCrops.insert(index)
                    let image = GreyImage(width: crop.width, height: crop.height, pixels: crop.pixels)
                    try readWithRetries(
                        image, lines: lines, attempts: [.plain, .zxing], into: &found, remaining: &remaining)
                    if found.barcodes.count > before { break }
                }
            }
            if found.barcodes.count > before { read.append(region.rect) }
        }
        if found.barcodes.isEmpty, remaining >= width * height {
            let whole = GreyImage(plane, width: width, height: height, stride: stride)
            try readWithRetries(whole, into: &found, remaining: &remaining)
        }
        return found.barcodes
    }

    /// The candidate regions located on a scaled frame, cut from the frame as captured: what ``read(luma:width:height:
    /// stride:detail:)`` may read again. The most code-like first, up to `budget`'s pixels in all (a reader with that
    /// budget cannot scan more anyway). Cheap enough for the capture loop: one locator pass and a few copies.
    public static func detail(
        locatedOn plane: UnsafeRawBufferPointer, width: Int, height: Int, stride: Int,
        captured: UnsafeRawBufferPointer, capturedWidth: Int, capturedHeight: Int, capturedStride: Int,
        budget: Budget = .standard
    ) -> LumaDetail? {
        guard width > 0, height > 0, stride >= width, plane.count >= stride * (height - 1) + width,
            capturedWidth > width || capturedHeight > height, capturedStride >= capturedWidth,
            captured.count >= capturedStride * (capturedHeight - 1) + capturedWidth
        else { return nil }
        let shape = LumaDetail(width: capturedWidth, height: capturedHeight, crops: [])
        var crops: [LumaDetail.Crop] = []
        var taken: [PixelRect] = []
        var remaining = budget.scannedPixels
        let locator = BarcodeLocator()
        for region in locator.regions(in: plane, width: width, height: height, stride: stride) {
            let large = Self.captured(region.rect, width: width, height: height, in: shape)
            // A large region (a code among spines or print) is located again at full resolution, where its code
            // is a small part of it; a small one is kept whole.
            var pieces = [large]
            if large.area > budget.scannedPixels / 4 {
                let origin = large.y * capturedStride + large.x
                let subplane = UnsafeRawBufferPointer(rebasing: captured[origin...])
                pieces = locator.regions(in: subplane, width: large.width, height: large.height, stride: capturedStride)
                    .map { PixelRect(x: large.x + $0.rect.x, y: large.y + $0.rect.y, width: $0.rect.width,
                        height: $0.rect.height) }
            }
            for piece in pieces where piece.area <= remaining && !taken.contains(where: { $0.covers(mostOf: piece) }) {
                remaining -= piece.area
                taken.append(piece)
                crops.append(
                    LumaDetail.Crop(
                        copying: captured, stride: capturedStride, x: piece.x, y: piece.y, width: piece.width,
                        height: piece.height))
            }
        }
        return crops.isEmpty ? nil : LumaDetail(width: capturedWidth, height: capturedHeight, crops: crops)
    }

    /// A region of a `width` x `height` frame in the pixels of the frame it was scaled from.
    private static func captured(_ rect: PixelRect, width: Int, height: Int, in detail: LumaDetail) -> PixelRect {
        rect.scaled(x: Double(detail.width) / Double(width), y: Double(detail.height) / Double(height))
            .clipped(width: detail.width, height: detail.height)
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

