import SwiftWingCore

/// A quarter-turn rotation of the picture, clockwise.
///
/// (Imaging has a `FrameRotation` for the software side; the integrator may unify the two.)
public enum CameraRotation: Int, CaseIterable, Hashable, Sendable {
    case none = 0
    case clockwise90 = 90
    case halfTurn = 180
    case clockwise270 = 270

    /// From degrees as written in the configuration; only 0, 90, 180 and 270 are allowed.
    public init(degrees: Int) throws(CameraError) {
        guard let rotation = CameraRotation(rawValue: degrees) else {
            throw .invalidConfiguration(
                setting: "rotation", value: String(degrees), advice: "allowed values are 0, 90, 180 and 270 degrees")
        }
        self = rotation
    }

    public var degrees: Int { rawValue }
}

/// Optional V4L2 controls applied after each open. `nil` leaves the camera's own setting alone; a
/// control the camera lacks is skipped (logged once), a value out of range is clamped (with a warning).
public struct CameraControls: Hashable, Sendable {
    /// `V4L2_CID_FOCUS_ABSOLUTE`; setting it also turns autofocus off unless `focusAuto` is `true`.
    public var focusAbsolute: Int32?
    /// `V4L2_CID_FOCUS_AUTO`.
    public var focusAuto: Bool?
    /// `V4L2_CID_ZOOM_ABSOLUTE`.
    public var zoomAbsolute: Int32?
    /// `V4L2_CID_EXPOSURE_ABSOLUTE` (100 µs units); also sets `V4L2_CID_EXPOSURE_AUTO` to manual.
    public var exposureAbsolute: Int32?

    public init(
        focusAbsolute: Int32? = nil, focusAuto: Bool? = nil, zoomAbsolute: Int32? = nil, exposureAbsolute: Int32? = nil
    ) {
        self.focusAbsolute = focusAbsolute
        self.focusAuto = focusAuto
        self.zoomAbsolute = zoomAbsolute
        self.exposureAbsolute = exposureAbsolute
    }
}

/// How the V4L2 device is reached.
public enum V4L2Access: String, Hashable, Sendable {
    /// Through libv4l2 (`v4l2_open`, `v4l2_ioctl`, `v4l2_mmap`): converts YUYV/MJPEG to YU12.
    case libv4l2
    /// Through plain libc (`open`, `ioctl`, `mmap`), no conversion. Needed under libcamera's
    /// `libcamerify` (an LD_PRELOAD of `v4l2-compat.so`): libv4l2 opens and ioctls via `syscall(2)`,
    /// which an LD_PRELOAD cannot intercept. libcamera delivers YU12 itself.
    case libc
    /// `libc` when `LD_PRELOAD` names `v4l2-compat`, else `libv4l2`.
    case automatic

    /// The concrete access for this process, resolving `automatic` from `LD_PRELOAD`.
    public func resolved(preload: String?) -> V4L2Access {
        guard self == .automatic else { return self }
        if let preload, preload.contains("v4l2-compat") { return .libc }
        return .libv4l2
    }
}

/// Settings of a V4L2 camera, from `[camera]` in swiftwing.toml.
public struct CameraConfiguration: Hashable, Sendable {
    /// `/dev/videoN` or, better, a stable `/dev/v4l/by-id/…-video-index0` link.
    public var device: String
    public var width: Int
    public var height: Int
    public var framesPerSecond: Int
    /// mmap buffers to ask the driver for; it may grant more (at least ``minimumBuffers``).
    public var bufferCount: Int
    public var controls: CameraControls
    public var rotation: CameraRotation
    /// No frame for this long while streaming counts as an unplug: the camera is reopened.
    public var stallTimeout: Duration
    /// Captured frames that may be in processing at once (pooled copies); a press beyond that fails.
    public var frameBufferPoolSize: Int
    public var access: V4L2Access
    /// When set, a frame a capture asked for is shrunk to this long edge (area average, see
    /// `YUV420Scaler`) straight out of the driver's buffer, on the camera thread, instead of being
    /// copied at full size: the one pass over a 12 MP frame a press needs anyway. `nil` delivers
    /// full-size copies.
    public var deliveredLongEdge: Int?

    public init(
        device: String = "/dev/video0", width: Int = 1920, height: Int = 1080, framesPerSecond: Int = 15,
        bufferCount: Int = 2, controls: CameraControls = CameraControls(), rotation: CameraRotation = .none,
        stallTimeout: Duration = .seconds(5), frameBufferPoolSize: Int = 4, access: V4L2Access = .automatic,
        deliveredLongEdge: Int? = nil
    ) {
        self.device = device
        self.width = width
        self.height = height
        self.framesPerSecond = framesPerSecond
        self.bufferCount = bufferCount
        self.controls = controls
        self.rotation = rotation
        self.stallTimeout = stallTimeout
        self.frameBufferPoolSize = frameBufferPoolSize
        self.access = access
        self.deliveredLongEdge = deliveredLongEdge
    }

    /// The minimum number of mmap buffers, also the default: the driver fills one while the camera
    /// thread holds the other. The thread re-queues every frame at once except a pressed one, which
    /// it holds for the few milliseconds its shrink or copy takes, far less than a frame period, so
    /// the driver is never left without a buffer. Each more is a full frame of kernel memory.
    public static let minimumBuffers = 2

    /// Throws the first out-of-range setting, naming the allowed values.
    public func validate() throws(CameraError) {
        if device.isEmpty {
            throw .invalidConfiguration(setting: "device", value: "\"\"", advice: "give a path such as /dev/video0")
        }
        if !(16...8192).contains(width) || !(16...8192).contains(height) {
            throw .invalidConfiguration(
                setting: "width/height", value: "\(width)x\(height)", advice: "each side must be 16 to 8192 pixels")
        }
        if !(1...120).contains(framesPerSecond) {
            throw .invalidConfiguration(
                setting: "fps", value: String(framesPerSecond), advice: "use 1 to 120 frames per second")
        }
        if !(Self.minimumBuffers...32).contains(bufferCount) {
            throw .invalidConfiguration(
                setting: "buffers", value: String(bufferCount),
                advice: "use \(Self.minimumBuffers) to 32 driver buffers (\(Self.minimumBuffers) is the default)")
        }
        if stallTimeout < .milliseconds(100) {
            throw .invalidConfiguration(
                setting: "stall_timeout", value: "\(stallTimeout)", advice: "use at least 0.1 s (5 s is the default)")
        }
        if let deliveredLongEdge, !(16...8192).contains(deliveredLongEdge) {
            throw .invalidConfiguration(
                setting: "delivered long edge", value: String(deliveredLongEdge),
                advice: "use 16 to 8192 pixels (imaging.max_long_edge), or none for full-size frames")
        }
        if !(1...64).contains(frameBufferPoolSize) {
            throw .invalidConfiguration(
                setting: "frame_buffers", value: String(frameBufferPoolSize), advice: "use 1 to 64 pooled frames")
        }
    }
}
