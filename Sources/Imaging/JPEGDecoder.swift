import CJPEG
import CShim
import SwiftWingCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The size of a JPEG picture, read from its header without decoding any pixels.
public struct JPEGInfo: Hashable, Sendable, CustomStringConvertible {
    public var width: Int
    public var height: Int
    /// Colour components: 1 for grayscale, 3 for YCbCr.
    public var components: Int

    public init(width: Int, height: Int, components: Int) {
        self.width = width
        self.height = height
        self.components = components
    }

    /// Reads the header of the JPEG in `jpeg`; `source` names it in errors (a path, "camera frame 12").
    public init(_ jpeg: UnsafeRawBufferPointer, source: String = "JPEG data") throws(ImagingError) {
        let decompressor = try JPEGDecoder.open(jpeg, source: source)
        let info = decompressor.info.pointee
        self.init(width: Int(info.image_width), height: Int(info.image_height), components: Int(info.num_components))
    }

    /// Reads the header of the JPEG in `jpeg`.
    public init(_ jpeg: [UInt8], source: String = "JPEG data") throws(ImagingError) {
        self = try withBytes(of: jpeg) { (bytes) throws(ImagingError) in try JPEGInfo(bytes, source: source) }
    }

    /// Reads the header of the JPEG file at `path`; errors name the file.
    public init(contentsOf path: String) throws(ImagingError) {
        try self.init(try readWholeFile(path), source: path)
    }

    public var description: String { "\(width)x\(height) JPEG" }
}

/// Decodes JPEG pictures to planar ``YUV420Frame``s, optionally shrinking them cheaply inside
/// libjpeg (DCT scaling) when only a smaller picture is needed.
///
/// A value type with no state: each decode uses its own libjpeg decompressor, so one decoder can
/// be shared freely. At full size, 4:2:0 YCbCr JPEGs (every camera and phone photo, baseline or
/// progressive) come straight out of libjpeg's raw-data interface into the three planes. Scaled
/// decodes (libjpeg-turbo then decodes chroma at luma resolution), other samplings and grayscale
/// go through YCbCr scanlines and chroma is averaged down to 4:2:0.
public struct JPEGDecoder: Sendable {
    public init() {}

    /// Decodes `jpeg` to a YUV 4:2:0 frame.
    ///
    /// - Parameters:
    ///   - minimumWidth, minimumHeight: the smallest picture the caller can use. The decoder picks
    ///     the smallest libjpeg scale (1/8, 2/8 … 8/8) whose output is still at least this big;
    ///     0 for both (the default) decodes at full size. The picture is never enlarged.
    ///   - source: names the data in errors (a path, "camera frame 12").
    ///   - pool: where the output buffer comes from; a fresh buffer when `nil`.
    /// - Returns: a frame whose strides may be padded (libjpeg writes whole 8x8 blocks).
    public func decode(
        _ jpeg: UnsafeRawBufferPointer, minimumWidth: Int = 0, minimumHeight: Int = 0,
        source: String = "JPEG data", pool: BufferPool? = nil
    ) throws(ImagingError) -> YUV420Frame {
        let decompressor = try Self.open(jpeg, source: source)
        let info = decompressor.info
        let width = Int(info.pointee.image_width)
        let height = Int(info.pointee.image_height)
        let eighths = Self.scaleEighths(
            width: width, height: height, minimumWidth: minimumWidth,
            minimumHeight: minimumHeight)
        info.pointee.scale_num = UInt32(eighths)
        info.pointee.scale_denom = 8
        info.pointee.dct_method = JDCT_ISLOW

        let colorSpace = info.pointee.jpeg_color_space
        guard info.pointee.data_precision == 8 else {
            throw .unsupportedJPEG(source: source, reason: "\(info.pointee.data_precision)-bit samples")
        }
        switch colorSpace {
        case JCS_YCbCr: info.pointee.out_color_space = JCS_YCbCr
        case JCS_GRAYSCALE: info.pointee.out_color_space = JCS_GRAYSCALE
        default: throw .unsupportedJPEG(source: source, reason: "colour space \(colorSpace.rawValue) is not YCbCr")
        }

        do {
            info.pointee.raw_data_out = 1
            try decompressor.calculateOutputDimensions()
            if !Self.isRaw420(info) {
                info.pointee.raw_data_out = 0
                info.pointee.do_fancy_upsampling = 0  // chroma is averaged back down anyway
                try decompressor.calculateOutputDimensions()
            }
            let frame: YUV420Frame
            if info.pointee.raw_data_out != 0 {
                frame = try Self.readRaw420(decompressor, source: source, pool: pool)
            } else {
                frame = try Self.readScanlines(decompressor, source: source, pool: pool)
            }
            try decompressor.finish()
            if let warning = decompressor.firstWarning {
                let more = warning.count > 1 ? " and \(warning.count - 1) more warnings" : ""
                throw ImagingError.corruptJPEG(source: source, reason: warning.message + more)
            }
            return frame
        } catch let error as LibJPEGFailure {
            throw Self.imagingError(error, source: source)
        } catch let error as ImagingError {
            throw error
        } catch {
            throw .corruptJPEG(source: source, reason: "\(error)")
        }
    }

