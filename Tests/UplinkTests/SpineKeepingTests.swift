import Foundation
import Imaging
import Store
import SwiftWingTesting
import Testing

@testable import Uplink

/// When a scan's books land, each book's bounding box is cut from the photo and kept with the book before the
/// photo is deleted; a box or a photo that gives no crop costs the book its picture, never its place.
@Suite struct SpineKeepingTests {
    /// A 1600x1200 JPEG: dark, with one bright band where the first test's first box lies.
    static func photo() throws -> [UInt8] {
        let frame = ImagingFixtures.frame(width: 1600, height: 1200) { x, y in
            (400..<560).contains(x) && (120..<1080).contains(y) ? 235 : 16
        }
        return try JPEGEncoder(quality: 90).encode(frame)
    }

    static func book(isbn: String, title: String, box: String?) -> String {
        #"{"isbn":"\#(isbn)","title":"\#(title)","authors":["A. Writer"],"confidence":0.95"#
            + (box.map { #","boundingBox":\#($0)"# } ?? "") + "}"
    }

    /// Lands one scan of `photo` whose job completes with `books`; returns the harness, stopped, and the scan.
    static func land(photo: [UInt8], books: [String]) async throws -> (UplinkHarness, ScanRecord) {
        let harness = try UplinkHarness { request, _ in
            if request.method == .post { return .response(status: 202, body: Talk.accepted(job: "job-1")) }
            if request.url.path.hasSuffix("/stream") {
                return .stream(chunks: [Talk.completed(job: "job-1", id: 1, books: books)])
            }
            return .response(status: 204, body: "")
        }
        harness.start()
        let scan = try harness.queueScan(bytes: photo)
        try await harness.eventually("the scan is done and its photo deleted") {
            try harness.scan(scan.id).state == .done
                && !FileManager.default.fileExists(atPath: harness.spool.path(of: scan.imagePath))
        }
        await harness.stop()
        return (harness, scan)
    }

    @Test("two boxes keep two spines of their shapes, and they outlive the photo")
    func twoBoxesKeepTwoSpines() async throws {
        let (harness, _) = try await Self.land(
            photo: try Self.photo(),
            books: [
                Self.book(isbn: "9780262033848", title: "Tall", box: #"{"x":0.25,"y":0.1,"width":0.1,"height":0.8}"#),
                Self.book(isbn: "9780201633610", title: "Wide", box: #"{"x":0.5,"y":0.5,"width":0.4,"height":0.1}"#),
            ])
        let books = try harness.database.library.books()
        #expect(books.map(\.title) == ["Tall", "Wide"])
        let ids = books.compactMap(\.id)
        let tall = try #require(try harness.database.bookCover(id: ids[0]))
        let wide = try #require(try harness.database.bookCover(id: ids[1]))
        // 160x960 pixels of the photo (1:6) and 640x120 (16:3), each shrunk to the tile's long edge.
        #expect(tall.height == SpineCrop.longEdge && abs(tall.width - SpineCrop.longEdge / 6) <= 2)
        #expect(wide.width == SpineCrop.longEdge && abs(wide.height - SpineCrop.longEdge * 3 / 16) <= 2)
        for cover in [tall, wide] {
            let info = try JPEGInfo(cover.jpeg)
            #expect(info.width == cover.width && info.height == cover.height)
        }
        let bright = try JPEGDecoder().decode(tall.jpeg)
        #expect(ImagingFixtures.luma(bright, bright.width / 2, bright.height / 2) > 220, "the bright band")
    }

    @Test("a hostile box keeps no spine and the book lands; so does a photo that is not a JPEG")
    func hostileBoxesLandTheBooksWithoutSpines() async throws {
        let hostile = [
            #"{"x":"NaN","y":0.1,"width":0.1,"height":0.5}"#, #"{"x":-2,"y":0.1,"width":1,"height":0.5}"#,
            #"{"x":1.5,"y":0.1,"width":0.2,"height":0.5}"#, #"{"x":0.2,"y":0.1,"width":0,"height":0.5}"#,
            #"{"x":0.2,"y":0.1,"width":"1e309","height":-1}"#,
        ]
        let isbns = ["9780262033848", "9780201633610", "9780441013593", "9780141439518", "9780140449136"]
        let books = zip(isbns, hostile).enumerated().map { index, pair in
            Self.book(isbn: pair.0, title: "Book \(index)", box: pair.1)
        }
        let (harness, _) = try await Self.land(photo: try Self.photo(), books: books)
        let landed = try harness.database.library.books()
        #expect(landed.count == hostile.count)
        #expect(try harness.database.booksWithCovers(among: landed.compactMap(\.id)).isEmpty)

        let (unreadable, _) = try await Self.land(
            photo: [0xFF, 0xD8, 0xFF, 0xE0, 1, 2, 3, 0xFF, 0xD9],
            books: [
                Self.book(isbn: "9780262033848", title: "Tall", box: #"{"x":0.25,"y":0.1,"width":0.1,"height":0.8}"#)
            ]
        )
        let tall = try unreadable.database.library.books()
        #expect(tall.map(\.title) == ["Tall"])
        let id = try #require(tall.first?.id)
        #expect(try unreadable.database.bookCover(id: id) == nil)
    }

    @Test("a start after a stop between landing and cutting cuts the spines left behind, then removes the photo")
    func spinesLeftBehindAreCutAtTheNextStart() async throws {
        let photo = try Self.photo()
        let (harness, scan) = try await Self.land(
            photo: photo,
            books: [
                Self.book(isbn: "9780262033848", title: "Tall", box: #"{"x":0.25,"y":0.1,"width":0.1,"height":0.8}"#)
            ])
        let id = try #require(try harness.database.library.books().first?.id)
        let cut = try #require(try harness.database.bookCover(id: id))
        // As if the device had stopped right after the books' transaction: no spine yet, the photo still there.
        try await harness.database.writer.write { db in try db.execute(sql: "DELETE FROM bookCover") }
        _ = try harness.spool.write(jpeg: photo, for: scan.id)
        let report = try harness.database.queue.reconcile(spool: harness.spool)
        #expect(report.photosKeptForSpines == [scan.id])

        harness.start()
        try await harness.eventually("the spine is kept and the photo removed") {
            try harness.database.bookCover(id: id) != nil
                && !FileManager.default.fileExists(atPath: harness.spool.path(of: scan.imagePath))
        }
        await harness.stop()
        #expect(try harness.database.bookCover(id: id) == cut)
        #expect(try harness.database.queue.reconcile(spool: harness.spool).isClean)
    }
}
