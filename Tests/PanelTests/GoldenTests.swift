import Glibc
import Panel
import Testing

/// Comparing pictures with a tolerance, and the golden files next to this source.
enum GoldenImage {
    static let directory: String = {
        var path = #filePath
        while let last = path.last, last != "/" { path.removeLast() }
        return path + "Golden"
    }()

    /// Pixels whose channels differ by more than `channelTolerance`, and the largest difference seen.
    static func compare(_ a: PanelImage, _ b: PanelImage, channelTolerance: Int) -> (differing: Int, worst: Int) {
        precondition(a.width == b.width && a.height == b.height)
        var differing = 0
        var worst = 0
        a.withPixelsReadOnly { pa in
            b.withPixelsReadOnly { pb in
                for y in 0..<a.height {
                    let ra = (pa + y * a.stride).assumingMemoryBound(to: UInt32.self)
                    let rb = (pb + y * b.stride).assumingMemoryBound(to: UInt32.self)
                    for x in 0..<a.width where ra[x] & 0xFF_FFFF != rb[x] & 0xFF_FFFF {
                        var delta = 0
                        for shift: UInt32 in [0, 8, 16] {
                            delta = max(delta, abs(Int(ra[x] >> shift & 0xFF) - Int(rb[x] >> shift & 0xFF)))
                        }
                        worst = max(worst, delta)
                        if delta > channelTolerance { differing += 1 }
                    }
                }
            }
        }
        return (differing, worst)
    }

    /// What the display shows for `image` in `format`: packed into framebuffer memory, then unpacked.
    static func asFramebufferShowsIt(_ image: PanelImage, format: FramebufferFormat) throws -> PanelImage {
        var memory = [UInt8](repeating: 0, count: format.byteCount)
        memory.withUnsafeMutableBytes {
            PixelCopier.copy(
                image, rects: [PanelRect(x: 0, y: 0, width: image.width, height: image.height)], to: $0.baseAddress!,
                format: format)
        }
        let shown = try PanelImage(width: image.width, height: image.height)
        memory.withUnsafeBytes { raw in
            shown.withPixels { pixels in
                for y in 0..<image.height {
                    let row = (pixels + y * shown.stride).assumingMemoryBound(to: UInt32.self)
                    for x in 0..<image.width {
                        let c = format.unpack(format.value(at: x, y, in: raw.baseAddress!))
                        row[x] = UInt32(c.red) << 16 | UInt32(c.green) << 8 | UInt32(c.blue)
                    }
                }
            }
        }
        return shown
    }
}

@Suite("Golden images")
struct GoldenTests {
    /// Per-channel difference tolerated (font rasterization differences between FreeType builds).
    static let channelTolerance = 48
    /// Fraction of pixels allowed beyond that.
    static let maxDifferingFraction = 0.002

    static let cases: [(state: String, width: Int, height: Int, format: String)] =
        [(320, 240), (480, 320), (800, 480), (1920, 1080)].flatMap { size in
            ["xrgb8888", "rgb565"].map { ("working", size.0, size.1, $0) }
        } + PanelSamples.names.filter { $0 != "working" }.map { ($0, 480, 320, "xrgb8888") }

    @Test("rendering matches the approved picture", arguments: cases.indices)
    func golden(index: Int) throws {
        let c = Self.cases[index]
        let renderer = try PanelRenderer(width: c.width, height: c.height)
        renderer.render(PanelSamples.model(c.state)!)
        let format: FramebufferFormat =
            c.format == "rgb565"
            ? .rgb565(width: c.width, height: c.height) : .xrgb8888(width: c.width, height: c.height)
        let shown = try GoldenImage.asFramebufferShowsIt(renderer.image, format: format)
        let path = "\(GoldenImage.directory)/\(c.state)-\(c.width)x\(c.height)-\(c.format).png"
        if getenv("SWIFTWING_UPDATE_GOLDENS") != nil {
            try shown.writePNG(to: path)
            return
        }
        let golden = try PanelImage(contentsOfPNG: path)
        #expect(golden.width == c.width && golden.height == c.height)
        let result = GoldenImage.compare(shown, golden, channelTolerance: Self.channelTolerance)
        let limit = Int(Double(c.width * c.height) * Self.maxDifferingFraction)
        if result.differing > limit {
            // Leave the picture beside the golden's name in /tmp, to look at.
            try? shown.writePNG(to: "/tmp/panel-golden-failed-\(c.state)-\(c.width)x\(c.height)-\(c.format).png")
        }
        #expect(
            result.differing <= limit,
            "\(path): \(result.differing) pixels differ by more than \(Self.channelTolerance) (limit \(limit), worst \(result.worst)); if the change is intended, run with SWIFTWING_UPDATE_GOLDENS=1 and look at the new PNGs"
        )
    }

    @Test("the golden comparison notices a real change")
    func goldenDetectsChange() throws {
        let renderer = try PanelRenderer(width: 480, height: 320)
        var model = PanelSamples.working
        renderer.render(model)
        let golden = try PanelImage(contentsOfPNG: "\(GoldenImage.directory)/working-480x320-xrgb8888.png")
        model.latestBook?.title = "Another Book Entirely"
        renderer.render(model)
        let result = GoldenImage.compare(renderer.image, golden, channelTolerance: Self.channelTolerance)
        #expect(result.differing > Int(480 * 320 * Self.maxDifferingFraction))
    }

    @Test("RGB565 goldens really are quantized: white stays white, orange becomes F9C6")
    func rgb565Golden() throws {
        let golden = try PanelImage(contentsOfPNG: "\(GoldenImage.directory)/working-800x480-rgb565.png")
        let renderer = try PanelRenderer(width: 800, height: 480)
        renderer.render(PanelSamples.working)
        let rule = renderer.layout.rule
        #expect(golden.pixel(x: rule.x + 5, y: rule.y) == .white)
        let format = FramebufferFormat.rgb565(width: 1, height: 1)
        #expect(golden.pixel(x: 10, y: 10) == .black)
        #expect(format.pack(.orange) == 0xF9C6)
    }
}