    /// Decodes `jpeg` to a YUV 4:2:0 frame; see the `UnsafeRawBufferPointer` variant.
    public func decode(
        _ jpeg: [UInt8], minimumWidth: Int = 0, minimumHeight: Int = 0, source: String = "JPEG data",
        pool: BufferPool? = nil
    ) throws(ImagingError) -> YUV420Frame {
        try withBytes(of: jpeg) { (bytes) throws(ImagingError) in
            try decode(bytes, minimumWidth: minimumWidth, minimumHeight: minimumHeight, source: source, pool: pool)
        }
    }

    /// Decodes the JPEG file at `path`; errors name the file.
    public func decode(
        contentsOf path: String, minimumWidth: Int = 0, minimumHeight: Int = 0, pool: BufferPool? = nil
    ) throws(ImagingError) -> YUV420Frame {
        try decode(
            try readWholeFile(path), minimumWidth: minimumWidth, minimumHeight: minimumHeight, source: path,
            pool: pool)
    }

    /// The scale, in eighths, that gives the smallest picture still at least the minimum size.
    static func scaleEighths(width: Int, height: Int, minimumWidth: Int, minimumHeight: Int) -> Int {
        if minimumWidth <= 0 && minimumHeight <= 0 { return 8 }  // no minimum: full size
        for eighths in 1...8 {
            // libjpeg's output size is ceil(size * eighths / 8).
            let scaledWidth = (width * eighths + 7) / 8
            let scaledHeight = (height * eighths + 7) / 8
            if scaledWidth >= minimumWidth && scaledHeight >= minimumHeight { return eighths }
        }
        return 8
    }

    /// A decompressor that has read the header of `jpeg` (which must outlive it).
    static func open(_ jpeg: UnsafeRawBufferPointer, source: String) throws(ImagingError) -> LibJPEGDecompressor {
        guard jpeg.count >= 2 else { throw .notJPEG(source: source, reason: "only \(jpeg.count) bytes") }
        guard jpeg[0] == 0xFF && jpeg[1] == 0xD8 else {
            throw .notJPEG(source: source, reason: "starts with \(hex(jpeg[0])) \(hex(jpeg[1])), not FF D8")
        }
        let decompressor = try LibJPEGDecompressor()
        do {
            try decompressor.setMemorySource(jpeg)
            try decompressor.readHeader()
        } catch {
            throw imagingError(error, source: source)
        }
        return decompressor
    }

    private static func hex(_ byte: UInt8) -> String {
        let digits = Array("0123456789ABCDEF")
        return String([digits[Int(byte >> 4)], digits[Int(byte & 0xF)]])
    }

    private static func imagingError(_ failure: LibJPEGFailure, source: String) -> ImagingError {
        switch Int(failure.code) {
        case Int(JERR_NO_SOI.rawValue), Int(JERR_INPUT_EMPTY.rawValue):
            return .notJPEG(source: source, reason: failure.message)
        case Int(JERR_BAD_PRECISION.rawValue), Int(JERR_CONVERSION_NOTIMPL.rawValue),
            Int(JERR_BAD_J_COLORSPACE.rawValue), Int(JERR_NOT_COMPILED.rawValue):
            return .unsupportedJPEG(source: source, reason: failure.message)
        default:
            return .corruptJPEG(source: source, reason: failure.message)
        }
    }

