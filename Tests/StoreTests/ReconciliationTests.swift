import Foundation
import SwiftWingCore
import Testing

@testable import Store

@Suite("Reconciliation of spool and queue on start")
struct ReconciliationTests {
    private func fixture(_ directory: TemporaryDirectory) throws -> (TemporaryDirectory, AppDatabase, SpoolDirectory) {
        try directory.stateDirectory.create()
        return (directory, try AppDatabase.open(directory.stateDirectory), SpoolDirectory(directory.stateDirectory))
    }

    @Test("a photo whose row never committed is re-queued as a recovered scan, with its size read from the JPEG")
    func fileWithoutRow() throws {
        let directory = TemporaryDirectory()
        defer { withExtendedLifetime(directory) {} }
        let (_, database, spool) = try fixture(directory)
        let normal = try pressShutter(database, spool: spool)
        // Crash between rename and commit: the file is there, the row is not.
        let id = UUID()
        let image = try spool.write(jpeg: syntheticJPEG(width: 1920, height: 1080), for: id)
        let thumbnail = try spool.write(thumbnail: syntheticJPEG(width: 320, height: 180), for: id)

        let report = try database.queue.reconcile(spool: spool)
        #expect(report.recoveredScans == [id])
        #expect(report.scansMissingImages.isEmpty)
        #expect(!report.isClean)
        #expect(report.description.contains(id.uuidString.lowercased()))

        let recovered = try #require(try database.queue.scan(id: id))
        #expect(recovered.state == .queued)
        #expect(recovered.recovered)
        #expect(recovered.lastError?.contains("recovered") == true)
        #expect(recovered.width == 1920 && recovered.height == 1080)
        #expect(recovered.imageSize == image.size)
        #expect(recovered.imagePath == image.fileName)
        #expect(recovered.thumbnailPath == thumbnail.fileName)
        #expect(try database.queue.pending().map(\.id) == [normal.id, id])

        // Idempotent: a second start finds nothing to do.
        #expect(try database.queue.reconcile(spool: spool).isClean)
    }

