import Camera
import SwiftWingCore
import SwiftWingTesting
import Testing

@Suite struct FakeFrameSourceTests {
    @Test func honoursTheSameTimingContract() async throws {
        let fake = FakeFrameSource()
        try await fake.start()
        let t0 = MonotonicInstant.now()
        let capture = Task { () async throws(CameraError) -> YUV420Frame in
            try await fake.capture(after: t0, timeout: .seconds(5))
        }
        while fake.pendingCaptures == 0 { await Task.yield() }
        #expect(fake.emit(at: t0.advanced(byNanoseconds: -1_000_000), luma: 10) == 0)  // stale
        #expect(fake.emit(at: t0.advanced(byNanoseconds: 1_000_000), luma: 200) == 1)
        let frame = try await capture.value
        #expect(frame.timestamp > t0)
        #expect(frame.luma.first == 200)
        await fake.stop()
    }

    @Test func disconnectFailsPendingCaptures() async throws {
        let fake = FakeFrameSource()
        try await fake.start()
        let capture = Task { () async throws(CameraError) -> YUV420Frame in
            try await fake.capture(after: .now(), timeout: .seconds(5))
        }
        while fake.pendingCaptures == 0 { await Task.yield() }
        fake.disconnect(reason: "unplugged")
        let result = await capture.result
        #expect(throws: CameraError.cameraUnavailable(device: "fake", reason: "unplugged")) { try result.get() }
    }
}
