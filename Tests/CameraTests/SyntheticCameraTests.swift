import Camera
import Glibc
import SwiftWingCore
import Testing

/// The synthetic camera on the real fixture photos (4624x3468 JPEGs), at 640x480 and 30 fps.
@Suite(.serialized) struct SyntheticCameraTests {
    static let fixtures = SyntheticCameraConfiguration.shippedPhotosFolder

    func makeCamera(pool: Int = 4) throws -> SyntheticCamera {
        try SyntheticCamera(
            configuration: SyntheticCameraConfiguration(
                folder: Self.fixtures, width: 640, height: 480, framesPerSecond: 30, frameBufferPoolSize: pool))
    }

    @Test
    func captureReturnsAFrameTakenAfterThePressWithPlausibleContent() async throws {
        let camera = try makeCamera()
        try await camera.start()
        #expect(camera.status.state == .streaming)
        #expect(camera.status.format?.size == FrameSize(width: 640, height: 480))

        let t0 = MonotonicInstant.now()
        let frame = try await camera.capture(after: t0, timeout: .seconds(2))
        let latency = MonotonicInstant.now().nanoseconds(since: t0)
        await camera.stop()

        #expect(frame.timestamp >= t0)
        // A hang guard, not a speed claim (Benchmarks/ measure latency): the 2 s timeout did not fire.
        #expect(latency < 2_000_000_000, "capture took \(latency) ns")
        #expect(frame.width == 640 && frame.height == 480)
        // A shelf photo: luma spans a wide range and is not one value; chroma is not all grey.
        let luma = Array(UnsafeRawBufferPointer(frame.luma))
        let lumaRange = Int(luma.max()!) - Int(luma.min()!)
        #expect(lumaRange > 100, "luma range \(lumaRange)")
        #expect(Set(luma).count > 64)
        let mean = luma.reduce(0) { $0 + Int($1) } / luma.count
        #expect((30...225).contains(mean), "mean luma \(mean)")
        #expect(UnsafeRawBufferPointer(frame.cb).contains { $0 < 120 || $0 > 136 })
    }

    @Test
    func theFirstFrameComesAtOnceNotOnePeriodLate() async throws {
        // At 1 fps a first frame one period late would come a whole second after the start.
        let camera = try SyntheticCamera(
            configuration: SyntheticCameraConfiguration(
                folder: Self.fixtures, width: 640, height: 480, framesPerSecond: 1))
        try await camera.start()
        let started = MonotonicInstant.now()
        // Counted, not captured: a capture asked for after start() returns can miss a frame made at
        // once and wait a whole period for the next, which is what this test is not about.
        while camera.status.framesReceived == 0 && MonotonicInstant.now().nanoseconds(since: started) < 3_000_000_000 {
            try await Task.sleep(for: .milliseconds(5))  // polls the camera's thread
        }
        let late = MonotonicInstant.now().nanoseconds(since: started)
        await camera.stop()
        #expect(camera.status.framesReceived >= 1)
        #expect(late < 500_000_000, "the first frame came \(late / 1_000_000) ms after start() returned")
    }

    @Test
    func framesOlderThanThePressAreNeverReturnedAndPressesAreServedInParallel() async throws {
        let camera = try makeCamera()
        try await camera.start()
        let now = MonotonicInstant.now()
        // A press a minute ahead waits meanwhile: the presses after it must not wait for it. Judged by order, not by
        // how soon frames come, so a loaded machine that stalls the camera's thread cannot fail it.
        let farPress = Task {
            try await camera.capture(after: now.advanced(byNanoseconds: 60_000_000_000), timeout: .seconds(120))
        }
        let a = try await camera.capture(after: now, timeout: .seconds(30))
        #expect(a.timestamp >= now)
        let justAfter = a.timestamp.advanced(byNanoseconds: 1)
        let b = try await camera.capture(after: justAfter, timeout: .seconds(30))
        #expect(b.timestamp >= justAfter, "a frame older than its press was returned")
        #expect(b.sequence > a.sequence)
        #expect(camera.status.framesCaptured == 2, "the far press is still waiting")
        farPress.cancel()
        let far = await farPress.result
        await camera.stop()
        #expect(throws: (any Error).self, "the far press ends when its task is cancelled") { try far.get() }
    }

