import SwiftWingCore

/// Everything that can go wrong with a camera, written as advice: each message names the device (or
/// folder) and says what to do about it.
///
/// Device states (unplugged, busy, stalled) are errors the daemon handles; programmer errors (a bad
/// file descriptor, a bad pointer) trap instead and never show up here.
public enum CameraError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Nothing exists at the configured path.
    case deviceNotFound(device: String)
    /// The path exists but this process may not open it.
    case permissionDenied(device: String)
    /// Another process holds the camera.
    case deviceBusy(device: String)
    /// The path is not a V4L2 device at all (a regular file, `/dev/null`, a directory).
    case notV4L2Device(device: String, reason: String)
    /// A V4L2 device, but not a single-planar video capture node with streaming I/O.
    case notCaptureDevice(device: String, card: String, driver: String, missing: String)
    /// The camera offers no format that can become YUV 4:2:0 (`offered` lists what it has).
    case noUsableFormat(device: String, offered: [OfferedFormat])
    /// The driver gave fewer mmap buffers than capture needs.
    case tooFewBuffers(device: String, granted: Int, needed: Int)
    /// A configuration value is out of range; `advice` names the allowed values.
    case invalidConfiguration(setting: String, value: String, advice: String)
    /// The synthetic camera's folder holds no JPEG photos (or does not exist).
    case noPhotos(folder: String, reason: String)
    /// A photo for the synthetic camera could not be decoded.
    case photoUnreadable(path: String, reason: String)
    /// The camera went away or stopped delivering; the source is reopening it.
    case cameraUnavailable(device: String, reason: String)
    /// No frame at or after the press arrived in time.
    case timedOut(device: String, after: Duration, framesReceived: Int)
    /// Every pooled frame buffer is still held by processing; the press cannot be served.
    case noFreeBuffer(device: String, poolSize: Int)
    /// `capture` was called before `start()` or after `stop()`.
    case notRunning(device: String)
    /// The waiting task was cancelled.
    case cancelled
    /// Any other failed call on the device, with the call's name and errno.
    case systemCall(device: String, SystemCallError)

    public var description: String {
        switch self {
        case .deviceNotFound(let device):
            return "No camera at \(device). Check that it is plugged in and that `ls /dev/video* /dev/v4l/by-id/` "
                + "lists it, then set camera.device in swiftwing.toml to that path "
                + "(or run with `--camera synthetic` to use the fixture photos)."
        case .permissionDenied(let device):
            return "Not allowed to open \(device). Add the service user to the `video` group "
                + "(`sudo usermod -aG video swiftwing`) or check the udev rule that sets its mode."
        case .deviceBusy(let device):
            return "\(device) is in use by another program. Find it with `fuser -v \(device)` and stop it "
                + "(only one program can stream from a camera)."
        case .notV4L2Device(let device, let reason):
            return "\(device) is not a V4L2 capture device (\(reason)). Point camera.device at a camera node: "
                + "`v4l2-ctl --list-devices` lists them (or use `--camera synthetic`)."
        case .notCaptureDevice(let device, let card, let driver, let missing):
            return "\(device) is a V4L2 device (\(card), driver \(driver)) but not a usable capture node: "
                + "it lacks \(missing). USB cameras create a second node for metadata; use the other "
                + "/dev/videoN or the /dev/v4l/by-id/…-video-index0 link (`v4l2-ctl --list-devices`)."
        case .noUsableFormat(let device, let offered):
            let list = offered.isEmpty ? "nothing" : offered.map(\.description).joined(separator: "; ")
            return "\(device) offers no format that can be captured as YUV420 (YU12), natively or through "
                + "libv4l2's conversion. The camera offers: \(list). Use a camera that delivers YU12, YUYV or "
                + "MJPEG (`v4l2-ctl -d \(device) --list-formats-ext` shows what it has)."
        case .tooFewBuffers(let device, let granted, let needed):
            return "\(device) granted only \(granted) capture buffer(s); at least \(needed) are needed to stream "
                + "without dropping every other frame. Free memory (CMA on a Pi: raise `cma=` in cmdline.txt) "
                + "or lower the resolution."
        case .invalidConfiguration(let setting, let value, let advice):
            return "camera.\(setting) = \(value) is not valid: \(advice)."
        case .noPhotos(let folder, let reason):
            return "The synthetic camera found no JPEG photos in \(folder) (\(reason)). Put some .jpg files there, "
                + "point `--camera synthetic:FOLDER` at another folder, or set SWIFTWING_DATA_DIR to a folder holding "
                + "`shelves/` (`make install` puts the shipped photos in PREFIX/share/swiftwing/shelves)."
        case .photoUnreadable(let path, let reason):
            return "The synthetic camera could not decode \(path): \(reason). Remove the file or replace it with "
                + "a baseline JPEG."
        case .cameraUnavailable(let device, let reason):
            return "The camera \(device) is unavailable: \(reason). It is being reopened; check its cable "
                + "if this persists."
        case .timedOut(let device, let after, let framesReceived):
            return "No frame from \(device) within \(after) of the press (\(framesReceived) frames received so far). "
                + "The camera may be stalled; it is reopened automatically if it stays silent."
        case .noFreeBuffer(let device, let poolSize):
            return "All \(poolSize) frame buffers of \(device) are still being processed, so this press cannot be "
                + "captured. Wait for processing to catch up or raise the frame buffer pool size."
        case .notRunning(let device):
            return "The camera \(device) is not running (start() was not called, or stop() was)."
        case .cancelled:
            return "The capture was cancelled."
        case .systemCall(let device, let error):
            return "Camera \(device): \(error)."
        }
    }
}
