import Camera
import Glibc
import SwiftWingCore
import Testing

/// Against a real V4L2 device, when one is named: `SWIFTWING_TEST_V4L2_DEVICE=/dev/video0`
/// (vivid in the VM rig, or a USB camera on a board). Skipped otherwise.
/// `SWIFTWING_TEST_V4L2_DISCONNECT=1` additionally presses vivid's "Disconnect" button (an emulated
/// USB unplug that lasts until the module is reloaded), so run that only on a throwaway guest.
@Suite(.serialized) struct V4L2HardwareTests {
    static let device = getenv("SWIFTWING_TEST_V4L2_DEVICE").map { String(cString: $0) }
    static let disconnect = getenv("SWIFTWING_TEST_V4L2_DISCONNECT") != nil
    static let noDevice: Comment =
        "needs a V4L2 device in SWIFTWING_TEST_V4L2_DEVICE: runs in the VM rig (Tests/VMRig/camera-swift.sh)"
    static let noDisconnect: Comment =
        "needs SWIFTWING_TEST_V4L2_DEVICE and SWIFTWING_TEST_V4L2_DISCONNECT=1: runs in the VM rig (camera-swift.sh)"

    static func configuration(access: V4L2Access) -> CameraConfiguration {
        CameraConfiguration(
            device: device ?? "/dev/video0", width: 640, height: 480, framesPerSecond: 30,
            controls: CameraControls(focusAbsolute: 10, zoomAbsolute: 100), rotation: .clockwise90,
            stallTimeout: .seconds(3), access: access)
    }

    @Test(.enabled(if: device != nil, noDevice), arguments: [V4L2Access.libv4l2, .libc])
    func streamsAndCapturesTheFirstFrameAfterThePress(access: V4L2Access) async throws {
        let camera = try V4L2Camera(configuration: Self.configuration(access: access))
        try await camera.start()
        let status = camera.status
        print("[\(access)] \(status)")
        #expect(status.state == .streaming)
        let format = try #require(status.format)
        #expect(format.bufferCount >= CameraConfiguration.minimumBuffers)
        #expect(format.layout.byteCount > 0)

        for _ in 0..<3 {
            let t0 = MonotonicInstant.now()
            let frame = try await camera.capture(after: t0, timeout: .seconds(5))
            let latency = Double(MonotonicInstant.now().nanoseconds(since: t0)) / 1e6
            print(
                "[\(access)] frame \(frame.sequence) \(frame.width)x\(frame.height) at \(frame.timestamp), \(latency) ms after the press"
            )
            #expect(frame.timestamp >= t0)
            #expect(frame.width == format.layout.width && frame.height == format.layout.height)
            let luma = UnsafeRawBufferPointer(frame.luma)
            #expect(Set(luma.prefix(frame.layout.lumaStride * 16)).count > 1, "a test pattern is not one value")
        }
        let t0 = MonotonicInstant.now()
        async let a = camera.capture(after: t0, timeout: .seconds(5))
        async let b = camera.capture(after: t0.advanced(byNanoseconds: 300_000_000), timeout: .seconds(5))
        let (first, second) = try await (a, b)
        #expect(first.timestamp >= t0)
        #expect(second.timestamp >= t0.advanced(byNanoseconds: 300_000_000))
        #expect(second.sequence > first.sequence)

        let stopStarted = MonotonicInstant.now()
        await camera.stop()
        let stopMilliseconds = MonotonicInstant.now().nanoseconds(since: stopStarted) / 1_000_000
        print("[\(access)] stop took \(stopMilliseconds) ms; final \(camera.status)")
        #expect(stopMilliseconds < 1000)
        #expect(camera.status.state == .stopped)
    }

    /// The frame a capture asks for is shrunk on the camera thread straight out of the driver's
    /// buffer (no full-size copy), and the camera keeps streaming on its buffers meanwhile.
    @Test(.enabled(if: device != nil, noDevice))
    func deliversFramesShrunkOutOfTheDriverBuffer() async throws {
        var configuration = Self.configuration(access: .libc)
        configuration.width = 1280
        configuration.height = 720
        configuration.rotation = .none
        // 2.67:1 from 1280x720: the general area path, not the exact 2x fast path.
        configuration.deliveredLongEdge = 480
        configuration.frameBufferPoolSize = 2
        let camera = try V4L2Camera(configuration: configuration)
        try await camera.start()
        let format = try #require(camera.status.format)
        let (driverWidth, driverHeight) = (format.layout.width, format.layout.height)
        print("[delivered] driver \(format.layout)")
        #expect(max(driverWidth, driverHeight) > 480, "vivid should stream more than 480 pixels wide")
        var sequences: [UInt32] = []
        for _ in 0..<4 {
            let t0 = MonotonicInstant.now()
            let frame = try await camera.capture(after: t0, timeout: .seconds(5))
            #expect(frame.timestamp >= t0)
            #expect(max(frame.width, frame.height) == 480 && frame.width % 2 == 0 && frame.height % 2 == 0)
            // The aspect ratio is kept to within a pixel.
            #expect(abs(frame.height * driverWidth - frame.width * driverHeight) <= driverWidth)
            #expect(
                frame.buffer.capacity < format.layout.byteCount, "a pooled buffer of the small size, not a full copy")
            let luma = UnsafeRawBufferPointer(frame.luma)
            #expect(Set(luma.prefix(frame.layout.lumaStride * 16)).count > 1, "a test pattern is not one value")
            sequences.append(frame.sequence)
        }
        #expect(sequences == sequences.sorted() && Set(sequences).count == sequences.count)
        let received = camera.status.framesReceived
        try await Task.sleep(for: .milliseconds(300))  // a real device's frames come in real time
        #expect(camera.status.framesReceived > received, "still streaming after the scaled captures")
        await camera.stop()
        #expect(camera.status.state == .stopped)
    }

    @Test(.enabled(if: device != nil && disconnect, noDisconnect))
    func anUnplugFailsPendingCapturesAndReopens() async throws {
        let camera = try V4L2Camera(configuration: Self.configuration(access: .libv4l2))
        try await camera.start()
        let future = MonotonicInstant.now().advanced(byNanoseconds: 60_000_000_000)
        let pending = Task { () async throws(CameraError) -> YUV420Frame in
            try await camera.capture(after: future, timeout: .seconds(30))
        }
        try await Task.sleep(for: .milliseconds(300))  // the capture reaches the device's thread
        let path = Self.device ?? "/dev/video0"
        #expect(system("v4l2-ctl -d \(path) --set-ctrl=disconnect=1") == 0)
        let result = await pending.result
        print("pending capture after disconnect: \(result)")
        guard case .failure(let error) = result, case .cameraUnavailable? = error as? CameraError else {
            Issue.record("expected cameraUnavailable, got \(result)")
            await camera.stop()
            return
        }
        guard case .reopening = camera.status.state else {
            Issue.record("expected reopening, got \(camera.status.state)")
            await camera.stop()
            return
        }
        await #expect(throws: CameraError.self) { try await camera.capture(after: .now(), timeout: .seconds(1)) }
        print("status after disconnect: \(camera.status)")
        await camera.stop()
        #expect(camera.status.state == .stopped)
    }
}
