// PanelProbe: renders named panel states (PanelSamples) into a framebuffer device and/or PNGs, and
// compares a raw framebuffer dump with the PNG renderer's picture. Driven by Tests/VMRig/panel-vfb.sh;
// also handy on a device: `PanelProbe show working --device /dev/fb0`.
import Glibc
import Panel

func fail(_ message: String) -> Never {
    let line = "PanelProbe: \(message)\n"
    _ = line.withCString { write(2, $0, strlen($0)) }
    exit(1)
}

let usage = """
    usage: PanelProbe states
           PanelProbe png STATE WIDTHxHEIGHT OUT.png
           PanelProbe show STATE [--device /dev/fb0] [--png OUT.png]   (draws 'idle' first, then STATE as damage)
           PanelProbe compare RAW_FILE REFERENCE.png [--device /dev/fb0] [--readback OUT.png]
           PanelProbe set-virtual-width PIXELS [--device /dev/fb0]   (prints the new line_length)
           PanelProbe dump RAW_FILE OUT.png [--device /dev/fb0]   (a framebuffer dump as a picture)
           PanelProbe expect-pixel RAW_FILE X Y RRGGBB [--device /dev/fb0]   (within the format's quantization)
    """

var arguments = Array(CommandLine.arguments.dropFirst())
@MainActor func option(_ name: String) -> String? {
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return nil }
    let value = arguments[index + 1]
    arguments.removeSubrange(index...(index + 1))
    return value
}

func model(_ name: String) -> PanelModel {
    guard let model = PanelSamples.model(name) else {
        fail("no state \(name); states: \(PanelSamples.names.joined(separator: " "))")
    }
    return model
}

