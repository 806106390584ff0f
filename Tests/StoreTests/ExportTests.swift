import CSV
import Foundation
import Testing

@testable import Store

/// Parses CSV bytes with Python's csv module (strict), an implementation independent of the writer.
private func parsedByPython(_ bytes: [UInt8]) throws -> [[String]] {
    let directory = TemporaryDirectory()
    let input = directory.path + "/in.csv"
    let output = directory.path + "/out.json"
    try Data(bytes).write(to: URL(fileURLWithPath: input))
    let script = """
        import csv, json, sys
        with open(sys.argv[1], newline='', encoding='utf-8') as f:
            rows = list(csv.reader(f, strict=True))
        json.dump(rows, open(sys.argv[2], 'w', encoding='utf-8'))
        """
    let status = run("/usr/bin/python3", ["-c", script, input, output])
    try #require(status == 0, "python3's csv module rejected the file")
    return try JSONDecoder().decode([[String]].self, from: Data(contentsOf: URL(fileURLWithPath: output)))
}

/// A library in a real SQLite file, read back through a read-only (WAL reader) connection as the CLI does.
private func libraryOnDisk(_ books: [BookRecord]) throws -> (TemporaryDirectory, LibraryExport) {
    let directory = TemporaryDirectory()
    let writer = try AppDatabase.open(directory.stateDirectory)
    for scan in Set(books.compactMap(\.scanID)) { try writer.queue.enqueue(newScan(id: scan)) }
    for book in books { try writer.library.insert(book) }
    let reader = try AppDatabase.openReadOnly(directory.stateDirectory)
    return (directory, LibraryExport(library: reader.library))
}

private let added = Date(timeIntervalSince1970: 1_795_000_000)  // 2026-11-18T11:06:40Z

private let awkwardBooks: [BookRecord] = [
    BookRecord(
        isbn13: "9780441013593", isbn10: "0441013597", title: "Dune", authors: ["Frank Herbert"], format: "Paperback",
        publisher: "Ace", publishedDate: "1990-09-01", pageCount: 535, coverURL: "https://covers.example/dune.jpg",
        confidence: 0.97, enrichmentStatus: .success, addedAt: added,
        scanID: UUID(uuidString: "0f8c8a52-2a1b-4d4e-9a55-6a1b2c3d4e5f")),
    BookRecord(
        title: "Eats, Shoots & Leaves", authors: ["Lynne Truss", "Tolkien, J. R. R."], publisher: "Profile, Ltd.",
        confidence: 0.5, addedAt: added),
    BookRecord(title: "He said \"hi\", twice", authors: ["A \"Quoted\" Name"], addedAt: added),
    BookRecord(title: "Line one\nline two\r\nline three\rfour", authors: [], addedAt: added),
    BookRecord(
        title: "Le Petit Prince 🦊 — 小王子 — Saint-Exupe\u{301}ry", authors: ["Antoine de Saint-Exupéry"],
        addedAt: added),
    BookRecord(
        title: "=HYPERLINK(\"http://evil.example\",\"x\")", authors: ["+1 Author"], publisher: "@publisher",
        publishedDate: "-2000", addedAt: added),
    BookRecord(title: "\tTabbed", authors: ["\rCarriage"], format: " =not at the start", addedAt: added),
    BookRecord(title: "X;=HYPERLINK(\"http://evil.example\")", authors: ["Safe", "-2+3"], addedAt: added),
]

@Suite("Library export (CSV, RFC 4180)")
struct ExportTests {
    @Test("every book comes back from an independent parser cell for cell, header first")
    func roundTrip() throws {
        let (_, export) = try libraryOnDisk(awkwardBooks)
        for format in ExportFormat.allCases {
            let bytes = try LibraryCSV.encode(export.books(), format: format)
            let rows = try parsedByPython(bytes)
            #expect(rows.first == format.columns)
            let expected = try export.books().map { LibraryCSV.row(for: $0, format: format) }
            #expect(Array(rows.dropFirst()) == expected, "\(format)")
        }
    }