    @Test
    func aPressInTheFutureTimesOutWithAClearError() async throws {
        let camera = try makeCamera()
        try await camera.start()
        let future = MonotonicInstant.now().advanced(byNanoseconds: 60_000_000_000)
        let started = MonotonicInstant.now()
        do {
            _ = try await camera.capture(after: future, timeout: .milliseconds(200))
            Issue.record("no frame is taken a minute from now within 200 ms")
        } catch {
            guard case .timedOut(_, let after, let received) = error else {
                Issue.record("expected timedOut, got \(error)")
                await camera.stop()
                return
            }
            #expect(after == .milliseconds(200))
            #expect(received > 0)
            #expect(error.description.contains("No frame from synthetic:"))
        }
        let waited = MonotonicInstant.now().nanoseconds(since: started)
        #expect(waited >= 200_000_000, "timed out early, after \(waited) ns")
        await camera.stop()
    }

    @Test
    func stopIsPromptAndFailsPendingCaptures() async throws {
        let camera = try makeCamera()
        try await camera.start()
        let updates = camera.statusUpdates()
        let future = MonotonicInstant.now().advanced(byNanoseconds: 60_000_000_000)
        let pending = Task { () async throws(CameraError) -> YUV420Frame in
            try await camera.capture(after: future, timeout: .seconds(30))
        }
        try await Task.sleep(for: .milliseconds(100))  // the capture reaches the camera's thread
        let started = MonotonicInstant.now()
        await camera.stop()
        let stopTook = MonotonicInstant.now().nanoseconds(since: started)
        #expect(stopTook < 10_000_000_000, "stop hung for \(stopTook) ns")
        let result = await pending.result
        #expect(throws: CameraError.notRunning(device: "synthetic:\(Self.fixtures)")) { try result.get() }
        #expect(camera.status.state == .stopped)
        var states: [CameraStatus.State] = []
        for await status in updates { states.append(status.state) }  // finishes on stop
        #expect(states.first == .streaming)
        #expect(states.last == .stopped)
        // After stop, captures are refused at once.
        await #expect(throws: CameraError.self) { try await camera.capture(after: .now(), timeout: .seconds(5)) }
    }

    @Test
    func aFullPoolRefusesThePressInsteadOfBlocking() async throws {
        let camera = try makeCamera(pool: 1)
        try await camera.start()
        let held = try await camera.capture(after: .now(), timeout: .seconds(2))
        do {
            _ = try await camera.capture(after: .now(), timeout: .seconds(2))
            Issue.record("the only pooled buffer is held; the second press must fail")
        } catch {
            #expect(error == .noFreeBuffer(device: "synthetic:\(Self.fixtures)", poolSize: 1))
        }
        withExtendedLifetime(held) {}
        await camera.stop()
    }

    @Test func anEmptyFolderIsAClearError() async throws {
        var template = Array("/tmp/swiftwing-empty-XXXXXX".utf8CString)
        try #require(mkdtemp(&template) != nil)
        let folder = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        defer { rmdir(folder) }
        let camera = try SyntheticCamera(configuration: SyntheticCameraConfiguration(folder: folder))
        do {
            try await camera.start()
            Issue.record("an empty folder cannot be a camera")
            await camera.stop()
        } catch {
            #expect(error == .noPhotos(folder: folder, reason: "no .jpg or .jpeg files"))
            #expect(error.description.contains(folder))
        }
        #expect(camera.status.state == .stopped)
    }

    @Test func aMissingFolderIsAClearError() async throws {
        #expect {
            try SyntheticCamera.photos(in: "/nonexistent/swiftwing-photos")
        } throws: { error in
            (error as? CameraError)?.description.contains("/nonexistent/swiftwing-photos") == true
        }
    }

    @Test
    func fixturesAreListedInNameOrder() throws {
        let photos = try SyntheticCamera.photos(in: Self.fixtures)
        #expect(photos == [Self.fixtures + "/one_shelf.jpg", Self.fixtures + "/two_shelves.jpg"])
    }
}
