import CShim
import CV4L2
import SwiftWingCore

#if canImport(Glibc)
    import Glibc
#endif

/// One open V4L2 capture device: the only type that touches libv4l2 (or libc's V4L2 calls).
///
/// Not thread-safe and not `Sendable`: the camera thread owns it. Every C call goes through one
/// private entry point (`system_…`), `errno` becomes a ``SystemCallError`` (EINTR retried, never
/// for `close`), and device states become ``CameraError``s that name the path and the fix.
final class V4L2Device {
    /// The configured path (may be a `/dev/v4l/by-id/…` link).
    let path: String
    /// `.libv4l2` or `.libc`, never `.automatic`.
    let access: V4L2Access
    private(set) var descriptor: Int32
    private var mappings: [UnsafeMutableRawBufferPointer] = []
    private var isStreaming = false

    /// What `VIDIOC_QUERYCAP` said.
    struct Capabilities: Sendable {
        var driver: String
        var card: String
        var busInfo: String
        var deviceCapabilities: UInt32
    }

    /// One filled buffer, as `VIDIOC_DQBUF` returned it.
    struct DequeuedBuffer {
        var index: Int
        var bytesUsed: Int
        var flags: UInt32
        var timestamp: MonotonicInstant
        var sequence: UInt32
        var bytes: UnsafeRawBufferPointer

        var hasError: Bool { flags & UInt32(V4L2_BUF_FLAG_ERROR) != 0 }
        var hasMonotonicTimestamp: Bool {
            flags & UInt32(V4L2_BUF_FLAG_TIMESTAMP_MASK) == UInt32(V4L2_BUF_FLAG_TIMESTAMP_MONOTONIC)
        }
    }

    private init(path: String, access: V4L2Access, descriptor: Int32) {
        self.path = path
        self.access = access
        self.descriptor = descriptor
    }

    deinit {
        close()
    }

    // MARK: opening

