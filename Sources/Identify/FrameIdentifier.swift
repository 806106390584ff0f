import SwiftWingCore

/// What the device can tell about a frame by itself: the codes in it and whether it is good
/// enough to send.
public struct Identification: Sendable {
    public var barcodes: [Barcode]
    public var quality: FrameQuality
    public var verdict: QualityVerdict
    /// Time spent identifying the frame (quality check and barcode reading).
    public var milliseconds: Double

    /// The ISBN-13s among the barcodes, each once.
    public var isbns: [String] {
        var seen: [String] = []
        for isbn in barcodes.compactMap(\.isbn13) where !seen.contains(isbn) { seen.append(isbn) }
        return seen
    }
}

/// The one entry point for identifying a frame, shared by the daemon's processing worker and
/// `swiftwing identify`: the quality check, then the barcode pass, on the frame's Y plane.
///
/// Not `Sendable` (it owns a ZBar scanner): one per worker thread.
public final class FrameIdentifier {
    public let thresholds: QualityThresholds
    private let reader: BarcodeReader
    private let meter = QualityMeter()

    public init(
        thresholds: QualityThresholds = QualityThresholds(), budget: BarcodeReader.Budget = .standard
    ) throws(IdentifyError) {
        self.thresholds = thresholds
        self.reader = try BarcodeReader(budget: budget)
    }

    /// Identifies `frame`; its barcode regions are read at the resolution captured first, from `frame.detail` (set by
    /// a camera that scales its frames down) or, for a frame scaled here, from `fullResolution`, the frame it was
    /// scaled from; then the frame's own regions where no code was read.
    public func identify(frame: YUV420Frame, fullResolution: YUV420Frame? = nil) throws(IdentifyError) -> Identification
    {
        let start = MonotonicInstant.now()
        let luma = UnsafeRawBufferPointer(frame.luma)
        let layout = frame.layout
        let (width, height, stride) = (layout.width, layout.height, layout.lumaStride)
        let quality = try meter.measure(luma: luma, width: width, height: height, stride: stride)
        let detail =
            frame.detail
            ?? fullResolution.flatMap { original in
                original.width <= width && original.height <= height
                    ? nil
                    : BarcodeReader.detail(
                        captured: UnsafeRawBufferPointer(original.luma), width: original.width,
                        height: original.height, stride: original.layout.lumaStride, budget: reader.budget)
            }
        let barcodes = try reader.read(luma: luma, width: width, height: height, stride: stride, detail: detail)
        let elapsed = Double(MonotonicInstant.now().nanoseconds(since: start)) / 1_000_000
        return Identification(
            barcodes: barcodes, quality: quality, verdict: quality.verdict(thresholds), milliseconds: elapsed)
    }
}
