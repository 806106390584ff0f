import SwiftWingCore

/// A V4L2 pixel format code: four ASCII characters packed little-endian (`v4l2_fourcc`).
public struct FourCC: RawRepresentable, Hashable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
    public var rawValue: UInt32

    public init(rawValue: UInt32) {
        self.rawValue = rawValue
    }

    /// From four ASCII characters, e.g. `"YU12"`.
    public init(_ code: String) {
        let bytes = Array(code.utf8)
        precondition(bytes.count == 4, "a fourcc has four characters, not \(code.debugDescription)")
        rawValue = UInt32(bytes[0]) | UInt32(bytes[1]) << 8 | UInt32(bytes[2]) << 16 | UInt32(bytes[3]) << 24
    }

    public init(stringLiteral value: String) {
        self.init(value)
    }

    /// Planar YUV 4:2:0, Y then Cb then Cr (`V4L2_PIX_FMT_YUV420`): what the rest of SwiftWing eats.
    public static let yuv420: FourCC = "YU12"
    /// Packed YUV 4:2:2, the usual uncompressed format of USB cameras.
    public static let yuyv: FourCC = "YUYV"
    /// Motion JPEG, the usual high-resolution format of USB cameras.
    public static let mjpeg: FourCC = "MJPG"

    public var description: String {
        let characters = (0..<4).map { shift -> Character in
            let byte = UInt8((rawValue >> (8 * UInt32(shift))) & 0xff)
            return (0x20..<0x7f).contains(byte) ? Character(Unicode.Scalar(byte)) : "."
        }
        return String(characters).trimmingTrailingSpaces()
    }
}

extension String {
    fileprivate func trimmingTrailingSpaces() -> String {
        var result = self
        while result.last == " " { result.removeLast() }
        return result
    }
}

/// A picture size in pixels.
public struct FrameSize: Hashable, Sendable, CustomStringConvertible {
    public var width: Int
    public var height: Int

    public init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }

    public var description: String { "\(width)x\(height)" }
}

/// The sizes a format comes in (`VIDIOC_ENUM_FRAMESIZES`).
public enum FrameSizes: Hashable, Sendable, CustomStringConvertible {
    case discrete([FrameSize])
    case stepwise(minimum: FrameSize, maximum: FrameSize, step: FrameSize)
    /// The driver does not enumerate sizes.
    case unknown

    public var description: String {
        switch self {
        case .discrete(let sizes): return sizes.map(\.description).joined(separator: ", ")
        case .stepwise(let minimum, let maximum, let step):
            return "\(minimum) to \(maximum) in steps of \(step)"
        case .unknown: return "sizes not listed"
        }
    }
}

/// One pixel format a camera offers (`VIDIOC_ENUM_FMT`), with its sizes.
public struct OfferedFormat: Hashable, Sendable, CustomStringConvertible {
    public var fourcc: FourCC
    /// The driver's name for it, e.g. "Motion-JPEG".
    public var name: String
    /// Added by libv4l2's user-space conversion (`V4L2_FMT_FLAG_EMULATED`), not by the camera.
    public var isEmulated: Bool
    public var sizes: FrameSizes

    public init(fourcc: FourCC, name: String = "", isEmulated: Bool = false, sizes: FrameSizes = .unknown) {
        self.fourcc = fourcc
        self.name = name
        self.isEmulated = isEmulated
        self.sizes = sizes
    }

    public var description: String {
        let origin = isEmulated ? " (libv4l2 conversion)" : ""
        let label = name.isEmpty ? "" : " \(name)"
        return "\(fourcc)\(label)\(origin): \(sizes)"
    }
}

/// How YUV420 frames will be obtained from a camera.
public enum FormatPlan: Hashable, Sendable, CustomStringConvertible {
    /// The camera delivers YU12 itself: no conversion cost.
    case native
    /// libv4l2 converts in user space from one of the camera's own formats (it picks which; CPU cost,
    /// and MJPEG sources are decoded on the CPU).
    case converted(sources: [FourCC])
    /// Photos from a folder, decoded and fitted once (the synthetic camera).
    case synthetic(folder: String)

    public var description: String {
        switch self {
        case .native: return "YU12 native"
        case .converted(let sources):
            return "YU12 converted by libv4l2 from one of " + sources.map(\.description).joined(separator: ", ")
        case .synthetic(let folder): return "photos from \(folder)"
        }
    }

    /// Decides how to get YUV420 from what a camera offers, or explains why it cannot.
    ///
    /// `offered` is the list `VIDIOC_ENUM_FMT` gives through libv4l2: the camera's own formats plus
    /// libv4l2's emulated ones (flagged). Without libv4l2 (under an LD_PRELOAD compatibility layer)
    /// there are no emulated formats and only a native YU12 will do.
    public static func yuv420(offered: [OfferedFormat], device: String) throws(CameraError) -> FormatPlan {
        if offered.contains(where: { $0.fourcc == .yuv420 && !$0.isEmulated }) {
            return .native
        }
        if offered.contains(where: { $0.fourcc == .yuv420 && $0.isEmulated }) {
            let sources = offered.filter { !$0.isEmulated }.map(\.fourcc)
            if !sources.isEmpty { return .converted(sources: sources) }
        }
        throw .noUsableFormat(device: device, offered: offered)
    }
}

/// The format a camera actually streams, after the driver adjusted the request.
public struct NegotiatedFormat: Hashable, Sendable, CustomStringConvertible {
    /// The geometry of the frames handed out (the driver's size and row padding).
    public var layout: YUV420Layout
    /// The size asked for; differs from `layout`'s when the driver picked the nearest it has.
    public var requested: FrameSize
    /// What the camera itself sends (YU12 unless libv4l2 converts).
    public var cameraFormat: FourCC
    public var plan: FormatPlan
    /// Frames per second the driver agreed to, or `nil` when it does not support setting it.
    public var framesPerSecond: Double?
    /// mmap buffers granted by the driver.
    public var bufferCount: Int
    /// Rotation still to do in software because the driver has no `V4L2_CID_ROTATE` (0 when none).
    public var softwareRotationDegrees: Int

    public init(
        layout: YUV420Layout, requested: FrameSize, cameraFormat: FourCC, plan: FormatPlan,
        framesPerSecond: Double?, bufferCount: Int, softwareRotationDegrees: Int
    ) {
        self.layout = layout
        self.requested = requested
        self.cameraFormat = cameraFormat
        self.plan = plan
        self.framesPerSecond = framesPerSecond
        self.bufferCount = bufferCount
        self.softwareRotationDegrees = softwareRotationDegrees
    }

    public var size: FrameSize { FrameSize(width: layout.width, height: layout.height) }

    public var description: String {
        let fps = framesPerSecond.map { " @ \(($0 * 100).rounded() / 100) fps" } ?? ""
        let adjusted = size == requested ? "" : " (asked for \(requested))"
        let source: String
        switch plan {
        case .synthetic(let folder): source = "from the photos in \(folder)"
        case .native, .converted:
            source = cameraFormat == .yuv420 ? "native" : "converted from \(cameraFormat) by libv4l2"
        }
        let rotation = softwareRotationDegrees == 0 ? "" : ", rotate \(softwareRotationDegrees)° in software"
        return "\(size)\(adjusted) YU12 \(source)\(fps), \(bufferCount) buffers\(rotation)"
    }
}