    /// Whether libjpeg will hand out Y at full and Cb, Cr at half resolution in both directions,
    /// i.e. exactly the planes of a YUV420 frame (2x2, 1x1, 1x1 sampling, same DCT scale for all).
    private static func isRaw420(_ info: UnsafeMutablePointer<jpeg_decompress_struct>) -> Bool {
        let d = info.pointee
        guard d.jpeg_color_space == JCS_YCbCr, d.num_components == 3, let comps = d.comp_info else { return false }
        let y = comps[0]
        let cb = comps[1]
        let cr = comps[2]
        return y.h_samp_factor == 2 && y.v_samp_factor == 2
            && cb.h_samp_factor == 1 && cb.v_samp_factor == 1 && cr.h_samp_factor == 1 && cr.v_samp_factor == 1
            && cb.DCT_scaled_size == y.DCT_scaled_size && cr.DCT_scaled_size == y.DCT_scaled_size
            && Int(cb.downsampled_width) == (Int(d.output_width) + 1) / 2
            && Int(cb.downsampled_height) == (Int(d.output_height) + 1) / 2
    }

    private static func makeFrame(_ layout: YUV420Layout, pool: BufferPool?) throws(ImagingError) -> YUV420Frame {
        guard let pool else { return YUV420Frame(layout: layout) }
        return YUV420Frame(
            layout: layout, buffer: try acquireBuffer(from: pool, bytes: layout.byteCount),
            timestamp: .now())
    }

    /// Reads the Y, Cb and Cr planes straight into the frame, one iMCU row at a time.
    private static func readRaw420(
        _ decompressor: LibJPEGDecompressor, source: String, pool: BufferPool?
    ) throws -> YUV420Frame {
        let d = decompressor.info.pointee
        let comps = d.comp_info!
        let block = Int(comps[0].DCT_scaled_size)
        let width = Int(d.output_width)
        let height = Int(d.output_height)
        // libjpeg writes whole blocks: rows must be wide enough for every block of the component.
        let lumaStride = max(width, Int(comps[0].width_in_blocks) * block)
        let chromaStride = max(
            (width + 1) / 2, Int(comps[1].width_in_blocks) * block,
            Int(comps[2].width_in_blocks) * block)
        let frame = try makeFrame(
            YUV420Layout(
                width: width, height: height, lumaStride: lumaStride,
                chromaStride: chromaStride), pool: pool)
        try decompressor.start()

        let lumaRows = 2 * block  // max_v_samp_factor * DCT_scaled_size
        let chromaRows = block
        // Rows below the picture (the last iMCU row's padding) land in scratch rows.
        let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: lumaStride * lumaRows, alignment: 64)
        defer { scratch.deallocate() }
        let rowPointers = UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>.allocate(
            capacity: lumaRows + 2 * chromaRows)
        defer { rowPointers.deallocate() }
        let planes = UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>?>.allocate(capacity: 3)
        defer { planes.deallocate() }
        planes[0] = rowPointers
        planes[1] = rowPointers + lumaRows
        planes[2] = rowPointers + lumaRows + chromaRows

