// The library export against its baseline in the same run: 10,000 books in a real SQLite file
// (WAL, read through a read-only connection as `swiftwing export` does), written by the export's
// own RFC 4180 writer and, for comparison, by CSV.swift's CSVWriter (the same bytes).
//   ExportBench [--books N] [--runs R]                the benchmark (figures in Benchmarks/README.md)
//   ExportBench dedupe [--books N] [--runs R] [--large L] [--without-full-text]
//                                                     a job's result committed with the title dedupe
//   ExportBench seed STATE_DIR N EXPECTED.json [S]    a state directory with N known books, and those
//                                                     books as JSON for an independent check (the VM rig);
//                                                     with S, also S spines to check from one done scan,
//                                                     each with three candidates and a picture (the review page)
import CSV
import Foundation
import Imaging
import Store
import SwiftWingCore

/// Deterministic books with the awkward parts real ones have: commas, quotes, line breaks,
/// non-ASCII titles, several authors, formula-like starts, missing fields.
func sampleBooks(_ count: Int, addedAt: Date) -> [BookRecord] {
    let titles = [
        "Dune", "Eats, Shoots & Leaves", "The \"Annotated\" Alice", "Cien años de soledad", "Война и мир",
        "吾輩は猫である", "=1+1 and other sums", "Le Petit Prince 🦊", "Notes\non a line break", "@home",
    ]
    let authors = ["Frank Herbert", "Lynne Truss", "Lewis Carroll", "Gabriel García Márquez", "Лев Толстой"]
    return (0..<count).map { index in
        let isbn12 = String(format: "978%09d", index)
        let check = GTIN.checkDigit(ofPayload: isbn12.compactMap(\.wholeNumberValue))
        let isbn13: String? = index % 7 == 6 ? nil : isbn12 + String(check)
        let names: [String] = Array(authors[(index % authors.count)...].prefix(1 + index % 3))
        let publisher: String? = index % 5 == 0 ? nil : "Publisher, \(index % 13)"
        let pages: Int? = index % 11 == 0 ? nil : 100 + index % 900
        let confidence = Double(index % 100) / 100
        return BookRecord(
            isbn13: isbn13, title: "\(titles[index % titles.count]) #\(index)", authors: names,
            format: index % 2 == 0 ? "Paperback" : "Hardcover", publisher: publisher,
            publishedDate: String(1900 + index % 125), pageCount: pages,
            coverURL: "https://covers.example/\(index).jpg", confidence: confidence,
            addedAt: addedAt.addingTimeInterval(Double(index)))
    }
}

func seed(stateDirectory: String, count: Int, expectedPath: String, spines: Int = 0) throws {
    let state = StateDirectory(path: stateDirectory)
    try state.create()
    let database = try AppDatabase.open(state)
    var saved: [BookRecord] = []
    for book in sampleBooks(count, addedAt: Date(timeIntervalSince1970: 1_795_000_000)) {
        saved.append(try database.library.insert(book))
    }
    if spines > 0 { try seedSpines(spines, database, state) }
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys]
    encoder.dateEncodingStrategy = .iso8601
    try encoder.encode(saved).write(to: URL(fileURLWithPath: expectedPath))
    print("seeded \(saved.count) books into \(state.databasePath)")
}

/// `count` spines to check from one done scan, as the daemon lands them: the text read, three candidates (one with
/// markup in its title), and a picture (a grey spine, 54×320, cut as the daemon cuts them).
func seedSpines(_ count: Int, _ database: AppDatabase, _ state: StateDirectory) throws {
    let id = UUID()
    let frame = YUV420Frame(layout: YUV420Layout(width: 54, height: 320))
    frame.buffer.bytes.initializeMemory(as: UInt8.self, repeating: 128)
    let picture = try JPEGEncoder(quality: 80).encode(frame)
    let image = try SpoolDirectory(state).write(jpeg: picture, for: id)
    _ = try database.queue.enqueue(
        NewScan(id: id, pressedAt: .now(), pressedWallAt: Date(), frameAt: nil, image: image, width: 54, height: 320))
    let spines = (0..<count).map { index in
        NewSpineToCheck(
            text: "SPINE \(index) WILLIAMS DRAGONBONE", box: SpineBox(x: 0, y: 0, width: 1, height: 1),
            candidates: [
                SpineCandidateRecord(
                    title: "The Dragonbone Chair #\(index)", authors: ["Tad Williams"], isbn13: "9780756402693",
                    confidence: 0.62, source: "catalogue"),
                SpineCandidateRecord(title: "Stone of Farewell", authors: ["Tad Williams"], confidence: 0.21),
                SpineCandidateRecord(title: "<b>To Green Angel Tower</b>", authors: [], confidence: 0.05),
            ])
    }
    let landed = try database.completeScanMatchingTitles(id, books: [], spines: spines, jobID: "seed").spines
    _ = try database.saveSpineCrops(
        landed.map { SpinePicture(spineID: $0.id, jpeg: picture, width: 54, height: 320) })
}

