import Camera
import Testing

@Suite struct FormatPlanTests {
    let yuyv = OfferedFormat(
        fourcc: .yuyv, name: "YUYV 4:2:2",
        sizes: .discrete([FrameSize(width: 640, height: 480), FrameSize(width: 1280, height: 720)]))
    let mjpeg = OfferedFormat(
        fourcc: .mjpeg, name: "Motion-JPEG", sizes: .discrete([FrameSize(width: 1920, height: 1080)]))
    let emulatedYU12 = OfferedFormat(fourcc: .yuv420, name: "Planar YUV 4:2:0", isEmulated: true)

    @Test func fourccMatchesTheKernelCode() {
        #expect(FourCC.yuv420.rawValue == 0x3231_5559)  // v4l2_fourcc('Y','U','1','2')
        #expect(FourCC.yuv420.description == "YU12")
        #expect(FourCC(rawValue: FourCC.mjpeg.rawValue).description == "MJPG")
    }

    @Test func nativeYUV420IsPreferred() throws {
        let native = OfferedFormat(fourcc: .yuv420, name: "Planar YUV 4:2:0")
        let plan = try FormatPlan.yuv420(offered: [yuyv, native, emulatedYU12], device: "/dev/video0")
        #expect(plan == .native)
    }

    @Test func libv4l2ConversionIsUsedWhenTheCameraLacksYUV420() throws {
        let plan = try FormatPlan.yuv420(offered: [mjpeg, yuyv, emulatedYU12], device: "/dev/video0")
        #expect(plan == .converted(sources: [.mjpeg, .yuyv]))
    }

    @Test func noYUV420AndNoConversionListsWhatTheCameraOffers() {
        #expect {
            try FormatPlan.yuv420(offered: [yuyv, mjpeg], device: "/dev/video2")
        } throws: { error in
            guard let error = error as? CameraError, case .noUsableFormat(let device, let offered) = error else {
                return false
            }
            let text = error.description
            return device == "/dev/video2" && offered.count == 2 && text.contains("/dev/video2")
                && text.contains("YUYV") && text.contains("640x480, 1280x720") && text.contains("MJPG")
                && text.contains("1920x1080") && text.contains("--list-formats-ext")
        }
    }

    @Test func anEmptyListIsAnErrorToo() {
        #expect(throws: CameraError.noUsableFormat(device: "/dev/video0", offered: [])) {
            try FormatPlan.yuv420(offered: [], device: "/dev/video0")
        }
    }

    @Test func stepwiseSizesReadWell() {
        let sizes = FrameSizes.stepwise(
            minimum: FrameSize(width: 16, height: 16), maximum: FrameSize(width: 1920, height: 1080),
            step: FrameSize(width: 2, height: 2))
        #expect(sizes.description == "16x16 to 1920x1080 in steps of 2x2")
    }
}
