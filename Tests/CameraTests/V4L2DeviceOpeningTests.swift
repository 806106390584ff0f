import Camera
import Glibc
import SwiftWingCore
import Testing

/// Opening things that are not cameras: every failure must name the path and say what to do.
@Suite struct V4L2DeviceOpeningTests {
    static let accesses: [V4L2Access] = [.libv4l2, .libc]

    private func startError(device: String, access: V4L2Access) async -> CameraError? {
        do {
            let camera = try V4L2Camera(configuration: CameraConfiguration(device: device, access: access))
            try await camera.start()
            await camera.stop()
            return nil
        } catch {
            return error
        }
    }

    @Test(arguments: accesses)
    func missingDeviceNamesThePathAndSuggestsAFix(access: V4L2Access) async {
        let path = "/dev/video-swiftwing-test-missing"
        let error = await startError(device: path, access: access)
        #expect(error == .deviceNotFound(device: path))
        let text = error?.description ?? ""
        #expect(text.contains(path))
        #expect(text.contains("ls /dev/video*"))
        #expect(text.contains("--camera synthetic"))
    }

    @Test(arguments: accesses)
    func devNullIsNotACaptureDevice(access: V4L2Access) async {
        let error = await startError(device: "/dev/null", access: access)
        guard case .notV4L2Device(let device, let reason) = error else {
            Issue.record("expected notV4L2Device, got \(String(describing: error))")
            return
        }
        #expect(device == "/dev/null")
        #expect(reason.contains("VIDIOC_QUERYCAP"))
        #expect(error?.description.contains("/dev/null is not a V4L2 capture device") == true)
    }

    @Test(arguments: accesses)
    func regularFileIsNotACaptureDevice(access: V4L2Access) async throws {
        var template = Array("/tmp/swiftwing-camera-test-XXXXXX".utf8CString)
        let descriptor = mkstemp(&template)
        try #require(descriptor >= 0)
        let path = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        defer {
            close(descriptor)
            unlink(path)
        }
        let error = await startError(device: path, access: access)
        guard case .notV4L2Device(let device, _) = error else {
            Issue.record("expected notV4L2Device, got \(String(describing: error))")
            return
        }
        #expect(device == path)
        #expect(error?.description.contains("not a V4L2 capture device") == true)
    }

    @Test func directoryIsNotACaptureDevice() async {
        let error = await startError(device: "/tmp", access: .libv4l2)
        #expect(error == .notV4L2Device(device: "/tmp", reason: "it is a directory"))
    }

    @Test func failedStartLeavesTheCameraStoppedAndCapturesRefused() async throws {
        let camera = try V4L2Camera(configuration: CameraConfiguration(device: "/dev/null"))
        await #expect(throws: CameraError.self) { try await camera.start() }
        #expect(camera.status.state == .stopped)
        do {
            _ = try await camera.capture(after: .now(), timeout: .seconds(1))
            Issue.record("a capture on a camera that never started must fail")
        } catch {
            #expect(error == .notRunning(device: "/dev/null"))
        }
        await camera.stop()  // harmless after a failed start
    }

    @Test func invalidConfigurationIsRejectedBeforeOpening() {
        #expect(throws: CameraError.self) {
            _ = try V4L2Camera(configuration: CameraConfiguration(bufferCount: 1))
        }
    }
}