func milliseconds(_ body: () throws -> Void) rethrows -> Double {
    let start = ContinuousClock.now
    try body()
    let elapsed = ContinuousClock.now - start
    return Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
}

func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }

func bench(books count: Int, runs: Int) throws {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("swiftwing-exportbench-\(getpid())")
    defer { try? FileManager.default.removeItem(at: directory) }
    let state = StateDirectory(path: directory.path)
    try state.create()
    let writer = try AppDatabase.open(state)
    try writer.writer.write { db in
        for var book in sampleBooks(count, addedAt: Date(timeIntervalSince1970: 1_795_000_000)) {
            try book.insert(db)
        }
    }
    let export = LibraryExport(library: try AppDatabase.openReadOnly(state).library)
    var read: [Double] = []
    var cells: [Double] = []
    var swiftwing: [Double] = []
    var goodreads: [Double] = []
    var file: [Double] = []
    var library: [Double] = []
    var size = 0
    for _ in 0..<runs {
        read.append(try milliseconds { _ = try export.books() })
        cells.append(try milliseconds { _ = try export.books().map { LibraryCSV.row(for: $0, format: .swiftwing) } })
        swiftwing.append(try milliseconds { size = try LibraryCSV.encode(export.books(), format: .swiftwing).count })
        goodreads.append(try milliseconds { _ = try LibraryCSV.encode(export.books(), format: .goodreads) })
        file.append(try milliseconds { try export.write(.swiftwing, to: directory.path + "/out.csv") })
        var same = false
        library.append(
            try milliseconds {
                let books = try export.books()
                same = try csvSwiftBytes(books) == LibraryCSV.encode(books, format: .swiftwing)
            })
        precondition(same, "CSV.swift's CSVWriter and the export's writer disagree")
    }
    let baseline = median(read)
    print("ExportBench: \(count) books, \(runs) runs, medians (ms); ratio to reading the rows")
    print(String(format: "  read the rows (baseline)               %8.1f ms   1.00x", baseline))
    for (name, values) in [
        ("read + cells, swiftwing (no CSV)", cells), ("read + CSV, swiftwing (\(size / 1024) KiB)", swiftwing),
        ("read + CSV, goodreads", goodreads), ("read + CSV + durable file (fsync)", file),
        ("read + CSV.swift CSVWriter, swiftwing", library),
    ] {
        let label = name.padding(toLength: 38, withPad: " ", startingAt: 0)
        print("  \(label)" + String(format: " %8.1f ms  %5.2fx", median(values), median(values) / baseline))
    }
}

/// The same file written by CSV.swift's CSVWriter (to memory; the final CRLF, which it leaves out, added).
func csvSwiftBytes(_ books: [BookRecord]) throws -> [UInt8] {
    let stream = OutputStream(toMemory: ())
    let writer = try CSVWriter(stream: stream, newline: .crlf)
    try writer.write(row: ExportFormat.swiftwing.columns)
    for book in books {
        try writer.write(row: LibraryCSV.row(for: book, format: .swiftwing), quotedAtIndex: { _ in true })
    }
    stream.close()
    let data = stream.property(forKey: .dataWrittenToMemoryStreamKey) as? Data ?? Data()
    return [UInt8](data) + [0x0D, 0x0A]
}

let arguments = Array(CommandLine.arguments.dropFirst())
if arguments.first == "seed", arguments.count == 4 || arguments.count == 5, let count = Int(arguments[2]) {
    try seed(
        stateDirectory: arguments[1], count: count, expectedPath: arguments[3],
        spines: arguments.count == 5 ? Int(arguments[4]) ?? 0 : 0)
} else if arguments.first == "dedupe" {
    func value(_ flag: String, _ fallback: Int) -> Int {
        arguments.firstIndex(of: flag).flatMap { Int(arguments[$0 + 1]) } ?? fallback
    }
    try dedupeBench(
        books: value("--books", 10_000), runs: value("--runs", 5), large: value("--large", 200),
        withoutFullText: arguments.contains("--without-full-text"))
} else {
    func value(_ flag: String, _ fallback: Int) -> Int {
        arguments.firstIndex(of: flag).flatMap { Int(arguments[$0 + 1]) } ?? fallback
    }
    try bench(books: value("--books", 10_000), runs: value("--runs", 5))
}
