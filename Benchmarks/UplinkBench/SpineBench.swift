// UplinkBench spines: what keeping each landed book's spine costs (ScanJourney.complete): the bytes of a crop, and
// the landing (books + done in one transaction, then the photo deleted) with the spines cut and kept between the two
// against the same landing without them, alternately in one run, on a real SQLite file and spool.
//
// Usage: swift run -c release UplinkBench spines [--runs 15] [--books 10]
import Foundation
import Imaging
import Store
import SwiftWingCore

enum SpineBench {
    /// Spine-sized boxes (3.6% x 42% of the photo: the spines of Tests/RecognitionTests/Fixtures/three_spines.jpg on
    /// one_shelf.jpg) side by side along each shelf: the photos have no annotated boxes, so these stand for a shelf's
    /// books. The first three are the three spines of three_spines.jpg.
    static func boxes(_ count: Int) -> [SpineCrop.Box] {
        let (first, width, height) = (3150.0 / 4624, 500.0 / 3 / 4624, 1450.0 / 3468)
        return (0..<count).map { index in
            // Past the photo's right edge the row goes on along the other shelf, from the left.
            let along = first + Double(index) * width
            let wraps = along + width > 1
            return SpineCrop.Box(
                x: wraps ? 0.02 + Double(index) * width : along, y: wraps ? 0.05 : 1050.0 / 3468, width: width,
                height: height)
        }
    }

    static func run() throws {
        let runs = option("--runs", 15)
        let bookCount = option("--books", 10)
        let folder = ShippedFiles.folder("shelves") ?? ShippedFiles.sourceTree + "/Fixtures/shelves"
        print("UplinkBench spines: long edge \(SpineCrop.longEdge) px, quality \(SpineCrop.quality)")

        // 1. Bytes per crop, on the photos as shipped and as a press makes them (1920x1080, q85).
        var pressPhotos: [(String, [UInt8])] = []
        for name in ["one_shelf.jpg", "two_shelves.jpg"] {
            let path = folder + "/" + name
            let original = try FileOperations.readFile(path)
            let decoded = try JPEGDecoder().decode(original, minimumWidth: 1920, minimumHeight: 1080)
            let press = try JPEGEncoder(quality: 85).encode(
                try YUV420Scaler().resized(decoded, width: 1920, height: 1080))
            pressPhotos.append((name, press))
            for (label, photo) in [("4624x3468", original), ("1920x1080 q85", press)] {
                let crops = try SpineCrop.crops(photo: photo, boxes: boxes(bookCount), source: name).compactMap { $0 }
                let sizes = crops.map(\.jpeg.count).sorted()
                let mean = Double(sizes.reduce(0, +)) / Double(max(sizes.count, 1))
                print(
                    "\(name) \(label): \(crops.count) crops, \(crops.first.map { "\($0.width)x\($0.height)" } ?? "-") px, bytes mean \(format(mean)), min \(sizes.first ?? 0), max \(sizes.last ?? 0); 10,000 books ≈ \(format(mean * 10_000 / 1_048_576)) MB"
                )
            }
        }

        // 2. Landing with and without the spines, alternately, on a real state directory.
        let directory = NSTemporaryDirectory() + "swiftwing-spinebench-" + UUID().uuidString
        let state = StateDirectory(path: directory)
        try state.create()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let database = try AppDatabase.open(state)
        let spool = SpoolDirectory(state)
        var serial = 0
        func land(photo: [UInt8], keepSpines: Bool) throws -> Double {
            let id = UUID()
            let image = try spool.write(jpeg: photo, for: id)
            _ = try database.queue.enqueue(
                NewScan(
                    id: id, pressedAt: .now(), pressedWallAt: Date(), frameAt: nil, image: image, width: 1920,
                    height: 1080))
            let books = (0..<bookCount).map { index -> BookRecord in
                serial += 1
                return BookRecord(title: "Spine \(serial)", authors: ["Writer \(index)"], confidence: 0.9)
            }
            let start = ContinuousClock.now
            let (_, saved) = try database.completeScanMatchingTitles(id, books: books)
            if keepSpines {
                let crops = try SpineCrop.crops(photoAt: spool.path(of: image.fileName), boxes: boxes(bookCount))
                let covers = zip(saved, crops).compactMap { book, crop in
                    crop.map { BookCover(bookID: book.id ?? 0, jpeg: $0.jpeg, width: $0.width, height: $0.height) }
                }
                try database.saveBookCovers(covers)
            }
            try spool.remove(scan: id)
            let elapsed = ContinuousClock.now - start
            return Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
        }
        for (name, photo) in pressPhotos {
            _ = try land(photo: photo, keepSpines: false)  // warm-up
            _ = try land(photo: photo, keepSpines: true)
            var without: [Double] = []
            var with: [Double] = []
            for _ in 0..<runs {
                without.append(try land(photo: photo, keepSpines: false))
                with.append(try land(photo: photo, keepSpines: true))
            }
            without.sort()
            with.sort()
            let (plain, spines) = (percentile(without, 0.5), percentile(with, 0.5))
            print(
                "\(name) 1920x1080, \(bookCount) books, \(runs) runs: landing median \(format(plain)) ms (min \(format(without[0]))), with spines \(format(spines)) ms (min \(format(with[0]))); ratio \(String(format: "%.2f", spines / plain)), spines add \(format(spines - plain)) ms"
            )
        }
    }
}