        let layout = frame.layout
        let base = frame.buffer.bytes.baseAddress!.assumingMemoryBound(to: UInt8.self)
        let scratchBase = scratch.baseAddress!.assumingMemoryBound(to: UInt8.self)
        while Int(decompressor.info.pointee.output_scanline) < height {
            let firstRow = Int(decompressor.info.pointee.output_scanline)
            for i in 0..<lumaRows {
                let row = firstRow + i
                rowPointers[i] = row < height ? base + row * lumaStride : scratchBase + i * lumaStride
            }
            let firstChromaRow = firstRow / 2
            for i in 0..<chromaRows {
                let row = firstChromaRow + i
                let inside = row < layout.chromaHeight
                rowPointers[lumaRows + i] =
                    inside ? base + layout.cbOffset + row * chromaStride : scratchBase + i * lumaStride
                rowPointers[lumaRows + chromaRows + i] =
                    inside ? base + layout.crOffset + row * chromaStride : scratchBase + i * lumaStride
            }
            let read = try decompressor.readRaw(planes, maxLines: lumaRows)
            // A memory source never suspends; no rows means libjpeg gave up without saying why.
            if read == 0 {
                throw ImagingError.corruptJPEG(source: source, reason: "no more rows after row \(firstRow)")
            }
        }
        return frame
    }

    /// Reads YCbCr (or grayscale) scanlines two at a time and averages chroma over each 2x2 block.
    private static func readScanlines(
        _ decompressor: LibJPEGDecompressor, source: String, pool: BufferPool?
    ) throws -> YUV420Frame {
        try decompressor.start()
        let d = decompressor.info.pointee
        let width = Int(d.output_width)
        let height = Int(d.output_height)
        let components = Int(d.output_components)
        let frame = try makeFrame(YUV420Layout(width: width, height: height), pool: pool)
        let layout = frame.layout
        let rowBytes = width * components
        let scratch = UnsafeMutablePointer<UInt8>.allocate(capacity: rowBytes * 2)
        defer { scratch.deallocate() }
        let rows = UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>.allocate(capacity: 2)
        defer { rows.deallocate() }
        let base = frame.buffer.bytes.baseAddress!.assumingMemoryBound(to: UInt8.self)

        var y = 0
        while y < height {
            let pair = min(2, height - y)
            var got = 0
            while got < pair {
                rows[0] = scratch + got * rowBytes
                let read = try decompressor.readScanlines(rows, maxLines: 1)
                if read == 0 { break }
                got += read
            }
            if got < pair { throw ImagingError.corruptJPEG(source: source, reason: "no more rows after row \(y)") }
            let row0 = scratch
            let row1 = pair == 2 ? scratch + rowBytes : scratch
            let luma0 = base + y * layout.lumaStride
            let luma1 = base + (y + pair - 1) * layout.lumaStride
            for x in 0..<width {
                luma0[x] = row0[x * components]
                luma1[x] = row1[x * components]
            }
            let chromaRow = y / 2
            let cb = base + layout.cbOffset + chromaRow * layout.chromaStride
            let cr = base + layout.crOffset + chromaRow * layout.chromaStride
            if components == 1 {
                cb.update(repeating: 128, count: layout.chromaWidth)
                cr.update(repeating: 128, count: layout.chromaWidth)
            } else {
                for cx in 0..<layout.chromaWidth {
                    let x0 = 2 * cx * 3
                    let x1 = min(2 * cx + 1, width - 1) * 3
                    let sumCb = Int(row0[x0 + 1]) + Int(row0[x1 + 1]) + Int(row1[x0 + 1]) + Int(row1[x1 + 1])
                    let sumCr = Int(row0[x0 + 2]) + Int(row0[x1 + 2]) + Int(row1[x0 + 2]) + Int(row1[x1 + 2])
                    cb[cx] = UInt8(truncatingIfNeeded: (sumCb + 2) >> 2)
                    cr[cx] = UInt8(truncatingIfNeeded: (sumCr + 2) >> 2)
                }
            }
            y += pair
        }
        return frame
    }
}

/// A buffer for `bytes` from `pool`, or the error that says why there is none.
func acquireBuffer(from pool: BufferPool, bytes: Int) throws(ImagingError) -> PixelBuffer {
    guard pool.bufferSize >= bytes, let buffer = pool.acquire() else {
        throw .noFreeBuffer(neededBytes: bytes, poolBufferSize: pool.bufferSize)
    }
    return buffer
}

/// The whole file at `path`; the error names the call that failed.
func readWholeFile(_ path: String) throws(ImagingError) -> [UInt8] {
    do {
        return try FileOperations.readFile(path)
    } catch {
        throw .unreadableFile(path: path, reason: "\(error.call): \(error.reason)")
    }
}

/// Runs `body` on the bytes of `array`, keeping `body`'s typed error.
func withBytes<Result>(
    of array: [UInt8], _ body: (UnsafeRawBufferPointer) throws(ImagingError) -> Result
) throws(ImagingError) -> Result {
    let outcome = array.withUnsafeBytes { bytes in
        Swift.Result { () throws(ImagingError) -> Result in try body(bytes) }
    }
    return try outcome.get()
}
