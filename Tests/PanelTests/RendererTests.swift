import Glibc
import Panel
import SwiftWingCore
import Testing

@Suite("Panel renderer")
struct RendererTests {
    @Test("connectivity reads as the top bar shows it")
    func connectivityText() {
        #expect(Connectivity.rateLimited(retryAfterSeconds: 65).description == "RATE LIMITED 1:05")
        #expect(Connectivity.rateLimited(retryAfterSeconds: 600).description == "RATE LIMITED 10:00")
        #expect(Connectivity.busy(retryAfterSeconds: 10).description == "BACKEND BUSY 0:10")
        #expect(Connectivity.online.description == "ONLINE")
        #expect(
            PanelNotice.exportFinished(books: 523, safeToRemove: true).detail == "Exported 523 books — safe to remove")
        #expect(LatestBook(title: "x", confidence: 0.79).needsReview)
        #expect(!LatestBook(title: "x", confidence: 0.8).needsReview)
    }

    @Test("fontconfig finds JetBrains Mono for data and DejaVu Sans for labels")
    func fonts() {
        #expect(PanelFont.data.resolvedFamily == "JetBrains Mono", "apt install fonts-jetbrains-mono")
        #expect(PanelFont.label.resolvedFamily == "DejaVu Sans", "apt install fonts-dejavu-core")
    }

    @Test("an unchanged model draws nothing; a count redraws only the top bar")
    func damageRegions() throws {
        let renderer = try PanelRenderer(width: 480, height: 320)
        var model = PanelSamples.working
        #expect(renderer.render(model) == [renderer.layout.bounds])
        #expect(renderer.render(model).isEmpty)
        model.queued += 1
        #expect(renderer.render(model) == [renderer.layout.topBar])
        model.strip[0].state = .done
        #expect(renderer.render(model) == [renderer.layout.strip])
        model.latestBook?.confidence = 0.95
        #expect(renderer.render(model) == [renderer.layout.book])
        model.flash = true
        #expect(renderer.render(model) == [renderer.layout.bounds])
        #expect(renderer.image.pixel(x: 240, y: 160) == .white)
    }

    @Test("damage-only copies leave the framebuffer identical to a full copy", arguments: ["rgb565", "xrgb8888"])
    func damageCopyMatchesFullCopy(formatName: String) throws {
        let (width, height) = (800, 480)
        let format: FramebufferFormat =
            formatName == "rgb565"
            ? .rgb565(width: width, height: height, lineLength: width * 2 + 64)
            : .xrgb8888(width: width, height: height)
        let renderer = try PanelRenderer(width: width, height: height)
        var incremental = [UInt8](repeating: 0x5A, count: format.byteCount)
        // A sequence of states, each copied as damage only.
        var model = PanelSamples.model("idle")!
        var steps = [model]
        model.queued = 1
        steps.append(model)
        model = PanelSamples.working
        steps.append(model)
        model.viewfinder = PanelSamples.shelf(seed: 9)
        model.strip.removeFirst()
        steps.append(model)
        model.connectivity = .rateLimited(retryAfterSeconds: 5)
        steps.append(model)
        var damagedArea = 0
        for (index, step) in steps.enumerated() {
            let damage = renderer.render(step)
            if index > 0 { damagedArea += damage.reduce(0) { $0 + $1.area } }
            incremental.withUnsafeMutableBytes {
                PixelCopier.copy(renderer.image, rects: damage, to: $0.baseAddress!, format: format)
            }
        }
        var full = [UInt8](repeating: 0x5A, count: format.byteCount)
        full.withUnsafeMutableBytes {
            PixelCopier.copy(renderer.image, rects: [renderer.layout.bounds], to: $0.baseAddress!, format: format)
        }
        #expect(incremental == full)
        // And the damage really was partial after the first frame.
        #expect(damagedArea < (steps.count - 1) * width * height)
    }

    @Test("the PNG output is written atomically and reads back the same")
    func pngOutput() throws {
        let directory = "/tmp/panel-tests-\(getpid())"
        mkdir(directory, 0o755)
        defer { rmdir(directory) }
        let path = directory + "/panel.png"
        let renderer = try PanelRenderer(width: 320, height: 240)
        renderer.render(PanelSamples.working)
        try renderer.image.writePNG(to: path)
        defer { unlink(path) }
        let back = try PanelImage(contentsOfPNG: path)
        #expect(back.width == 320 && back.height == 240)
        #expect(GoldenImage.compare(back, renderer.image, channelTolerance: 0).differing == 0)
        // Only the PNG is left: no temporary file.
        var entries: [String] = []
        if let dir = opendir(directory) {
            while let entry = readdir(dir) {
                let name = withUnsafeBytes(of: entry.pointee.d_name) {
                    String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
                }
                if name != "." && name != ".." { entries.append(name) }
            }
            closedir(dir)
        }
        #expect(entries == ["panel.png"])
        #expect(throws: PanelError.self) { try renderer.image.writePNG(to: "/nonexistent-dir/panel.png") }
    }

    @Test("a missing framebuffer and a non-framebuffer device give advice, not a crash")
    func framebufferErrors() {
        #expect(throws: PanelError.noFramebuffer(device: "/dev/fb-missing")) {
            try FramebufferDevice(path: "/dev/fb-missing")
        }
        do {
            _ = try FramebufferDevice(path: "/dev/null")
            Issue.record("/dev/null opened as a framebuffer")
        } catch {
            guard case .unsupportedFormat(let device, _) = error else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(device == "/dev/null")
            #expect(error.description.contains("16 or 32 bits per pixel"))
        }
        #expect(PanelError.noFramebuffer(device: "/dev/fb0").description.contains("headless"))
    }
}
