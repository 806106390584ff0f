// `ExportBench dedupe`: what a job's result costs to commit into a full library, with the title + author
// dedupe of the uplink (`completeScanMatchingTitles`), in a real SQLite file with `synchronous = FULL`.
// A 200-book result (the most one job may bring) against a 1-book result, measured alternately in the
// same run so load from other processes hits both alike.
import Foundation
import Store
import SwiftWingCore

/// `count` books as a backend would send them for one photo, none with an ISBN, so each is looked up by
/// its title and first author; every fourth one is already in the library (`sampleBooks`' titles).
func incomingBooks(_ count: Int, run: Int, libraryBooks: Int) -> [BookRecord] {
    (0..<count).map { index in
        if index % 4 == 3 {
            // A book without ISBN from the seeded library (every seventh one has none): the same key.
            let seeded = sampleBooks(libraryBooks, addedAt: Date())[(index * 7 + 6) % libraryBooks]
            return BookRecord(title: seeded.title, authors: seeded.authors, confidence: 0.9)
        }
        return BookRecord(
            title: "Incoming \(run)-\(index): A Study", authors: ["Author \(index % 17)"], confidence: 0.9)
    }
}

func dedupeBench(books libraryBooks: Int, runs: Int) throws {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("swiftwing-dedupebench-\(getpid())")
    defer { try? FileManager.default.removeItem(at: directory) }
    let state = StateDirectory(path: directory.path)
    try state.create()
    let database = try AppDatabase.open(state)
    try database.writer.write { db in
        for var book in sampleBooks(libraryBooks, addedAt: Date(timeIntervalSince1970: 1_795_000_000)) {
            try book.insert(db)
        }
    }
    func commit(_ books: [BookRecord]) throws -> Double {
        let id = UUID()
        let image = SpooledImage(fileName: SpoolDirectory.imageFileName(for: id), path: "/nowhere", size: 1234)
        try database.queue.enqueue(NewScan(
            id: id, pressedAt: MonotonicInstant(nanoseconds: 1_000), pressedWallAt: Date(), frameAt: nil, image: image,
            width: 1920, height: 1080))
        try database.queue.markUploading(id)
        try database.queue.recordJob(id, jobID: "job-\(id)", streamURL: nil, statusURL: nil, jobToken: nil)
        return try milliseconds { _ = try database.completeScanMatchingTitles(id, books: books) }
    }
    // Warm-up: the first transactions pay for page cache and statement preparation.
    _ = try commit(incomingBooks(1, run: -1, libraryBooks: libraryBooks))
    _ = try commit(incomingBooks(200, run: -2, libraryBooks: libraryBooks))
    var one: [Double] = [], many: [Double] = []
    for run in 0..<runs {
        let single = incomingBooks(1, run: run, libraryBooks: libraryBooks)
        let full = incomingBooks(200, run: run, libraryBooks: libraryBooks)
        one.append(try commit(single))
        many.append(try commit(full))
    }
    let stored = try database.library.bookCount()
    print("library: \(libraryBooks) books seeded, \(stored) after the runs; \(runs) runs each, alternating")
    print(String(format: "1-book result:   median %8.2f ms  min %8.2f ms", median(one), one.min() ?? 0))
    print(String(format: "200-book result: median %8.2f ms  min %8.2f ms", median(many), many.min() ?? 0))
    print(String(format: "ratio 200/1 (medians): %.2fx  (minimums): %.2fx",
                 median(many) / median(one), (many.min() ?? 0) / (one.min() ?? 1)))
}