do {
    let device = option("--device") ?? "/dev/fb0"
    let png = option("--png")
    let readback = option("--readback")
    let paddingByte = option("--padding-byte").flatMap { UInt8($0, radix: 16) }
    switch arguments.first {
    case "states":
        print(PanelSamples.names.joined(separator: "\n"))
    case "png" where arguments.count == 4:
        let size = arguments[2].split(separator: "x").compactMap { Int($0) }
        guard size.count == 2 else { fail("size must be WIDTHxHEIGHT") }
        let renderer = try PanelRenderer(width: size[0], height: size[1])
        renderer.render(model(arguments[1]))
        try renderer.image.writePNG(to: arguments[3])
    case "show" where arguments.count == 2:
        let framebuffer = try FramebufferDevice(path: device)
        print("\(device): \(framebuffer.driverName), \(framebuffer.format)")
        let renderer = try PanelRenderer(width: framebuffer.format.width, height: framebuffer.format.height)
        framebuffer.clear()
        framebuffer.present(renderer.image, rects: renderer.render(model("idle")))
        let damage = renderer.render(model(arguments[1]))
        framebuffer.present(renderer.image, rects: damage)
        print("damage: \(damage.map(\.description).joined(separator: " "))")
        if let png { try renderer.image.writePNG(to: png) }
    case "set-virtual-width" where arguments.count == 2:
        guard let width = Int(arguments[1]) else { fail(usage) }
        print(try FramebufferDevice.setVirtualWidth(width, path: device))
    case "expect-pixel" where arguments.count == 5:
        let format = try FramebufferDevice(path: device).format
        guard let x = Int(arguments[2]), let y = Int(arguments[3]), let hex = UInt32(arguments[4], radix: 16),
            x < format.width, y < format.height
        else { fail(usage) }
        guard let file = fopen(arguments[1], "rb") else { fail("cannot open \(arguments[1])") }
        var raw = [UInt8](repeating: 0, count: format.byteCount)
        let read = fread(&raw, 1, raw.count, file)
        fclose(file)
        guard read == raw.count else { fail("\(arguments[1]) has \(read) bytes, expected \(format.byteCount)") }
        let got = raw.withUnsafeBytes { format.unpack(format.value(at: x, y, in: $0.baseAddress!)) }
        let want = PanelColor(hex: hex)
        let delta = max(
            abs(Int(got.red) - Int(want.red)), abs(Int(got.green) - Int(want.green)),
            abs(Int(got.blue) - Int(want.blue)))
        print("(\(x),\(y)) is \(got), expected \(want)")
        exit(delta <= format.quantizationTolerance ? 0 : 1)
    case "dump" where arguments.count == 3:
        let format = try FramebufferDevice(path: device).format
        guard let file = fopen(arguments[1], "rb") else { fail("cannot open \(arguments[1])") }
        var raw = [UInt8](repeating: 0, count: format.byteCount)
        let read = fread(&raw, 1, raw.count, file)
        fclose(file)
        guard read == raw.count else {
            fail("\(arguments[1]) has \(read) bytes, expected \(format.byteCount) (yres * line_length)")
        }
        let shown = try PanelImage(width: format.width, height: format.height)
        raw.withUnsafeBytes { memory in
            shown.withPixels { pixels in
                for y in 0..<format.height {
                    let row = (pixels + y * shown.stride).assumingMemoryBound(to: UInt32.self)
                    for x in 0..<format.width {
                        let c = format.unpack(format.value(at: x, y, in: memory.baseAddress!))
                        row[x] = UInt32(c.red) << 16 | UInt32(c.green) << 8 | UInt32(c.blue)
                    }
                }
            }
        }
        try shown.writePNG(to: arguments[2])
    case "compare" where arguments.count == 3:
        let format = try FramebufferDevice(path: device).format
        let reference = try PanelImage(contentsOfPNG: arguments[2])
        guard reference.width == format.width, reference.height == format.height else {
            fail("reference is \(reference.width)x\(reference.height), framebuffer \(format)")
        }
        guard let file = fopen(arguments[1], "rb") else { fail("cannot open \(arguments[1])") }
        var raw = [UInt8](repeating: 0, count: format.byteCount)
        let read = fread(&raw, 1, raw.count, file)
        fclose(file)
        guard read == raw.count else {
            fail("\(arguments[1]) has \(read) bytes, expected \(format.byteCount) (yres * line_length)")
        }
        let tolerance = format.quantizationTolerance
        var differing = 0
        var first: String?
        let shown = try PanelImage(width: format.width, height: format.height)
        raw.withUnsafeBytes { memory in
            shown.withPixels { pixels in
                for y in 0..<format.height {
                    let row = (pixels + y * shown.stride).assumingMemoryBound(to: UInt32.self)
                    for x in 0..<format.width {
                        let c = format.unpack(format.value(at: x, y, in: memory.baseAddress!))
                        row[x] = UInt32(c.red) << 16 | UInt32(c.green) << 8 | UInt32(c.blue)
                    }
                }
            }
        }
        if let readback { try shown.writePNG(to: readback) }
        raw.withUnsafeBytes { memory in
            for y in 0..<format.height {
                for x in 0..<format.width {
                    let got = format.unpack(format.value(at: x, y, in: memory.baseAddress!))
                    let want = reference.pixel(x: x, y: y)
                    let delta = max(
                        abs(Int(got.red) - Int(want.red)), abs(Int(got.green) - Int(want.green)),
                        abs(Int(got.blue) - Int(want.blue)))
                    if delta > tolerance {
                        differing += 1
                        if first == nil { first = "(\(x),\(y)): framebuffer \(got), picture \(want)" }
                    }
                }
            }
        }
        print(
            "\(format): \(differing) of \(format.width * format.height) pixels differ beyond \(tolerance) per channel")
        if let paddingByte {
            // Row padding (line_length beyond the visible row) must be exactly as it was before drawing.
            let rowBytes = format.width * format.bytesPerPixel
            var touched = 0
            for y in 0..<format.height {
                for i in (y * format.lineLength + rowBytes)..<((y + 1) * format.lineLength) where raw[i] != paddingByte
                {
                    touched += 1
                }
            }
            print("row padding: \(touched) of \((format.lineLength - rowBytes) * format.height) bytes changed")
            if touched > 0 { differing += 1 }
        }
        if let first { print("first: \(first)") }
        exit(differing == 0 ? 0 : 1)
    default:
        fail(usage)
    }
} catch {
    fail("\(error)")
}
