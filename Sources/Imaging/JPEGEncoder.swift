import CJPEG
import SwiftWingCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Encodes ``YUV420Frame``s to JPEG straight from their Y, Cb and Cr planes (libjpeg's raw-data
/// interface: no RGB step, no colour conversion, no chroma resampling), 4:2:0, baseline.
///
/// One encoder keeps its libjpeg compressor and output buffer across frames, which saves the
/// setup on every scan. It is deliberately not `Sendable`: give each processing worker its own
/// encoder (create it on the worker, or hand it over once with `sending`).
public final class JPEGEncoder {
    /// The quality used when none is given: 85, a good trade of size and text legibility.
    public static let defaultQuality = 85

    /// libjpeg's forward DCT. In libjpeg-turbo both are SIMD-accelerated and `accurate` costs
    /// only a few percent more (see Benchmarks/README.md), so it is the default.
    public enum DCTMethod: Sendable, Hashable {
        /// `JDCT_ISLOW`: exact integer DCT.
        case accurate
        /// `JDCT_IFAST`: less accurate, slightly faster.
        case fast
    }

    /// The quality for ``encode(_:)``, 1...100.
    public let quality: Int
    public let dctMethod: DCTMethod

    private let compressor: LibJPEGCompressor
    /// The output buffer, malloc'd (libjpeg's memory destination may replace it with a bigger one).
    private var output: UnsafeMutablePointer<UInt8>?
    private var outputCapacity = 0
    /// Row pointers for one iMCU row: 16 luma rows, 8 Cb rows, 8 Cr rows; then the 3 plane arrays.
    private let rowPointers = UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>.allocate(capacity: 32)
    private let planes = UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>?>.allocate(capacity: 3)
    /// Edge-padded copies of one iMCU row, for widths that are not a multiple of 16.
    private var padded = UnsafeMutableRawBufferPointer(start: nil, count: 0)

    /// - Parameters:
    ///   - quality: 1 (smallest) to 100 (best); 85 by default.
    ///   - dctMethod: `.accurate` by default.
    /// - Throws: ``ImagingError/invalidQuality(_:)`` outside 1...100.
    public init(quality: Int = JPEGEncoder.defaultQuality, dctMethod: DCTMethod = .accurate) throws(ImagingError) {
        try Self.validate(quality: quality)
        self.quality = quality
        self.dctMethod = dctMethod
        self.compressor = try LibJPEGCompressor()
        planes[0] = rowPointers
        planes[1] = rowPointers + 16
        planes[2] = rowPointers + 24
    }

    deinit {
        free(output)
        rowPointers.deallocate()
        planes.deallocate()
        padded.deallocate()
    }

    /// Throws ``ImagingError/invalidQuality(_:)`` unless `quality` is in 1...100.
    public static func validate(quality: Int) throws(ImagingError) {
        guard (1...100).contains(quality) else { throw .invalidQuality(quality) }
    }

    /// The JPEG file for `frame` at this encoder's quality.
    public func encode(_ frame: YUV420Frame) throws(ImagingError) -> [UInt8] {
        try encode(frame, quality: quality)
    }

    /// The JPEG file for `frame` at `quality` (1...100), e.g. a lower one for thumbnails.
    public func encode(_ frame: YUV420Frame, quality: Int) throws(ImagingError) -> [UInt8] {
        try withJPEG(of: frame, quality: quality) { Array($0) }
    }

    /// Encodes `frame` and lends the JPEG bytes to `body` without copying them (for writing
    /// straight to the spool). The bytes live in the encoder's buffer and are only valid inside
    /// `body`; the next encode overwrites them.
    /// - Parameter quality: 1...100; this encoder's ``quality`` when `nil`.
    public func withJPEG<Result>(
        of frame: YUV420Frame, quality: Int? = nil, _ body: (UnsafeRawBufferPointer) -> Result
    ) throws(ImagingError) -> Result {
        let quality = quality ?? self.quality
        try Self.validate(quality: quality)
        let layout = frame.layout
        precondition(frame.buffer.capacity >= layout.byteCount, "frame buffer smaller than its layout")
        reserveOutput(atLeast: layout.width * layout.height / 2 + 65_536)
        do {
            try compress(frame, quality: quality)
        } catch {
            compressor.abort()
            throw .encodingFailed(reason: "\(frame.layout): \(error.message)")
        }
        return body(UnsafeRawBufferPointer(start: output, count: lastSize))
    }

    private var lastSize = 0

    private func reserveOutput(atLeast bytes: Int) {
        guard outputCapacity < bytes else { return }
        free(output)
        output = malloc(bytes)?.assumingMemoryBound(to: UInt8.self)
        outputCapacity = output == nil ? 0 : bytes
    }

    private func compress(_ frame: YUV420Frame, quality: Int) throws(LibJPEGFailure) {
        let layout = frame.layout
        let info = compressor.info
        info.pointee.image_width = UInt32(layout.width)
        info.pointee.image_height = UInt32(layout.height)
        info.pointee.input_components = 3
        info.pointee.in_color_space = JCS_YCbCr
        try compressor.setDefaults()
        try compressor.setColorspace(JCS_YCbCr)
        try compressor.setQuality(quality, forceBaseline: true)
        info.pointee.raw_data_in = 1
        info.pointee.dct_method = dctMethod == .accurate ? JDCT_ISLOW : JDCT_IFAST
        let components = info.pointee.comp_info!
        components[0].h_samp_factor = 2
        components[0].v_samp_factor = 2
        for c in 1...2 {
            components[c].h_samp_factor = 1
            components[c].v_samp_factor = 1
        }

        var destination = output
        var size = UInt(outputCapacity)
        try compressor.setMemoryDestination(&destination, &size)
        try compressor.start()

        let base = UnsafeMutablePointer(mutating: frame.buffer.bytes.baseAddress!.assumingMemoryBound(to: UInt8.self))
        // libjpeg reads whole 8x8 blocks: 16-sample-aligned luma rows and 8-aligned chroma rows.
        // When the width is a multiple of 16 the frame's own rows are read in place; otherwise each
        // row is copied into a padded row that repeats its last sample (as libjpeg does itself).
        let direct = layout.width % 16 == 0
        let paddedLuma = (layout.width + 15) & ~15
        let paddedChroma = paddedLuma / 2
        if !direct && padded.count < 16 * paddedLuma + 16 * paddedChroma {
            padded.deallocate()
            padded = .allocate(byteCount: 16 * paddedLuma + 16 * paddedChroma, alignment: 64)
        }
        let scratch = padded.baseAddress?.assumingMemoryBound(to: UInt8.self)

        func row(
            _ plane: UnsafeMutablePointer<UInt8>, _ y: Int, stride: Int, width: Int, paddedWidth: Int,
            slot: Int
        ) -> UnsafeMutablePointer<UInt8> {
            let source = plane + y * stride
            if direct { return source }
            let target = scratch! + slot
            target.update(from: source, count: width)
            target.advanced(by: width).update(repeating: source[width - 1], count: paddedWidth - width)
            return target
        }

        var y = 0
        while y < layout.height {
            // Rows past the bottom repeat the last row (the picture's edge, never out of bounds).
            for i in 0..<16 {
                let sourceRow = min(y + i, layout.height - 1)
                rowPointers[i] = row(
                    base, sourceRow, stride: layout.lumaStride, width: layout.width,
                    paddedWidth: paddedLuma, slot: i * paddedLuma)
            }
            for i in 0..<8 {
                let sourceRow = min(y / 2 + i, layout.chromaHeight - 1)
                let slot = 16 * paddedLuma + i * paddedChroma
                rowPointers[16 + i] = row(
                    base + layout.cbOffset, sourceRow, stride: layout.chromaStride,
                    width: layout.chromaWidth, paddedWidth: paddedChroma, slot: slot)
                rowPointers[24 + i] = row(
                    base + layout.crOffset, sourceRow, stride: layout.chromaStride,
                    width: layout.chromaWidth, paddedWidth: paddedChroma,
                    slot: slot + 8 * paddedChroma)
            }
            let written = try compressor.writeRaw(planes, lines: 16)
            guard written > 0 else { throw LibJPEGFailure(message: "jpeg_write_raw_data wrote no rows", code: 0) }
            y += 16
        }
        try compressor.finish()
        if destination != output {
            // libjpeg outgrew our buffer and malloc'd a bigger one: keep that one.
            free(output)
            output = destination
            outputCapacity = Int(size)
        }
        lastSize = Int(size)
    }
}

@available(*, unavailable, message: "a JPEGEncoder belongs to one worker; create one per worker")
extension JPEGEncoder: Sendable {}
