import CCairo
import Glibc

private func statusText(_ status: cairo_status_t) -> String {
    String(cString: cairo_status_to_string(status))
}

/// An off-screen picture: a Cairo image surface in `CAIRO_FORMAT_RGB24` (32 bits per pixel,
/// native-endian `0x00RRGGBB`), the panel's drawing target and the source of every output.
public final class PanelImage {
    let surface: OpaquePointer
    public let width: Int
    public let height: Int
    /// Bytes per row of ``withPixels(_:)``.
    public let stride: Int

    /// A black picture of `width` x `height`.
    ///
    /// The corresponding C function is `cairo_image_surface_create`.
    public init(width: Int, height: Int) throws(PanelError) {
        precondition(width > 0 && height > 0, "a panel has at least one pixel")
        guard let surface = cairo_image_surface_create(CAIRO_FORMAT_RGB24, Int32(width), Int32(height)) else {
            throw .cairo(call: "cairo_image_surface_create", status: "no surface")
        }
        let status = cairo_surface_status(surface)
        guard status == CAIRO_STATUS_SUCCESS else {
            cairo_surface_destroy(surface)
            throw .cairo(call: "cairo_image_surface_create \(width)x\(height)", status: statusText(status))
        }
        self.surface = surface
        self.width = width
        self.height = height
        self.stride = Int(cairo_image_surface_get_stride(surface))
    }

    /// Reads a PNG file (for golden images); alpha is dropped onto black.
    ///
    /// The corresponding C function is `cairo_image_surface_create_from_png`.
    public convenience init(contentsOfPNG path: String) throws(PanelError) {
        guard let loaded = cairo_image_surface_create_from_png(path) else {
            throw .cairo(call: "cairo_image_surface_create_from_png \(path)", status: "no surface")
        }
        defer { cairo_surface_destroy(loaded) }
        let status = cairo_surface_status(loaded)
        guard status == CAIRO_STATUS_SUCCESS else {
            throw .cairo(call: "cairo_image_surface_create_from_png \(path)", status: statusText(status))
        }
        try self.init(
            width: Int(cairo_image_surface_get_width(loaded)), height: Int(cairo_image_surface_get_height(loaded)))
        let cr = cairo_create(surface)
        cairo_set_source_surface(cr, loaded, 0, 0)
        cairo_paint(cr)
        cairo_destroy(cr)
        cairo_surface_flush(surface)
    }

    deinit {
        cairo_surface_destroy(surface)
    }

    /// Calls `body` with the pixels (rows of `stride` bytes, each pixel a native-endian `UInt32`
    /// `0x00RRGGBB`); Cairo is told afterwards that they may have changed.
    ///
    /// The corresponding C functions are `cairo_surface_flush`, `cairo_image_surface_get_data`
    /// and `cairo_surface_mark_dirty`.
    public func withPixels<R, E: Error>(_ body: (UnsafeMutableRawPointer) throws(E) -> R) throws(E) -> R {
        cairo_surface_flush(surface)
        defer { cairo_surface_mark_dirty(surface) }
        return try body(UnsafeMutableRawPointer(cairo_image_surface_get_data(surface)!))
    }

    /// Read-only access to the pixels, without invalidating Cairo's caches.
    public func withPixelsReadOnly<R, E: Error>(_ body: (UnsafeRawPointer) throws(E) -> R) throws(E) -> R {
        cairo_surface_flush(surface)
        return try body(UnsafeRawPointer(cairo_image_surface_get_data(surface)!))
    }

    /// The colour at (`x`, `y`).
    public func pixel(x: Int, y: Int) -> PanelColor {
        precondition(x >= 0 && x < width && y >= 0 && y < height)
        let value = withPixelsReadOnly { $0.load(fromByteOffset: y * stride + x * 4, as: UInt32.self) }
        return PanelColor(hex: value & 0xFF_FFFF)
    }

    /// Writes the picture to `path` as a PNG, atomically: a temporary file beside it, then
    /// `rename(2)`, so a reader never sees half a picture.
    ///
    /// The corresponding C function is `cairo_surface_write_to_png`.
    public func writePNG(to path: String) throws(PanelError) {
        let temporary = path + ".tmp-\(getpid())"
        let status = cairo_surface_write_to_png(surface, temporary)
        guard status == CAIRO_STATUS_SUCCESS else {
            unlink(temporary)
            throw .pngWrite(path: path, reason: statusText(status))
        }
        guard rename(temporary, path) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporary)
            throw .pngWrite(path: path, reason: reason)
        }
    }
}
