import SwiftWingCore

/// What can go wrong with the panel, each case worded as advice.
public enum PanelError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The framebuffer device does not exist (no display driver bound).
    case noFramebuffer(device: String)
    /// The framebuffer exists but this user may not open it.
    case permissionDenied(device: String)
    /// The framebuffer's pixel format is not one the panel draws (8 bpp palette, 24 bpp, YUV, planar).
    case unsupportedFormat(device: String, detail: String)
    /// An ioctl, open or mmap failed for another reason.
    case system(SystemCallError)
    /// Cairo refused (out of memory, a size it cannot make, a file it cannot write).
    case cairo(call: String, status: String)
    /// Writing the PNG output failed.
    case pngWrite(path: String, reason: String)

    public var description: String {
        switch self {
        case .noFramebuffer(let device):
            "no framebuffer at \(device): the panel runs headless. Attach a display whose driver provides \(device) "
                + "(for an SPI panel, its dtoverlay in /boot/firmware/config.txt), or use --panel png:/tmp/panel.png"
        case .permissionDenied(let device):
            "\(device) is not writable by this user: add the user to the 'video' group (usermod -aG video USER) "
                + "or run the daemon as the swiftwing service user"
        case .unsupportedFormat(let device, let detail):
            "\(device) uses \(detail), which the panel cannot draw: switch the display to 16 or 32 bits per pixel "
                + "(fbset -depth 16, or framebuffer_depth=16 in /boot/firmware/config.txt)"
        case .system(let error):
            "framebuffer: \(error)"
        case .cairo(let call, let status):
            "cairo \(call) failed: \(status)"
        case .pngWrite(let path, let reason):
            "cannot write the panel picture to \(path): \(reason); check that the directory exists and is writable"
        }
    }
}