    @Test("a truncated photo without a row is moved to quarantine and reported, not queued")
    func truncatedFileQuarantined() throws {
        let temporary = TemporaryDirectory()
        defer { withExtendedLifetime(temporary) {} }
        let (directory, database, spool) = try fixture(temporary)
        let id = UUID()
        let whole = syntheticJPEG()
        _ = try spool.write(jpeg: Array(whole.dropLast(10)), for: id)
        let garbage = UUID()
        _ = try spool.write(jpeg: [UInt8]("not a jpeg at all".utf8), for: garbage)

        let report = try database.queue.reconcile(spool: spool)
        #expect(report.recoveredScans.isEmpty)
        #expect(
            Set(report.quarantinedFiles.map(\.path)) == [
                directory.path + "/spool/quarantine/" + SpoolDirectory.imageFileName(for: id),
                directory.path + "/spool/quarantine/" + SpoolDirectory.imageFileName(for: garbage),
            ])
        #expect(report.quarantinedFiles.contains { $0.reason.contains("truncated") })
        #expect(entries(spool.path) == ["quarantine"])
        #expect(
            contents(of: spool.quarantinePath + "/" + SpoolDirectory.imageFileName(for: id))
                == Array(whole.dropLast(10)))
        #expect(try database.queue.scans().isEmpty)
        #expect(try database.queue.reconcile(spool: spool).isClean)
    }

    @Test("a row whose photo is missing becomes needs_attention naming the file; an analyzing one is left alone")
    func rowWithoutFile() throws {
        let directory = TemporaryDirectory()
        defer { withExtendedLifetime(directory) {} }
        let (_, database, spool) = try fixture(directory)
        let lost = try pressShutter(database, spool: spool)
        let inFlight = try pressShutter(database, spool: spool)
        try database.queue.markUploading(inFlight.id)
        try database.queue.recordJob(inFlight.id, jobID: "j", streamURL: nil, statusURL: nil, jobToken: nil)
        let discarded = try pressShutter(database, spool: spool)
        try database.queue.markDiscarded(discarded.id)
        for scan in [lost, inFlight, discarded] {
            try FileManager.default.removeItem(atPath: spool.path(of: scan.imagePath))
        }

        let report = try database.queue.reconcile(spool: spool)
        #expect(report.scansMissingImages == [lost.id])
        #expect(report.analyzingScansMissingImages == [inFlight.id])
        let marked = try #require(try database.queue.scan(id: lost.id))
        #expect(marked.state == .needsAttention)
        #expect(marked.lastError?.contains(spool.path(of: lost.imagePath)) == true)
        #expect(try database.queue.scan(id: inFlight.id)?.state == .analyzing)
        #expect(try database.queue.scan(id: discarded.id)?.state == .queued)

        let again = try database.queue.reconcile(spool: spool)
        #expect(again.scansMissingImages.isEmpty)
    }

    @Test("the photo of a done scan left behind by a crash is removed; temp files are swept")
    func doneScanFileAndTemporaries() throws {
        let directory = TemporaryDirectory()
        defer { withExtendedLifetime(directory) {} }
        let (_, database, spool) = try fixture(directory)
        let done = try pressShutter(database, spool: spool)
        try database.queue.markUploading(done.id)
        try database.queue.recordJob(done.id, jobID: "j", streamURL: nil, statusURL: nil, jobToken: nil)
        _ = try database.completeScan(done.id, books: [BookRecord(title: "Found")])
        _ = FileManager.default.createFile(atPath: spool.path + "/.tmp.x.jpg.1", contents: Data([0xFF]))

        let report = try database.queue.reconcile(spool: spool)
        #expect(report.removedFilesOfDoneScans == [done.id])
        #expect(report.sweptTemporaryFiles == [".tmp.x.jpg.1"])
        #expect(entries(spool.path) == ["quarantine"])
    }

    @Test("thumbnails and photos of done or discarded scans left by an interrupted removal are removed")
    func interruptedRemovals() throws {
        let directory = TemporaryDirectory()
        defer { withExtendedLifetime(directory) {} }
        let (_, database, spool) = try fixture(directory)
        // A done scan whose thumbnail outlived its photo (as an older removal order could leave it), and a discarded
        // scan whose files were never removed.
        let done = try pressShutter(database, spool: spool)
        _ = try spool.write(thumbnail: syntheticJPEG(), for: done.id)
        try database.queue.markUploading(done.id)
        try database.queue.recordJob(done.id, jobID: "j", streamURL: nil, statusURL: nil, jobToken: nil)
        _ = try database.completeScan(done.id, books: [BookRecord(title: "Found")])
        try FileManager.default.removeItem(atPath: spool.path(of: done.imagePath))
        let discarded = try pressShutter(database, spool: spool)
        _ = try spool.write(thumbnail: syntheticJPEG(), for: discarded.id)
        try database.queue.markDiscarded(discarded.id)

        let report = try database.queue.reconcile(spool: spool)
        #expect(Set(report.removedFilesOfDoneScans) == [done.id, discarded.id])
        #expect(entries(spool.path) == ["quarantine"])

    }

    @Test("the photo of a done scan stays while a book of it has a box and no kept spine; then it goes as before")
    func photoKeptForSpinesNotYetCut() throws {
        let directory = TemporaryDirectory()
        defer { withExtendedLifetime(directory) {} }
        let (_, database, spool) = try fixture(directory)
        func land(_ books: [BookRecord]) throws -> ScanRecord {
            let scan = try pressShutter(database, spool: spool)
            try database.queue.markUploading(scan.id)
            try database.queue.recordJob(
                scan.id, jobID: "j-" + scan.idString, streamURL: nil, statusURL: nil, jobToken: nil)
            _ = try database.completeScan(
                scan.id,
                books: books.map { book in
                    var book = book
                    book.scanID = scan.id
                    return book
                })
            return scan
        }
        let box = #"{"title":"Boxed","boundingBox":{"x":0.1,"y":0.1,"width":0.1,"height":0.8}}"#
        // The device stopped between landing these books and cutting their spines.
        let uncut = try land([
            BookRecord(isbn13: "9780262033848", title: "Boxed", rawJSON: box),
            BookRecord(isbn13: "9780201633610", title: "No box", rawJSON: #"{"title":"No box"}"#),
        ])
        // Nothing to cut: no box, no JSON, or the spine kept already.
        let plain = try land([
            BookRecord(isbn13: "9780441013593", title: "Plain", rawJSON: #"{"title":"Plain"}"#),
            BookRecord(isbn13: "9780141439518", title: "No JSON"),
        ])
        let kept = try land([BookRecord(isbn13: "9780140449136", title: "Kept", rawJSON: box)])
        let keptID = try #require(try database.library.books().first { $0.title == "Kept" }?.id)
        try database.saveBookCovers([BookCover(bookID: keptID, jpeg: syntheticJPEG(), width: 64, height: 48)])

        #expect(try database.scansAwaitingSpines() == [uncut.id])
        #expect(try database.booksAwaitingSpines(scanID: uncut.id).map(\.rawJSON) == [box])
        let report = try database.queue.reconcile(spool: spool)
        #expect(report.photosKeptForSpines == [uncut.id])
        #expect(Set(report.removedFilesOfDoneScans) == [plain.id, kept.id])
        #expect(report.description.contains("kept until the uplink cuts"))
        #expect(FileManager.default.fileExists(atPath: spool.path(of: uncut.imagePath)))

        // Once the spine is kept, the next start removes the photo.
        let boxedID = try #require(try database.library.books().first { $0.title == "Boxed" }?.id)
        try database.saveBookCovers([BookCover(bookID: boxedID, jpeg: syntheticJPEG(), width: 64, height: 48)])
        #expect(try database.queue.reconcile(spool: spool).removedFilesOfDoneScans == [uncut.id])
        #expect(entries(spool.path) == ["quarantine"])
    }

    @Test("JPEG inspection reads the size from SOF and refuses what is not whole")
    func inspection() throws {
        #expect(
            try JPEGInspection.inspect(syntheticJPEG(width: 4000, height: 3000)).get()
                == .init(width: 4000, height: 3000))
        #expect((try? JPEGInspection.inspect([0xFF, 0xD8, 0xFF, 0xD9]).get()) == nil)
        #expect((try? JPEGInspection.inspect([]).get()) == nil)
        #expect((try? JPEGInspection.inspect(Array(syntheticJPEG().dropLast()) + [0x00]).get()) == nil)
        let real = try #require(contents(of: ShippedFiles.sourceTree + "/Fixtures/shelves/one_shelf.jpg"))
        #expect(try JPEGInspection.inspect(real).get() == .init(width: 4624, height: 3468))
    }
}
