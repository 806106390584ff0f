import Panel
import SwiftWingCore
import Testing

@Suite("YUV to RGB")
struct YUVConversionTests {
    @Test("a viewfinder frame of video-level white and black converts to white and black")
    func levels() throws {
        let frame = YUV420Frame(layout: YUV420Layout(width: 4, height: 2))
        for x in 0..<4 {
            frame.luma[x] = 235
            frame.luma[4 + x] = 16
        }
        for i in 0..<2 {
            frame.cb[i] = 128
            frame.cr[i] = 128
        }
        let renderer = try PanelRenderer(width: 800, height: 480)
        var model = PanelModel(viewfinder: PanelPicture(frame))
        renderer.render(model)
        let box = renderer.layout.viewfinder
        // The frame fills the box (cropped): top half white, bottom half black (inside the corner marks).
        #expect(renderer.image.pixel(x: box.x + box.width / 2, y: box.y + box.height / 4) == .white)
        #expect(renderer.image.pixel(x: box.x + box.width / 2, y: box.y + box.height * 3 / 4) == .black)
        // A new frame redraws the viewfinder box and nothing else.
        let next = YUV420Frame(layout: YUV420Layout(width: 4, height: 2))
        model.viewfinder = PanelPicture(next)
        #expect(renderer.render(model) == [box])
    }
}
