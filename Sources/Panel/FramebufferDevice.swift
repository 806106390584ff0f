import CShim
import Glibc
import SwiftWingCore

// The one Swift layer over the Linux fbdev interface: open, the two SCREENINFO ioctls, mmap and
// munmap live here and nowhere else.

/// A Linux framebuffer (`/dev/fb0`) opened and mapped for drawing.
///
/// The visible picture starts at the panning offset (`yoffset`/`xoffset`) inside the mapped
/// memory; rows are `line_length` bytes apart. Owned by one thread (the panel's).
public final class FramebufferDevice {
    public let path: String
    /// The visible picture's format, from `FBIOGET_VSCREENINFO` and `FBIOGET_FSCREENINFO`.
    public let format: FramebufferFormat
    /// The driver's name (`fb_fix_screeninfo.id`), e.g. "Virtual FB".
    public let driverName: String
    private let descriptor: Int32
    private let mapping: UnsafeMutableRawPointer
    private let mappingLength: Int
    /// Where the visible picture starts in the mapping.
    private let visibleOffset: Int

    /// Opens `path`, reads its mode and maps its memory.
    ///
    /// The corresponding C functions are `open`, `ioctl(FBIOGET_VSCREENINFO)`,
    /// `ioctl(FBIOGET_FSCREENINFO)` and `mmap`.
    public init(path: String = "/dev/fb0") throws(PanelError) {
        self.path = path
        let fd: Int32
        do {
            fd = try retryingOnInterrupt("open", subject: path) { open(path, O_RDWR | O_CLOEXEC) }
        } catch {
            switch error.errno {
            case ENOENT, ENODEV, ENXIO: throw .noFramebuffer(device: path)
            case EACCES, EPERM: throw .permissionDenied(device: path)
            default: throw .system(error)
            }
        }
        var variable = fb_var_screeninfo()
        var fixed = fb_fix_screeninfo()
        do {
            _ = try retryingOnInterrupt("ioctl FBIOGET_VSCREENINFO", subject: path) {
                sw_fb_ioctl(fd, sw_FBIOGET_VSCREENINFO(), &variable)
            }
            _ = try retryingOnInterrupt("ioctl FBIOGET_FSCREENINFO", subject: path) {
                sw_fb_ioctl(fd, sw_FBIOGET_FSCREENINFO(), &fixed)
            }
        } catch {
            close(fd)
            throw error.errno == ENOTTY
                ? .unsupportedFormat(device: path, detail: "no framebuffer interface") : .system(error)
        }
        driverName = withUnsafeBytes(of: fixed.id) { bytes in
            String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
        }
        let format = FramebufferFormat(
            width: Int(variable.xres), height: Int(variable.yres), bitsPerPixel: Int(variable.bits_per_pixel),
            red: Bitfield(offset: Int(variable.red.offset), length: Int(variable.red.length)),
            green: Bitfield(offset: Int(variable.green.offset), length: Int(variable.green.length)),
            blue: Bitfield(offset: Int(variable.blue.offset), length: Int(variable.blue.length)),
            transparent: Bitfield(offset: Int(variable.transp.offset), length: Int(variable.transp.length)),
            lineLength: Int(fixed.line_length))
        guard fixed.type == sw_FB_TYPE_PACKED_PIXELS(), fixed.visual == sw_FB_VISUAL_TRUECOLOR(),
            variable.grayscale == 0,
            format.isSupported
        else {
            close(fd)
            throw .unsupportedFormat(
                device: path,
                detail: "\(variable.bits_per_pixel) bpp (type \(fixed.type), visual \(fixed.visual), \(format))")
        }
        let offset = Int(variable.yoffset) * format.lineLength + Int(variable.xoffset) * format.bytesPerPixel
        let length = Int(fixed.smem_len)
        guard length >= offset + format.byteCount else {
            close(fd)
            throw .unsupportedFormat(device: path, detail: "\(length) bytes of video memory for \(format)")
        }
        guard let mapped = mmap(nil, length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0), mapped != MAP_FAILED else {
            let error = SystemCallError("mmap", subject: path, errno: errno)
            close(fd)
            throw .system(error)
        }
        self.format = format
        self.descriptor = fd
        self.mapping = mapped
        self.mappingLength = length
        self.visibleOffset = offset
    }

    /// Sets the virtual width of the framebuffer at `path` (rows then hold `virtualWidth` pixels, so
    /// `line_length` grows while the visible width stays): for tests of the stride handling on a
    /// real driver (vfb accepts it). Returns the new `line_length`.
    ///
    /// The corresponding C function is `ioctl(FBIOPUT_VSCREENINFO)`.
    public static func setVirtualWidth(_ virtualWidth: Int, path: String = "/dev/fb0") throws(PanelError) -> Int {
        let fd: Int32
        do {
            fd = try retryingOnInterrupt("open", subject: path) { open(path, O_RDWR | O_CLOEXEC) }
        } catch {
            throw error.errno == ENOENT ? .noFramebuffer(device: path) : .system(error)
        }
        defer { close(fd) }
        var variable = fb_var_screeninfo()
        var fixed = fb_fix_screeninfo()
        do {
            _ = try retryingOnInterrupt("ioctl FBIOGET_VSCREENINFO", subject: path) {
                sw_fb_ioctl(fd, sw_FBIOGET_VSCREENINFO(), &variable)
            }
            variable.xres_virtual = UInt32(virtualWidth)
            _ = try retryingOnInterrupt("ioctl FBIOPUT_VSCREENINFO", subject: path) {
                sw_fb_ioctl(fd, sw_FBIOPUT_VSCREENINFO(), &variable)
            }
            _ = try retryingOnInterrupt("ioctl FBIOGET_FSCREENINFO", subject: path) {
                sw_fb_ioctl(fd, sw_FBIOGET_FSCREENINFO(), &fixed)
            }
        } catch {
            throw .system(error)
        }
        return Int(fixed.line_length)
    }

    deinit {
        munmap(mapping, mappingLength)
        close(descriptor)
    }

    /// Copies `rects` of `image` to the screen, converting to the framebuffer's pixel format.
    public func present(_ image: PanelImage, rects: [PanelRect]) {
        PixelCopier.copy(image, rects: rects, to: mapping + visibleOffset, format: format)
    }

    /// Fills the visible picture with black (before the first frame, so no stale console shows).
    public func clear() {
        for row in 0..<format.height {
            memset(mapping + visibleOffset + row * format.lineLength, 0, format.width * format.bytesPerPixel)
        }
    }
}