    @Test("the SwiftWing columns hold the book's fields")
    func swiftwingColumns() throws {
        let (_, export) = try libraryOnDisk(awkwardBooks)
        let rows = try parsedByPython(LibraryCSV.encode(export.books(), format: .swiftwing))
        #expect(
            rows[1] == [
                "9780441013593", "0441013597", "Dune", "Frank Herbert", "Paperback", "Ace", "1990-09-01", "535", "0.97",
                "false", "2026-11-18T11:06:40Z", "https://covers.example/dune.jpg",
                "0f8c8a52-2a1b-4d4e-9a55-6a1b2c3d4e5f",
            ])
        #expect(rows[2][2] == "Eats, Shoots & Leaves")
        #expect(rows[2][3] == "Lynne Truss; Tolkien, J. R. R.")
        #expect(rows[2][8] == "0.5")
        #expect(rows[2][9] == "true")  // below 0.8: needs review
        #expect(rows[3][2] == "He said \"hi\", twice")
        #expect(rows[4][2] == "Line one\nline two\r\nline three\rfour")
        #expect(rows[5][2] == "Le Petit Prince 🦊 — 小王子 — Saint-Exupe\u{301}ry")
    }

    @Test("UTF-8 without a byte-order mark, CRLF after every record, every book's field quoted")
    func bytesOnTheWire() throws {
        let (_, export) = try libraryOnDisk(awkwardBooks)
        let bytes = try LibraryCSV.encode(export.books(), format: .swiftwing)
        let text = try #require(String(validating: bytes, as: UTF8.self))
        #expect(!text.hasPrefix("\u{FEFF}"))
        #expect(
            text.hasPrefix(
                "ISBN-13,ISBN-10,Title,Authors,Format,Publisher,Published Date,Pages,Confidence,"
                    + "Needs Review,Added Date,Cover URL,Scan ID\r\n"))
        #expect(text.hasSuffix("\r\n"))
        #expect(
            text.contains(
                "\r\n\"9780441013593\",\"0441013597\",\"Dune\",\"Frank Herbert\",\"Paperback\",\"Ace\",\"1990-09-01\",\"535\","
            ))
        #expect(text.contains(",\"Eats, Shoots & Leaves\",\"Lynne Truss; Tolkien, J. R. R.\",\"\",\"Profile, Ltd.\","))
        #expect(text.contains(",\"He said \"\"hi\"\", twice\",\"A \"\"Quoted\"\" Name\","))
        #expect(text.contains(",\"Line one\nline two\r\nline three\rfour\","))
        // Outside quoted fields every line break is CRLF: 8 records, each ended by one.
        let rows = try parsedByPython(bytes)
        #expect(rows.count == 1 + awkwardBooks.count)
    }

    @Test("the export's writer gives the same bytes as CSV.swift's CSVWriter")
    func sameBytesAsCSVSwift() throws {
        let (_, export) = try libraryOnDisk(awkwardBooks)
        for format in ExportFormat.allCases {
            let stream = OutputStream(toMemory: ())
            let writer = try CSVWriter(stream: stream, newline: .crlf)
            try writer.write(row: format.columns)
            for book in try export.books() {
                try writer.write(row: LibraryCSV.row(for: book, format: format), quotedAtIndex: { _ in true })
            }
            stream.close()
            let reference = try #require(stream.property(forKey: .dataWrittenToMemoryStreamKey) as? Data)
            // CSVWriter leaves out the last record's CRLF, which RFC 4180 allows either way.
            #expect(try LibraryCSV.encode(export.books(), format: format) == [UInt8](reference) + [0x0D, 0x0A])
        }
    }

    @Test("cells a spreadsheet would run as formulas get a leading apostrophe")
    func formulaNeutralisation() throws {
        for start in ["=", "+", "-", "@", "\t", "\r"] {
            #expect(LibraryCSV.neutralised(start + "1+1") == "'" + start + "1+1")
        }
        #expect(LibraryCSV.neutralised("1+1=2") == "1+1=2")
        #expect(LibraryCSV.neutralised(" =x") == " =x")
        #expect(LibraryCSV.neutralised("") == "")
        // A `;`-separated spreadsheet locale starts a cell after each `;`.
        #expect(
            LibraryCSV.neutralised("X;=HYPERLINK(\"http://evil.example\")") == "X;'=HYPERLINK(\"http://evil.example\")")
        #expect(LibraryCSV.neutralised("Le Guin;-2+3;@x;ok; =y") == "Le Guin;'-2+3;'@x;ok; '=y")
        #expect(LibraryCSV.neutralised("a;;") == "a;;")
        let (_, export) = try libraryOnDisk(awkwardBooks)
        for format in ExportFormat.allCases {
            let rows = try parsedByPython(LibraryCSV.encode(export.books(), format: format))
            let evil = rows[6]
            let cells = format == .goodreads ? Array(evil[0...4]) + Array(evil[7...]) : evil
            for cell in cells {
                #expect(!["=", "+", "-", "@", "\t", "\r"].contains(cell.first.map(String.init) ?? ""), "\(cell)")
            }
            #expect(evil.contains("'=HYPERLINK(\"http://evil.example\",\"x\")"))
            #expect(evil.contains("'+1 Author"))
            #expect(evil.contains("'@publisher"))
            #expect(rows[7].contains("'\tTabbed"))
            #expect(rows[7].contains("'\rCarriage"))
            #expect(rows[8].contains("X;'=HYPERLINK(\"http://evil.example\")"))
            #expect(rows[8].contains(format == .goodreads ? "'-2+3" : "Safe; '-2+3"))
        }
    }

    @Test("Goodreads: its exact header, ISBNs as =\"…\", the fields where Goodreads reads them")
    func goodreads() throws {
        #expect(
            ExportFormat.goodreads.columns.joined(separator: ",") == "Book Id,Title,Author,Author l-f,"
                + "Additional Authors,ISBN,ISBN13,My Rating,Publisher,Binding,Number of Pages,Year Published,"
                + "Original Publication Year,Date Read,Date Added,Bookshelves,Bookshelves with positions,"
                + "Exclusive Shelf,My Review,Spoiler,Private Notes,Read Count,Owned Copies")
        let (_, export) = try libraryOnDisk(awkwardBooks)
        let bytes = try LibraryCSV.encode(export.books(), format: .goodreads)
        let text = try #require(String(validating: bytes, as: UTF8.self))
        #expect(text.contains(",\"=\"\"0441013597\"\"\",\"=\"\"9780441013593\"\"\","))
        let rows = try parsedByPython(bytes)
        let header = rows[0]
        func cell(_ row: Int, _ name: String) throws -> String { rows[row][try #require(header.firstIndex(of: name))] }
        #expect(try cell(1, "Title") == "Dune")
        #expect(try cell(1, "Author") == "Frank Herbert")
        #expect(try cell(1, "Author l-f") == "Herbert, Frank")
        #expect(try cell(1, "ISBN") == "=\"0441013597\"")
        #expect(try cell(1, "ISBN13") == "=\"9780441013593\"")
        #expect(try cell(1, "Publisher") == "Ace")
        #expect(try cell(1, "Binding") == "Paperback")
        #expect(try cell(1, "Number of Pages") == "535")
        #expect(try cell(1, "Year Published") == "1990")
        #expect(try cell(1, "Date Added") == "2026/11/18")
        #expect(try cell(1, "Exclusive Shelf") == "to-read")
        #expect(try cell(1, "My Rating") == "0")
        #expect(try cell(2, "ISBN") == "=\"\"")
        #expect(try cell(2, "Additional Authors") == "Tolkien, J. R. R.")
        #expect(try cell(2, "Private Notes").contains("needs review"))
        #expect(try cell(1, "Private Notes") == "")
        #expect(try cell(6, "Year Published") == "")  // "-2000" is not a year Goodreads takes
    }

    @Test("an empty library is the header row alone")
    func emptyLibrary() throws {
        let (_, export) = try libraryOnDisk([])
        for format in ExportFormat.allCases {
            let bytes = try LibraryCSV.encode(export.books(), format: format)
            #expect(String(decoding: bytes, as: UTF8.self) == format.columns.joined(separator: ",") + "\r\n")
            #expect(try parsedByPython(bytes) == [format.columns])
        }
    }

    @Test("--to FILE replaces the file whole and leaves no temporary file")
    func writeToFile() throws {
        let (directory, export) = try libraryOnDisk(Array(awkwardBooks.prefix(2)))
        let path = directory.path + "/out/library.csv"
        try FileManager.default.createDirectory(atPath: directory.path + "/out", withIntermediateDirectories: true)
        try Data("old".utf8).write(to: URL(fileURLWithPath: path))
        #expect(try export.write(.swiftwing, to: path) == 2)
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        #expect(try parsedByPython(bytes).count == 3)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path + "/out") == ["library.csv"])
        #expect(throws: ExportError.self) { try export.write(.swiftwing, to: directory.path + "/missing/x.csv") }
    }

    @Test("a second export while one holds the lock is refused as busy")
    func oneAtATime() throws {
        let directory = TemporaryDirectory()
        let first = try ExportLock.acquire(directory: directory.path, device: "sda1")
        #expect(throws: ExportError.busy(device: "sdb1")) {
            _ = try ExportLock.acquire(directory: directory.path, device: "sdb1")
        }
        first.release()
        try ExportLock.acquire(directory: directory.path, device: "sdb1").release()
    }

    @Test("dates in the CSV agree with Foundation's calendar, leap days and 1969 included")
    func utcDates() throws {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = .gmt
        var generator = SystemRandomNumberGenerator()
        let fixed: [TimeInterval] = [0, -1, 951_782_400, 951_868_799, 4_107_542_400, 1_795_000_000, -86_400 * 400]
        let random = (0..<2000).map { _ in
            TimeInterval(Int.random(in: -2_000_000_000...5_000_000_000, using: &generator))
        }
        for seconds in fixed + random {
            let date = Date(timeIntervalSince1970: seconds)
            let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
            let mine = UTCDateParts(date)
            let fields: [Int?] = [mine.year, mine.month, mine.day, mine.hour, mine.minute, mine.second]
            #expect(
                fields == [parts.year, parts.month, parts.day, parts.hour, parts.minute, parts.second], "\(seconds)")
        }
        #expect(LibraryCSV.isoDate(added) == "2026-11-18T11:06:40Z")
        #expect(LibraryCSV.goodreadsDate(Date(timeIntervalSince1970: 951_782_400)) == "2000/02/29")
    }

    @Test("file names carry the day; the day is in the given time zone")
    func fileNames() throws {
        let day = LibraryExport.day(added, timeZone: try #require(TimeZone(identifier: "Pacific/Kiritimati")))
        #expect(day == "2026-11-19")  // 11:06 UTC is 01:06 the next day at UTC+14
        #expect(LibraryExport.day(added, timeZone: .gmt) == "2026-11-18")
        #expect(ExportFormat.swiftwing.fileName(day: "2026-11-23") == "SwiftWing_Library_2026-11-23.csv")
        #expect(ExportFormat.goodreads.fileName(day: "2026-11-23") == "SwiftWing_Library_2026-11-23_goodreads.csv")
    }
}
