import CJPEG
import CShim

// The one thin layer over libjpeg. Every libjpeg call that can fail goes through a `sw_jpeg_*`
// wrapper in CShim (setjmp there, since Swift cannot), and `check` turns its -1 into a typed error
// carrying libjpeg's own message. Pointers to libjpeg state never leave this file's types.

/// The libjpeg this module is built against.
public enum LibJPEG {
    /// The API version of its headers: 62 for libjpeg-turbo's libjpeg 6b interface (`JPEG_LIB_VERSION`).
    public static let apiVersion = Int(JPEG_LIB_VERSION)
}

/// A libjpeg failure before it is given a context (which file, encode or decode).
struct LibJPEGFailure: Error {
    /// libjpeg's message, e.g. "Not a JPEG file: starts with 0x89 0x50".
    var message: String
    /// libjpeg's message code (`J_MESSAGE_CODE`), to tell "not a JPEG" from "damaged".
    var code: Int32
}

@inline(__always)
private func check(_ status: Int32, _ info: UnsafeRawPointer, _ call: StaticString) throws(LibJPEGFailure) {
    guard status == 0 else {
        let message = String(cString: sw_jpeg_error_message(info))
        let code = info.assumingMemoryBound(to: jpeg_common_struct.self).pointee.err.pointee.msg_code
        throw LibJPEGFailure(message: message.isEmpty ? "\(call) failed" : message, code: code)
    }
}

/// A `jpeg_compress_struct` with SwiftWing's error manager. Owned by one ``JPEGEncoder``.
final class LibJPEGCompressor {
    let info: UnsafeMutablePointer<jpeg_compress_struct>

    init() throws(ImagingError) {
        guard let info = sw_jpeg_compress_create() else { throw .outOfMemory(what: "a JPEG compressor") }
        self.info = info
    }

    deinit { sw_jpeg_compress_destroy(info) }

    private var raw: UnsafeRawPointer { UnsafeRawPointer(info) }

    /// The corresponding C function is `jpeg_set_defaults`.
    func setDefaults() throws(LibJPEGFailure) { try check(sw_jpeg_set_defaults(info), raw, "jpeg_set_defaults") }

    /// The corresponding C function is `jpeg_set_colorspace`.
    func setColorspace(_ space: J_COLOR_SPACE) throws(LibJPEGFailure) {
        try check(sw_jpeg_set_colorspace(info, Int32(space.rawValue)), raw, "jpeg_set_colorspace")
    }

    /// The corresponding C function is `jpeg_set_quality`.
    func setQuality(_ quality: Int, forceBaseline: Bool) throws(LibJPEGFailure) {
        try check(sw_jpeg_set_quality(info, Int32(quality), forceBaseline ? 1 : 0), raw, "jpeg_set_quality")
    }

    /// The corresponding C function is `jpeg_mem_dest`.
    func setMemoryDestination(
        _ buffer: UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>, _ size: UnsafeMutablePointer<UInt>
    ) throws(LibJPEGFailure) {
        try check(sw_jpeg_mem_dest(info, buffer, size), raw, "jpeg_mem_dest")
    }

    /// The corresponding C function is `jpeg_start_compress`.
    func start() throws(LibJPEGFailure) { try check(sw_jpeg_start_compress(info, 1), raw, "jpeg_start_compress") }

    /// Writes one iMCU row of planar data. The corresponding C function is `jpeg_write_raw_data`.
    func writeRaw(
        _ planes: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>?>, lines: Int
    ) throws(LibJPEGFailure) -> Int {
        var written: UInt32 = 0
        try check(sw_jpeg_write_raw_data(info, planes, UInt32(lines), &written), raw, "jpeg_write_raw_data")
        return Int(written)
    }

    /// The corresponding C function is `jpeg_finish_compress`.
    func finish() throws(LibJPEGFailure) { try check(sw_jpeg_finish_compress(info), raw, "jpeg_finish_compress") }

    /// Resets after a failure so the struct can be used again. The corresponding C function is
    /// `jpeg_abort_compress`.
    func abort() {
        sw_jpeg_abort_compress(info)
        sw_jpeg_reset_messages(raw)
    }
}

/// A `jpeg_decompress_struct` with SwiftWing's error manager, for one decode.
final class LibJPEGDecompressor {
    let info: UnsafeMutablePointer<jpeg_decompress_struct>

    init() throws(ImagingError) {
        guard let info = sw_jpeg_decompress_create() else { throw .outOfMemory(what: "a JPEG decompressor") }
        self.info = info
    }

    deinit { sw_jpeg_decompress_destroy(info) }

    private var raw: UnsafeRawPointer { UnsafeRawPointer(info) }

    /// Reads from memory that must stay valid until the decode ends. The corresponding C function
    /// is `jpeg_mem_src`.
    func setMemorySource(_ bytes: UnsafeRawBufferPointer) throws(LibJPEGFailure) {
        let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self)
        try check(sw_jpeg_mem_src(info, base, UInt(bytes.count)), raw, "jpeg_mem_src")
    }

    /// The corresponding C function is `jpeg_read_header`.
    func readHeader() throws(LibJPEGFailure) {
        var result: Int32 = 0
        try check(sw_jpeg_read_header(info, 1, &result), raw, "jpeg_read_header")
    }

    /// The corresponding C function is `jpeg_calc_output_dimensions`.
    func calculateOutputDimensions() throws(LibJPEGFailure) {
        try check(sw_jpeg_calc_output_dimensions(info), raw, "jpeg_calc_output_dimensions")
    }

    /// The corresponding C function is `jpeg_start_decompress`.
    func start() throws(LibJPEGFailure) { try check(sw_jpeg_start_decompress(info), raw, "jpeg_start_decompress") }

    /// The corresponding C function is `jpeg_read_raw_data`.
    func readRaw(
        _ planes: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>?>, maxLines: Int
    ) throws(LibJPEGFailure) -> Int {
        var read: UInt32 = 0
        try check(sw_jpeg_read_raw_data(info, planes, UInt32(maxLines), &read), raw, "jpeg_read_raw_data")
        return Int(read)
    }

    /// The corresponding C function is `jpeg_read_scanlines`.
    func readScanlines(_ rows: UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>, maxLines: Int) throws(LibJPEGFailure)
        -> Int
    {
        var read: UInt32 = 0
        try check(sw_jpeg_read_scanlines(info, rows, UInt32(maxLines), &read), raw, "jpeg_read_scanlines")
        return Int(read)
    }

    /// The corresponding C function is `jpeg_finish_decompress`.
    func finish() throws(LibJPEGFailure) { try check(sw_jpeg_finish_decompress(info), raw, "jpeg_finish_decompress") }

    /// Warnings libjpeg patched over (e.g. "Premature end of JPEG file"), first message and count.
    var firstWarning: (message: String, count: Int)? {
        let count = Int(sw_jpeg_warning_count(raw))
        return count == 0 ? nil : (String(cString: sw_jpeg_warning_message(raw)), count)
    }
}
