import SwiftWingCore

/// Named example states of the panel, with synthetic pictures: for golden tests, the README's
/// screenshots, the benchmark and the VM rig's framebuffer test. Deterministic: the same state
/// always draws the same picture.
public enum PanelSamples {
    /// The states, in the order a demo shows them.
    public static let names = [
        "idle", "working", "flash", "rate-limited", "camera-missing", "disk-full", "unauthorized", "export", "pairing",
    ]

    /// The model named `name` (one of ``names``), or nil.
    public static func model(_ name: String) -> PanelModel? {
        switch name {
        case "idle":
            return PanelModel(connectivity: .offline, queued: 0, library: 0, viewfinder: shelf(seed: 1))
        case "working":
            return working
        case "flash":
            var model = working
            model.flash = true
            return model
        case "rate-limited":
            var model = working
            model.connectivity = .rateLimited(retryAfterSeconds: 65)
            return model
        case "camera-missing":
            return PanelModel(queued: 3, library: 522, notice: .cameraMissing(device: "/dev/video0"))
        case "disk-full":
            return PanelModel(queued: 41, library: 522, notice: .diskFull(freeMegabytes: 38))
        case "unauthorized":
            return PanelModel(connectivity: .unauthorized, queued: 12, library: 522, notice: .backendUnauthorized)
        case "export":
            return PanelModel(
                connectivity: .online, library: 523, notice: .exportFinished(books: 523, safeToRemove: true))
        case "pairing":
            return PanelModel(
                connectivity: .online, library: 523,
                notice: .pairing(
                    PanelPairing(
                        code: "482913", address: "http://192.168.1.20:8080/", qrCode: sampleQRCode, secondsLeft: 287)))
        default:
            return nil
        }
    }

    /// A busy moment: books landing, scans in every state.
    public static var working: PanelModel {
        PanelModel(
            connectivity: .online, queued: 3, library: 522,
            latestBook: LatestBook(
                title: "The Design of Everyday Things", authors: ["Don Norman"], isbn: "978-0-465-05065-9",
                confidence: 0.74),
            strip: [
                ScanTile(id: "1", state: .uploading, thumbnail: shelf(seed: 2, width: 64, height: 48)),
                ScanTile(id: "2", state: .analyzing, thumbnail: shelf(seed: 3, width: 64, height: 48)),
                ScanTile(id: "3", state: .done, thumbnail: shelf(seed: 4, width: 64, height: 48)),
                ScanTile(id: "4", state: .waiting, thumbnail: shelf(seed: 5, width: 64, height: 48)),
                ScanTile(id: "5", state: .failed, thumbnail: shelf(seed: 6, width: 64, height: 48)),
                ScanTile(id: "6", state: .done, thumbnail: shelf(seed: 7, width: 64, height: 48)),
            ],
            viewfinder: shelf(seed: 1))
    }

    /// A synthetic shelf: a wooden board and coloured spines, as a YUV 4:2:0 frame.
    public static func shelf(seed: Int, width: Int = 320, height: Int = 240, sequence: UInt32 = 0) -> PanelPicture {
        let frame = YUV420Frame(
            layout: YUV420Layout(width: width, height: height), timestamp: MonotonicInstant(nanoseconds: 0),
            sequence: sequence)
        // Spine colours as (Y, Cb, Cr).
        let spines: [(UInt8, UInt8, UInt8)] = [
            (81, 90, 240), (145, 54, 34), (41, 240, 110), (170, 166, 16), (210, 16, 146), (60, 150, 120),
            (120, 110, 180), (200, 128, 128), (35, 128, 128),
        ]
        var state = UInt32(truncatingIfNeeded: seed &* 2_654_435_761 &+ 12345)
        func next() -> Int {
            state = state &* 1_103_515_245 &+ 12345
            return Int(state >> 16)
        }
        var bounds: [(start: Int, end: Int, color: Int, top: Int)] = []
        var x = 0
        while x < width {
            let w = max(2, width / 24 + next() % max(1, width / 16))
            bounds.append((x, min(width, x + w), next() % spines.count, height / 10 + next() % max(1, height / 5)))
            x += w
        }
        let shelfTop = height * 85 / 100
        let luma = frame.luma
        let cb = frame.cb
        let cr = frame.cr
        let layout = frame.layout
        for spine in bounds {
            let (y0, u0, v0) = spines[spine.color]
            for row in 0..<height {
                let inSpine = row >= spine.top && row < shelfTop
                let value: UInt8 = row >= shelfTop ? 110 : (inSpine ? y0 : 20)
                for column in spine.start..<spine.end {
                    // A darker edge between spines.
                    luma[row * layout.lumaStride + column] = inSpine && column == spine.start ? value / 2 : value
                }
                if row % 2 == 0 {
                    for column in stride(from: spine.start & ~1, to: spine.end, by: 2) {
                        let (u, v): (UInt8, UInt8) = row >= shelfTop ? (100, 150) : (inSpine ? (u0, v0) : (128, 128))
                        cb[(row / 2) * layout.chromaStride + column / 2] = u
                        cr[(row / 2) * layout.chromaStride + column / 2] = v
                    }
                }
            }
        }
        return PanelPicture(frame)
    }
}

extension PanelSamples {
    /// `http://192.168.1.20:8080/pair?code=482913`, the sample's pairing URL, as zxing-cpp 1.4 encodes it (the panel
    /// has no encoder: Identify has it).
    static let sampleQRCode = QRModules(rows: [
        "#######..#...##..#.#..#######",
        "#.....#.##.##..#..#...#.....#",
        "#.###.#..###...##.#...#.###.#",
        "#.###.#.##.#.#.####.#.#.###.#",
        "#.###.#...#.#.#....#..#.###.#",
        "#.....#.#.#..#.##.#...#.....#",
        "#######.#.#.#.#.#.#.#.#######",
        "............#..##.#..........",
        "#####.#####.##..######.#.#.#.",
        ".#####.#.#...##..###..#.#...#",
        "#..#####.#.##..###.....##....",
        "....##...###..###..#.##.#..#.",
        "#.#..#####.#.#.#.#.###.#.##..",
        "##.###.##.#.#.#.#..#..#.#.#.#",
        "###.#.#..#.....#..#..##...#..",
        "..##.#..##..#.###.#..#.#...#.",
        "#.#.#.##....##.#.#..##....#..",
        "#..#.#........#.#.##.##.###.#",
        "#.#.#.##.#.###.##.#...#..##..",
        "#.#.##.#####..#.#..#.##.#..#.",
        "#.#.####...#.....#..#####.###",
        "........##..##..#####...#####",
        "#######.##...####.###.#.###..",
        "#.....#...#.##......#...#....",
        "#.###.#.#...#.##.#..#########",
        "#.###.#.#.#.....#...##.#...##",
        "#.###.#.#..##..######.#.##.#.",
        "#.....#.#.##..#.#.#.##.##..#.",
        "#######.####....###......##..",
    ])
}