    /// Opens `path` non-blocking and close-on-exec, and checks it is a streaming capture device.
    /// The corresponding C functions are `v4l2_open` (or `open`) and `ioctl(VIDIOC_QUERYCAP)`.
    static func open(path: String, access: V4L2Access) throws(CameraError) -> (V4L2Device, Capabilities) {
        precondition(access != .automatic, "resolve the access first")
        let descriptor: Int32
        do {
            descriptor = try retryingOnInterrupt("open", subject: path) {
                system_open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC, access: access)
            }
        } catch {
            switch error.errno {
            case ENOENT, ENOTDIR: throw .deviceNotFound(device: path)
            case EACCES, EPERM: throw .permissionDenied(device: path)
            case EBUSY: throw .deviceBusy(device: path)
            case ENODEV, ENXIO:
                throw .cameraUnavailable(device: path, reason: "the device node has no camera behind it")
            case EISDIR: throw .notV4L2Device(device: path, reason: "it is a directory")
            // libv4l2's v4l2_open already asks VIDIOC_QUERYCAP and fails with its errno.
            case ENOTTY, EINVAL: throw .notV4L2Device(device: path, reason: "VIDIOC_QUERYCAP: \(error.reason)")
            default: throw .systemCall(device: path, error)
            }
        }
        let device = V4L2Device(path: path, access: access, descriptor: descriptor)
        let capabilities = try device.queryCapabilities()
        return (device, capabilities)
    }

    private func queryCapabilities() throws(CameraError) -> Capabilities {
        var capability = v4l2_capability()
        do {
            try ioctl("VIDIOC_QUERYCAP", sw_VIDIOC_QUERYCAP(), &capability)
        } catch {
            if error.errno == ENOTTY || error.errno == EINVAL {
                throw .notV4L2Device(device: path, reason: "VIDIOC_QUERYCAP: \(error.reason)")
            }
            throw deviceError(error)
        }
        let capabilities = Capabilities(
            driver: string(fromTuple: capability.driver), card: string(fromTuple: capability.card),
            busInfo: string(fromTuple: capability.bus_info),
            deviceCapabilities: capability.capabilities & UInt32(V4L2_CAP_DEVICE_CAPS) != 0
                ? capability.device_caps : capability.capabilities)
        var missing: [String] = []
        if capabilities.deviceCapabilities & UInt32(V4L2_CAP_VIDEO_CAPTURE) == 0 {
            if capabilities.deviceCapabilities & UInt32(V4L2_CAP_VIDEO_CAPTURE_MPLANE) != 0 {
                missing.append("single-planar video capture (it is multi-planar only, which SwiftWing does not drive)")
            } else {
                missing.append("video capture (V4L2_CAP_VIDEO_CAPTURE)")
            }
        }
        if capabilities.deviceCapabilities & UInt32(V4L2_CAP_STREAMING) == 0 {
            missing.append("streaming I/O (V4L2_CAP_STREAMING)")
        }
        if !missing.isEmpty {
            throw .notCaptureDevice(
                device: path, card: capabilities.card, driver: capabilities.driver,
                missing: missing.joined(separator: " and "))
        }
        return capabilities
    }

    // MARK: formats

    /// The formats `VIDIOC_ENUM_FMT` lists, with their sizes. Through libv4l2 this includes the
    /// emulated (converted) formats, flagged `V4L2_FMT_FLAG_EMULATED`.
    func formats() throws(CameraError) -> [OfferedFormat] {
        var result: [OfferedFormat] = []
        for index in 0..<UInt32(64) {
            var description = v4l2_fmtdesc()
            description.index = index
            description.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
            do {
                try ioctl("VIDIOC_ENUM_FMT", sw_VIDIOC_ENUM_FMT(), &description)
            } catch {
                if error.errno == EINVAL { break }
                throw deviceError(error)
            }
            let fourcc = FourCC(rawValue: description.pixelformat)
            result.append(
                OfferedFormat(
                    fourcc: fourcc, name: string(fromTuple: description.description),
                    isEmulated: description.flags & UInt32(V4L2_FMT_FLAG_EMULATED) != 0,
                    sizes: frameSizes(of: fourcc)))
        }
        return result
    }

    /// The sizes of one format, or `.unknown` when the driver does not enumerate them.
    /// The corresponding C call is `ioctl(VIDIOC_ENUM_FRAMESIZES)`.
    private func frameSizes(of fourcc: FourCC) -> FrameSizes {
        var discrete: [FrameSize] = []
        for index in 0..<UInt32(64) {
            var size = v4l2_frmsizeenum()
            size.index = index
            size.pixel_format = fourcc.rawValue
            guard (try? ioctl("VIDIOC_ENUM_FRAMESIZES", sw_VIDIOC_ENUM_FRAMESIZES(), &size)) != nil else { break }
            switch size.type {
            case V4L2_FRMSIZE_TYPE_DISCRETE.rawValue:
                discrete.append(FrameSize(width: Int(size.discrete.width), height: Int(size.discrete.height)))
            default:
                let stepwise = size.stepwise
                return .stepwise(
                    minimum: FrameSize(width: Int(stepwise.min_width), height: Int(stepwise.min_height)),
                    maximum: FrameSize(width: Int(stepwise.max_width), height: Int(stepwise.max_height)),
                    step: FrameSize(width: Int(stepwise.step_width), height: Int(stepwise.step_height)))
            }
        }
        return discrete.isEmpty ? .unknown : .discrete(discrete)
    }

    /// Asks for YU12 at `size`; returns the format the driver (or libv4l2) settled on, which may
    /// differ in size and, on a driver without YU12 and without libv4l2, in pixel format.
    /// The corresponding C call is `ioctl(VIDIOC_S_FMT)`.
    func setFormat(_ fourcc: FourCC, size: FrameSize) throws(CameraError) -> v4l2_pix_format {
        var format = v4l2_format()
        format.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
        format.fmt.pix.width = UInt32(size.width)
        format.fmt.pix.height = UInt32(size.height)
        format.fmt.pix.pixelformat = fourcc.rawValue
        format.fmt.pix.field = V4L2_FIELD_NONE.rawValue
        do {
            try ioctl("VIDIOC_S_FMT", sw_VIDIOC_S_FMT(), &format)
        } catch {
            throw deviceError(error)
        }
        return format.fmt.pix
    }

    /// The format the camera itself streams. Through libv4l2 this asks the kernel directly (plain
    /// `ioctl`, bypassing libv4l2), so it shows the source of a conversion.
    /// The corresponding C call is `ioctl(VIDIOC_G_FMT)`.
    func cameraFormat() -> FourCC? {
        var format = v4l2_format()
        format.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
        let result = withUnsafeMutablePointer(to: &format) { sw_libc_ioctl(descriptor, sw_VIDIOC_G_FMT(), $0) }
        return result == 0 ? FourCC(rawValue: format.fmt.pix.pixelformat) : nil
    }

    /// Asks for `framesPerSecond`; returns what the driver agreed to, or `nil` when it cannot set
    /// the rate. The corresponding C calls are `ioctl(VIDIOC_G_PARM)` and `ioctl(VIDIOC_S_PARM)`.
    func setFrameRate(_ framesPerSecond: Int) -> Double? {
        var parameters = v4l2_streamparm()
        parameters.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
        guard (try? ioctl("VIDIOC_G_PARM", sw_VIDIOC_G_PARM(), &parameters)) != nil,
            parameters.parm.capture.capability & UInt32(V4L2_CAP_TIMEPERFRAME) != 0
        else { return nil }
        parameters.parm.capture.timeperframe = v4l2_fract(numerator: 1, denominator: UInt32(framesPerSecond))
        guard (try? ioctl("VIDIOC_S_PARM", sw_VIDIOC_S_PARM(), &parameters)) != nil else { return nil }
        let fraction = parameters.parm.capture.timeperframe
        guard fraction.numerator > 0 else { return nil }
        return Double(fraction.denominator) / Double(fraction.numerator)
    }

    // MARK: controls

    /// The range of a control, or `nil` when the camera lacks it (or has it disabled).
    /// The corresponding C call is `ioctl(VIDIOC_QUERYCTRL)`.
    func queryControl(_ control: CameraControl) -> ControlRange? {
        var query = v4l2_queryctrl()
        query.id = control.id
        guard (try? ioctl("VIDIOC_QUERYCTRL", sw_VIDIOC_QUERYCTRL(), &query)) != nil,
            query.flags & UInt32(V4L2_CTRL_FLAG_DISABLED) == 0
        else { return nil }
        return ControlRange(
            minimum: query.minimum, maximum: query.maximum, step: query.step, defaultValue: query.default_value)
    }

    /// The corresponding C call is `ioctl(VIDIOC_S_CTRL)`.
    func setControl(_ control: CameraControl, to value: Int32) throws(SystemCallError) {
        var setting = v4l2_control(id: control.id, value: value)
        try ioctl("VIDIOC_S_CTRL", sw_VIDIOC_S_CTRL(), &setting)
    }

    /// The corresponding C call is `ioctl(VIDIOC_G_CTRL)`.
    func control(_ control: CameraControl) throws(SystemCallError) -> Int32 {
        var setting = v4l2_control(id: control.id, value: 0)
        try ioctl("VIDIOC_G_CTRL", sw_VIDIOC_G_CTRL(), &setting)
        return setting.value
    }

    // MARK: streaming

    /// Requests `count` mmap buffers, maps what the driver grants and queues them all.
    /// Throws ``CameraError/tooFewBuffers(device:granted:needed:)`` below `minimum`.
    /// The corresponding C calls are `ioctl(VIDIOC_REQBUFS/QUERYBUF/QBUF)` and `v4l2_mmap`.
    func mapBuffers(count: Int, minimum: Int) throws(CameraError) -> Int {
        precondition(mappings.isEmpty, "buffers are already mapped")
        var request = v4l2_requestbuffers()
        request.count = UInt32(count)
        request.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
        request.memory = V4L2_MEMORY_MMAP.rawValue
        do {
            try ioctl("VIDIOC_REQBUFS", sw_VIDIOC_REQBUFS(), &request)
        } catch {
            throw deviceError(error)
        }
        let granted = Int(request.count)
        guard granted >= minimum else {
            releaseBuffers()
            throw .tooFewBuffers(device: path, granted: granted, needed: minimum)
        }
        for index in 0..<granted {
            var buffer = v4l2_buffer()
            buffer.index = UInt32(index)
            buffer.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
            buffer.memory = V4L2_MEMORY_MMAP.rawValue
            do {
                try ioctl("VIDIOC_QUERYBUF", sw_VIDIOC_QUERYBUF(), &buffer)
            } catch {
                unmapAll()
                throw deviceError(error)
            }
            let length = Int(buffer.length)
            guard let pointer = system_mmap(length: length, offset: Int64(buffer.m.offset)) else {
                let error = SystemCallError("mmap", subject: path, errno: errno)
                unmapAll()
                throw deviceError(error)
            }
            mappings.append(UnsafeMutableRawBufferPointer(start: pointer, count: length))
        }
        for index in 0..<granted {
            do {
                try queue(index)
            } catch {
                unmapAll()
                throw deviceError(error)
            }
        }
        return granted
    }

    /// Gives buffer `index` back to the driver. The corresponding C call is `ioctl(VIDIOC_QBUF)`.
    func queue(_ index: Int) throws(SystemCallError) {
        var buffer = v4l2_buffer()
        buffer.index = UInt32(index)
        buffer.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
        buffer.memory = V4L2_MEMORY_MMAP.rawValue
        try ioctl("VIDIOC_QBUF", sw_VIDIOC_QBUF(), &buffer)
    }

    /// The next filled buffer, or `nil` when none is ready (`EAGAIN`). The bytes stay valid until
    /// ``queue(_:)`` gives the buffer back. The corresponding C call is `ioctl(VIDIOC_DQBUF)`.
    func dequeue() throws(SystemCallError) -> DequeuedBuffer? {
        var buffer = v4l2_buffer()
        buffer.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
        buffer.memory = V4L2_MEMORY_MMAP.rawValue
        do {
            try ioctl("VIDIOC_DQBUF", sw_VIDIOC_DQBUF(), &buffer)
        } catch {
            if error.errno == EAGAIN { return nil }
            throw error
        }
        let index = Int(buffer.index)
        precondition(index < mappings.count, "driver returned buffer \(index) of \(mappings.count)")
        let mapping = mappings[index]
        return DequeuedBuffer(
            index: index, bytesUsed: Int(buffer.bytesused), flags: buffer.flags,
            timestamp: MonotonicInstant(
                seconds: Int(buffer.timestamp.tv_sec), microseconds: Int(buffer.timestamp.tv_usec)),
            sequence: buffer.sequence,
            bytes: UnsafeRawBufferPointer(start: mapping.baseAddress, count: min(Int(buffer.bytesused), mapping.count)))
    }

    /// The corresponding C call is `ioctl(VIDIOC_STREAMON)`.
    func streamOn() throws(CameraError) {
        var type = Int32(V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue)
        do {
            try ioctl("VIDIOC_STREAMON", sw_VIDIOC_STREAMON(), &type)
        } catch {
            throw deviceError(error)
        }
        isStreaming = true
    }

    /// Stops streaming, unmaps and frees the buffers and closes the descriptor; errors are ignored
    /// (the device may already be gone). Safe to call twice.
    /// The corresponding C calls are `ioctl(VIDIOC_STREAMOFF)`, `v4l2_munmap` and `v4l2_close`.
    func close() {
        guard descriptor >= 0 else { return }
        if isStreaming {
            var type = Int32(V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue)
            _ = try? ioctl("VIDIOC_STREAMOFF", sw_VIDIOC_STREAMOFF(), &type)
            isStreaming = false
        }
        unmapAll()
        _ = system_close()
        descriptor = -1
    }

    private func unmapAll() {
        for mapping in mappings {
            _ = system_munmap(mapping)
        }
        if !mappings.isEmpty { releaseBuffers() }
        mappings.removeAll()
    }

    /// `VIDIOC_REQBUFS` with a count of 0 frees the driver's buffers.
    private func releaseBuffers() {
        var request = v4l2_requestbuffers()
        request.count = 0
        request.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
        request.memory = V4L2_MEMORY_MMAP.rawValue
        _ = try? ioctl("VIDIOC_REQBUFS", sw_VIDIOC_REQBUFS(), &request)
    }

    // MARK: errors

    /// A failed call as a camera error: unplugged devices become `cameraUnavailable`.
    func deviceError(_ error: SystemCallError) -> CameraError {
        if error.isDeviceGone {
            return .cameraUnavailable(device: path, reason: "\(error.call) failed: \(error.reason)")
        }
        return .systemCall(device: path, error)
    }

    private func ioctl<Argument>(_ name: String, _ request: UInt, _ argument: inout Argument) throws(SystemCallError) {
        _ = try retryingOnInterrupt(name, subject: path) {
            withUnsafeMutablePointer(to: &argument) { system_ioctl(request, $0) }
        }
    }

    // MARK: entry points, one per C call

    /// The corresponding C function is `v4l2_open` (or `open` for `.libc`).
    // swift-format-ignore: AlwaysUseLowerCamelCase
    private static func system_open(_ path: String, _ flags: Int32, access: V4L2Access) -> Int32 {
        access == .libc ? sw_libc_open(path, flags) : sw_v4l2_open(path, flags)
    }

    /// The corresponding C function is `v4l2_ioctl` (or `ioctl`).
    // swift-format-ignore: AlwaysUseLowerCamelCase
    private func system_ioctl(_ request: UInt, _ argument: UnsafeMutableRawPointer) -> Int32 {
        access == .libc ? sw_libc_ioctl(descriptor, request, argument) : sw_v4l2_ioctl(descriptor, request, argument)
    }

    /// The corresponding C function is `v4l2_mmap` (or `mmap`). `nil` on failure (`errno` set).
    // swift-format-ignore: AlwaysUseLowerCamelCase
    private func system_mmap(length: Int, offset: Int64) -> UnsafeMutableRawPointer? {
        let protection = PROT_READ | PROT_WRITE
        let pointer =
            access == .libc
            ? mmap(nil, length, protection, MAP_SHARED, descriptor, off_t(offset))
            : v4l2_mmap(nil, length, protection, MAP_SHARED, descriptor, Int64(offset))
        guard let pointer, pointer != MAP_FAILED else { return nil }
        return pointer
    }

    /// The corresponding C function is `v4l2_munmap` (or `munmap`).
    // swift-format-ignore: AlwaysUseLowerCamelCase
    private func system_munmap(_ mapping: UnsafeMutableRawBufferPointer) -> Int32 {
        access == .libc ? munmap(mapping.baseAddress, mapping.count) : v4l2_munmap(mapping.baseAddress, mapping.count)
    }

    /// The corresponding C function is `v4l2_close` (or `close`). Never retried on EINTR.
    // swift-format-ignore: AlwaysUseLowerCamelCase
    private func system_close() -> Int32 {
        access == .libc ? Glibc.close(descriptor) : v4l2_close(descriptor)
    }
}

/// A NUL-terminated C character array (imported as a tuple) as a String.
private func string<Tuple>(fromTuple tuple: Tuple) -> String {
    withUnsafeBytes(of: tuple) { bytes in
        let prefix = bytes.prefix { $0 != 0 }
        return String(decoding: prefix, as: UTF8.self)
    }
}
