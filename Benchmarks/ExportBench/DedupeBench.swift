// `ExportBench dedupe`: what a job's result costs to commit into a full library, with the title + author
// dedupe of the uplink (`completeScanMatchingTitles`), in a real SQLite file with `synchronous = FULL`.
// A 200-book result (the most one job may bring) against a 1-book result, measured alternately in the
// same run so load from other processes hits both alike. `--large N` commits N books instead of 200 (with 1,
// every commit is a 1-book one: what callgrind counts for it alone).
import Foundation
import Store
import SwiftWingCore

/// `count` books as a backend would send them for one photo, none with an ISBN, so each is looked up by
/// its title and first author; every fourth one is already in the library (one of `library`'s books without
/// ISBN), the others are new.
func incomingBooks(_ count: Int, run: Int, library: [BookRecord]) -> [BookRecord] {
    let known = library.filter { $0.isbn13 == nil }
    return (0..<count).map { index in
        if index % 4 == 3 {
            let seeded = known[(run * 97 + index) % known.count]
            return BookRecord(title: seeded.title, authors: seeded.authors, confidence: 0.9)
        }
        return BookRecord(
            title: "Incoming \(run)-\(index): A Study", authors: ["Author \(index % 17)"], confidence: 0.9)
    }
}

/// This thread's CPU time in milliseconds: what a commit costs apart from waiting for the disk and the CPU.
func threadCPUMilliseconds() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now)
    return Double(now.tv_sec) * 1000 + Double(now.tv_nsec) / 1e6
}

func dedupeBench(books libraryBooks: Int, runs: Int, large: Int = 200, withoutFullText: Bool = false) throws {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("swiftwing-dedupebench-\(getpid())")
    defer { try? FileManager.default.removeItem(at: directory) }
    let state = StateDirectory(path: directory.path)
    try state.create()
    let database = try AppDatabase.open(state)
    let library = sampleBooks(libraryBooks, addedAt: Date(timeIntervalSince1970: 1_795_000_000))
    try database.writer.write { db in
        for var book in library { try book.insert(db) }
        if withoutFullText {
            // The decision not taken, measured: the full-text index no longer kept up to date by the commit.
            let triggers = try String.fetchAll(
                db, sql: "SELECT name FROM sqlite_master WHERE type = 'trigger' AND sql LIKE '%book_ft%'")
            precondition(!triggers.isEmpty, "the full-text index is kept by triggers this benchmark knows")
            for trigger in triggers { try db.execute(sql: "DROP TRIGGER \(trigger)") }
        }
    }
    /// Wall and CPU milliseconds of one commit.
    func commit(_ books: [BookRecord]) throws -> (wall: Double, cpu: Double) {
        let id = UUID()
        let image = SpooledImage(fileName: SpoolDirectory.imageFileName(for: id), path: "/nowhere", size: 1234)
        try database.queue.enqueue(
            NewScan(
                id: id, pressedAt: MonotonicInstant(nanoseconds: 1_000), pressedWallAt: Date(), frameAt: nil,
                image: image,
                width: 1920, height: 1080))
        try database.queue.markUploading(id)
        try database.queue.recordJob(id, jobID: "job-\(id)", streamURL: nil, statusURL: nil, jobToken: nil)
        let cpu = threadCPUMilliseconds()
        let wall = try milliseconds { _ = try database.completeScanMatchingTitles(id, books: books) }
        return (wall, threadCPUMilliseconds() - cpu)
    }
    // Warm-up: the first transactions pay for page cache and statement preparation.
    _ = try commit(incomingBooks(1, run: runs, library: library))
    _ = try commit(incomingBooks(large, run: runs + 1, library: library))
    var one: [Double] = []
    var many: [Double] = []
    var oneCPU: [Double] = []
    var manyCPU: [Double] = []
    for run in 0..<runs {
        let single = try commit(incomingBooks(1, run: run, library: library))
        let full = try commit(incomingBooks(large, run: run, library: library))
        one.append(single.wall)
        oneCPU.append(single.cpu)
        many.append(full.wall)
        manyCPU.append(full.cpu)
    }
    let stored = try database.library.bookCount()
    print("library: \(libraryBooks) books seeded, \(stored) after the runs; \(runs) runs each, alternating")
    print(String(format: "1-book result:   median %8.2f ms  min %8.2f ms", median(one), one.min() ?? 0))
    print(String(format: "%d-book result: median %8.2f ms  min %8.2f ms", large, median(many), many.min() ?? 0))
    print(
        String(
            format: "CPU of this thread: 1 book %.2f ms, %d books %.2f ms (medians)",
            median(oneCPU), large, median(manyCPU)))
    print(
        String(
            format: "ratio %d/1 (medians): %.2fx  (minimums): %.2fx  (CPU medians): %.2fx",
            large, median(many) / median(one), (many.min() ?? 0) / (one.min() ?? 1), median(manyCPU) / median(oneCPU)))
}
