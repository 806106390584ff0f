import Foundation
import Imaging
import Store
import SwiftWingCore
import Synchronization
import Testing

@testable import Appliance
@testable import WebInterface

/// `swiftwing-web` over real loopback HTTP, with the daemon's real SQLite file and a real control socket.
@Suite struct WebServerTests {
    static let hostileTitle = "<script>alert(1)</script>"

    @Test func bookDataShowsAsTextNeverAsMarkup() async throws {
        let book = BookRecord(
            isbn13: "9780441013593", title: Self.hostileTitle, authors: ["\"><img src=x onerror=alert(2)>"],
            confidence: 0.5, rawJSON: #"{"title":"<script>alert(3)</script>"}"#)
        try await withWebDevice(books: [book]) { device in
            let (cookie, _) = try await device.pair()
            for path in ["/library", "/books/1", "/review", "/library/grid?q=alert", "/"] {
                let page = try await device.get(path, cookie: cookie)
                #expect(page.status == 200, "\(path): \(page.text)")
                #expect(page.text.contains(htmlEscaped(Self.hostileTitle)), "\(path)")
                #expect(!page.text.contains("<script>alert"), "\(path)")
                #expect(!page.text.contains("<img src=x"), "\(path)")
                #expect(page.header("Content-Security-Policy")?.hasPrefix("default-src 'self'") == true)
            }
            let script = try await device.get("/static/app.js")
            #expect(script.status == 200)
            #expect(script.header("Content-Type")?.hasPrefix("text/javascript") == true)
        }
    }

    @Test func withoutThePairingCookieNothingIsShownOrChanged() async throws {
        try await withWebDevice(books: [BookRecord(isbn13: "9780441013593", title: "Dune")]) { device in
            for path in ["/", "/library", "/books/1", "/export/swiftwing.csv", "/events"] {
                let page = try await device.get(path)
                #expect(page.status == 303, "\(path)")
                #expect(page.header("Location") == "/pair")
                #expect(!page.text.contains("Dune"))
            }
            let forged = "swiftwing_session=" + String(repeating: "ab", count: 32)
            #expect(try await device.get("/library", cookie: forged).status == 303)
            let delete = try await device.post("/books/1/delete", [("csrf", "x")], cookie: forged)
            #expect(delete.status == 401)
            #expect(try device.database.library.book(id: 1) != nil)
            // Revoking ends a real session too.
            let (cookie, _) = try await device.pair()
            #expect(try await device.get("/library", cookie: cookie).status == 200)
            #expect(try WebPairing.revoke(configuration: device.configuration) == 1)
            #expect(try await device.get("/library", cookie: cookie).status == 303)
        }
    }

    @Test func aChangeWithoutTheFormsCSRFTokenIsRefused() async throws {
        try await withWebDevice(books: [BookRecord(isbn13: "9780441013593", title: "Dune")]) { device in
            let (cookie, csrf) = try await device.pair()
            let missing = try await device.post("/books/1/delete", [], cookie: cookie)
            #expect(missing.status == 403)
            let wrong = try await device.post("/books/1/delete", [("csrf", String(csrf.reversed()))], cookie: cookie)
            #expect(wrong.status == 403)
            #expect(try device.database.library.book(id: 1) != nil)

            let deleted = try await device.post("/books/1/delete", [("csrf", csrf)], cookie: cookie)
            #expect(deleted.status == 303)
            #expect(try device.database.library.book(id: 1) == nil)
            let location = try #require(deleted.header("Location"))
            let library = try await device.get(location, cookie: cookie)
            #expect(library.text.contains("Deleted “Dune”"))
            let token = try #require(
                library.text.range(of: "name=\"token\" value=\"").map {
                    String(library.text[$0.upperBound...].prefix { $0 != "\"" })
                })
            let undone = try await device.post("/undo", [("csrf", csrf), ("token", token)], cookie: cookie)
            #expect(undone.status == 303)
            #expect(undone.header("Location") == "/books/1")
            #expect(try device.database.library.book(id: 1)?.title == "Dune")
            #expect(try await device.post("/undo", [("csrf", csrf), ("token", token)], cookie: cookie).status == 410)
        }
    }

    @Test func fiveWrongCodesLockPairingFromThatAddressForFiveMinutes() async throws {
        try await withWebDevice { device in
            let printed = try WebPairing.pair(configuration: device.configuration, now: device.clock.now)
            let code = String(printed.split(separator: " ")[1])
            let wrong = code == "000000" ? "111111" : "000000"
            for remaining in (1...4).reversed() {
                let answer = try await device.post("/pair", [("code", wrong)])
                #expect(answer.status == 403)
                #expect(answer.text.contains("\(remaining) more wrong"), "\(answer.text)")
            }
            let fifth = try await device.post("/pair", [("code", wrong)])
            #expect(fifth.text.contains("Pairing is locked"))
            // Locked for this address: even the right code is refused; the code itself is not burnt (a neighbour
            // could otherwise burn the owner's code), and the device may still make codes.
            let right = try await device.post("/pair", [("code", code)])
            #expect(right.status == 403)
            #expect(right.header("Set-Cookie") == nil)
            #expect(right.text.contains("Pairing is locked"))

            device.clock.advance(4 * 60)
            #expect(try await device.post("/pair", [("code", code)]).text.contains("Pairing is locked"))
            device.clock.advance(61)
            // The lock is over, but the code expired meanwhile (5 minutes); a new one pairs.
            let old = try await device.post("/pair", [("code", code)])
            #expect(old.text.contains("No code is waiting"))
            let (cookie, _) = try await device.pair()
            #expect(try await device.get("/library", cookie: cookie).status == 200)
        }
    }

    @Test func aPairingCodeExpiresAfterFiveMinutesAndWorksOnce() async throws {
        try await withWebDevice { device in
            let printed = try WebPairing.pair(configuration: device.configuration, now: device.clock.now)
            let code = String(printed.split(separator: " ")[1])
            device.clock.advance(5 * 60 + 1)
            #expect(try await device.post("/pair", [("code", code)]).text.contains("No code is waiting"))
            let fresh = String(
                try WebPairing.pair(configuration: device.configuration, now: device.clock.now)
                    .split(separator: " ")[1])
            #expect(try await device.post("/pair", [("code", fresh)]).status == 303)
            #expect(try await device.post("/pair", [("code", fresh)]).text.contains("No code is waiting"))
            // The session lasts 30 days.
            let (cookie, _) = try await device.pair()
            device.clock.advance(29 * 24 * 3600)
            #expect(try await device.get("/library", cookie: cookie).status == 200)
            device.clock.advance(2 * 24 * 3600)
            #expect(try await device.get("/library", cookie: cookie).status == 303)
        }
    }

    @Test func anEditWithABadISBNSaysWhatTheCommandLineSays() async throws {
        try await withWebDevice(books: [BookRecord(title: "Dune", confidence: 0.4)]) { device in
            let (cookie, csrf) = try await device.pair()
            let bad = "978-0-441-01359-2"
            var cliMessage = ""
            do {
                _ = try LibraryManagement.checkedISBN(bad)
            } catch {
                cliMessage = "\(error)"
            }
            #expect(cliMessage.contains("should be 3"))
            let refused = try await device.post(
                "/books/1/edit", [("csrf", csrf), ("title", "Dune"), ("authors", "Frank Herbert"), ("isbn", bad)],
                cookie: cookie)
            #expect(refused.status == 422)
            #expect(refused.text.contains(htmlEscaped(cliMessage)), "\(refused.text)")
            #expect(refused.text.contains("value=\"\(bad)\""), "the typed ISBN stays in the form")
            #expect(try device.database.library.book(id: 1)?.isbn13 == nil)

            let saved = try await device.post(
                "/books/1/edit",
                [("csrf", csrf), ("title", "Dune"), ("authors", "Frank Herbert"), ("isbn", "978-0-441-01359-3")],
                cookie: cookie)
            #expect(saved.status == 303)
            let book = try #require(try device.database.library.book(id: 1))
            #expect(book.isbn13 == "9780441013593")
            #expect(book.authors == ["Frank Herbert"])
            #expect(book.needsReview == false)
        }
    }

    @Test func searchUsesTheLibrarysIndexAndPagesStayBounded() async throws {
        var books = (1...60).map { BookRecord(title: "Filler \($0)", authors: ["Someone"]) }
        books.append(BookRecord(isbn13: "9780441013593", title: "Dune", authors: ["Frank Herbert"]))
        try await withWebDevice(books: books) { device in
            let (cookie, _) = try await device.pair()
            let found = try await device.get("/library/grid?q=herb", cookie: cookie)
            #expect(found.text.contains("Dune"))
            #expect(!found.text.contains("Filler"))
            #expect(try await device.get("/library?q=978-0-441-01359-3", cookie: cookie).text.contains("Dune"))
            let first = try await device.get("/library?sort=title", cookie: cookie)
            #expect(first.text.contains("61 books, 1–48 shown"))
            #expect(first.text.contains("sort=title&amp;page=1"))
            let second = try await device.get("/library?sort=title&page=1", cookie: cookie)
            #expect(second.text.contains("49–61 shown"))
        }
    }

    @Test func theExportsAreTheSticksFiles() async throws {
        let books = [
            BookRecord(isbn13: "9780441013593", title: "Dune, \"the\" novel", authors: ["Frank Herbert"]),
            BookRecord(title: "=cmd()", authors: []),
        ]
        try await withWebDevice(books: books) { device in
            let (cookie, _) = try await device.pair()
            let stored = try device.database.library.books()
            for format in ExportFormat.allCases {
                let file = try await device.get("/export/\(format.rawValue).csv", cookie: cookie)
                #expect(file.status == 200)
                #expect(file.body == LibraryCSV.encode(stored, format: format))
                #expect(
                    file.header("Content-Disposition")?.contains(
                        format.fileName(day: LibraryExport.day(device.clock.now))) == true)
            }
        }
    }

    @Test func theShutterButtonPressesThroughTheControlSocket() async throws {
        let presses = Atomic<Int>(0)
        try await withWebDevice(daemon: { request in
            switch request.command {
            case .shutter:
                presses.add(1, ordering: .relaxed)
                return ControlReply(ok: true, scanId: "0b7f5a52-0000-4000-8000-000000000001", error: nil, status: nil)
            default:
                return .refused("not in this test")
            }
        }) { device in
            let (cookie, csrf) = try await device.pair()
            #expect(try await device.post("/shutter", [], cookie: cookie).status == 403)
            #expect(presses.load(ordering: .relaxed) == 0)
            let pressed = try await device.post("/shutter", [("csrf", csrf)], cookie: cookie)
            #expect(pressed.status == 200)
            #expect(pressed.text.contains("scan 0b7f5a52 is queued"))
            #expect(presses.load(ordering: .relaxed) == 1)
        }
    }

    @Test(
        "the Now page says whether uploads wait for a rate limit or a busy backend, with the countdown",
        arguments: [
            ("rate-limited", "RATE LIMITED: uploads resume in"), ("busy", "BACKEND BUSY: uploads resume in"),
        ])
    func theNowPageTellsAPauseByItsCause(connectivity: String, words: String) async throws {
        let uplink = UplinkStatus(
            connectivity: connectivity, rateLimitRemainingSeconds: 75, jobsInFlight: 0, concurrency: 3,
            backend: "http://127.0.0.1:8788/", lastProblem: nil)
        let status = DaemonStatus(
            pid: 1, version: "0", startedAt: Date(), camera: "/dev/video0", cameraState: "", pressesAccepted: 0,
            pressesRefused: 0, processing: 0, lastError: nil, uplink: uplink, cameraAvailability: "streaming")
        try await withWebDevice(daemon: { request in
            request.command == .status ? ControlReply(ok: true, status: status) : .refused("not in this test")
        }) { device in
            let (cookie, _) = try await device.pair()
            let page = try await device.get("/", cookie: cookie)
            #expect(page.text.contains(words), "\(page.text)")
            #expect(page.text.contains("1:15"))
        }
    }

    @Test func theNowPagesStatusIsPushedAsServerSentEvents() async throws {
        try await withWebDevice(books: [BookRecord(title: Self.hostileTitle)], { $0.limits.eventStreamSeconds = 1 }) {
            device in
            let (cookie, _) = try await device.pair()
            let stream = try await device.get("/events", cookie: cookie)
            #expect(stream.status == 200)
            #expect(stream.header("Content-Type") == "text/event-stream")
            #expect(stream.text.hasPrefix("retry: 3000\n\n"))
            let event = try #require(
                stream.text.components(separatedBy: "\n\n").first { $0.hasPrefix("event: status") })
            #expect(event.contains("data: <p class=\"state state-problem\">DAEMON STOPPED</p>"))
            #expect(event.contains(htmlEscaped(Self.hostileTitle)))
            #expect(!event.contains("<script>"))
        }
    }

    @Test func noPageNamesTheDevicesPaths() async throws {
        try await withWebDevice(books: [BookRecord(title: "Dune")]) { device in
            let (cookie, csrf) = try await device.pair()
            var pages: [HTTPResult] = []
            for path in ["/", "/library", "/books/1", "/review", "/queue", "/export"] {
                pages.append(try await device.get(path, cookie: cookie))
            }
            // The daemon is not running: the refusal must not name its socket.
            pages.append(try await device.post("/queue/retry-all", [("csrf", csrf)], cookie: cookie))
            pages.append(try await device.post("/shutter", [("csrf", csrf)], cookie: cookie))
            for page in pages {
                #expect(!page.text.contains(device.configuration.stateDirectory))
                #expect(!page.text.contains(device.configuration.controlSocket))
            }
            #expect(pages.last?.text.contains("The daemon does not answer") == true)
        }
    }

    @Test func requestsAreBounded() async throws {
        try await withWebDevice({ $0.limits.bodyBytes = 1024 }) { device in
            let large = try await device.post("/pair", [("code", String(repeating: "1", count: 2000))])
            #expect(large.status == 413)
            let header = try await device.request(
                "GET", "/pair", headers: [("X-Large", String(repeating: "a", count: 20_000))])
            #expect(header.status == 431 || header.status == 400)
        }
    }
}

@Suite struct WebConfigurationTests {
    @Test func theWebPageIsOffUnlessTurnedOn() throws {
        let defaults = ApplianceConfiguration()
        #expect(defaults.web.enabled == false)
        #expect(throws: ApplianceError.self) { try WebPairing.pair(configuration: defaults) }
        let on = try ConfigurationLoader.load(
            path: nil, environment: ["SWIFTWING_WEB_ENABLED": "true", "SWIFTWING_WEB_PORT": "8181"],
            defaultPath: "/nonexistent/swiftwing.toml")
        #expect(on.web.enabled && on.web.port == 8181)
    }

    @Test func badValuesNameTheKeyAndTheFix() throws {
        func problem(_ environment: [String: String]) -> ConfigurationError? {
            do {
                _ = try ConfigurationLoader.load(
                    path: nil, environment: environment, defaultPath: "/nonexistent/swiftwing.toml")
                return nil
            } catch {
                return error
            }
        }
        let address = try #require(problem(["SWIFTWING_WEB_ADDRESS": "kiosk.local"]))
        #expect(address.key == "web.address")
        #expect(address.description.contains("is not an IP address"))
        #expect(problem(["SWIFTWING_WEB_ADDRESS": "::"]) == nil)
        let port = try #require(problem(["SWIFTWING_WEB_PORT": "70000"]))
        #expect(port.key == "web.port")
        #expect(port.description.contains("1…65535"))
    }

    @Test func sha256MatchesTheStandardsVectors() {
        #expect(SHA256.hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(SHA256.hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(
            SHA256.hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")
                == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
    }

    @Test func formsDecodeAsBrowsersEncodeThem() {
        let fields = FormFields(parsing: "title=Dune%2C+%22the%22&authors=A%0D%0AB&empty=&isbn=978-0")
        #expect(fields["title"] == "Dune, \"the\"")
        #expect(fields["authors"] == "A\r\nB")
        #expect(fields["empty"] == "")
        #expect(FormFields(parsing: FormFields.encode("ä & b=c"))["ä & b=c"] == "")
        #expect(FormFields.decode(FormFields.encode("ä & b=c")) == "ä & b=c")
    }
}

/// The Library's tiles: a cover URL, else the book's spine cut from its scan's photo, else a plain tile.
@Suite struct SpineCoverTests {
    /// An 800x600 shelf photo, dark except for one bright spine at (200, 60), 160x480: the box below.
    static func shelfPhoto() throws -> [UInt8] {
        let frame = YUV420Frame(layout: YUV420Layout(width: 800, height: 600))
        let layout = frame.layout
        let bytes = frame.buffer.bytes
        for row in 0..<600 {
            for column in 0..<800 {
                let inside = (200..<360).contains(column) && (60..<540).contains(row)
                bytes[row * layout.lumaStride + column] = inside ? 235 : 16
            }
        }
        for offset in [layout.cbOffset, layout.crOffset] {
            for index in 0..<(layout.chromaStride * layout.chromaHeight) { bytes[offset + index] = 128 }
        }
        return try JPEGEncoder(quality: 90).encode(frame)
    }

    static let box = #"{"boundingBox":{"height":0.8,"width":0.2,"x":0.25,"y":0.1},"title":"Spine"}"#

    /// Puts `photo` in the spool under a queued scan whose row names `fileName` (the daemon's own name unless a
    /// test wants a hostile one) and returns the scan's id.
    static func queueScan(_ device: WebDevice, photo: [UInt8]?, fileName: String? = nil) throws -> UUID {
        let id = UUID()
        let state = StateDirectory(path: device.configuration.stateDirectory)
        var image = SpooledImage(fileName: SpoolDirectory.imageFileName(for: id), path: "", size: 1)
        if let photo { image = try SpoolDirectory(state).write(jpeg: photo, for: id) }
        if let fileName { image.fileName = fileName }
        try device.database.queue.enqueue(
            NewScan(
                id: id, pressedAt: .now(), pressedWallAt: device.clock.now, frameAt: nil, image: image, width: 800,
                height: 600))
        return id
    }

    @Test func theTileIsTheCoverURLElseTheSpineFromThePhotoElseTheTitle() async throws {
        try await withWebDevice { device in
            let (cookie, _) = try await device.pair()
            let scan = try Self.queueScan(device, photo: try Self.shelfPhoto())
            let library = device.database.library
            let spine = try library.insert(BookRecord(title: "Spine", scanID: scan, rawJSON: Self.box))
            let withURL = try library.insert(
                BookRecord(title: "Linked", coverURL: "https://covers.example/1.jpg", scanID: scan, rawJSON: Self.box))
            let plain = try library.insert(BookRecord(title: "Plain", scanID: scan, rawJSON: #"{"title":"Plain"}"#))
            let grid = try await device.get("/library/grid", cookie: cookie).text
            #expect(grid.contains(#"<img src="/books/\#(spine.id ?? 0)/cover" alt="" class="spine""#))
            #expect(grid.contains(#"<img src="https://covers.example/1.jpg" alt="" loading="lazy">"#))
            #expect(!grid.contains("/books/\(withURL.id ?? 0)/cover"))
            #expect(!grid.contains("/books/\(plain.id ?? 0)/cover"))
            #expect(grid.contains(#"<span class="plain" aria-hidden="true">Plain</span>"#))

            let answer = try await device.get("/books/\(spine.id ?? 0)/cover", cookie: cookie)
            #expect(answer.status == 200)
            #expect(answer.header("Content-Type") == "image/jpeg")
            #expect(answer.header("Cache-Control") == "private, max-age=86400")
            let tag = try #require(answer.header("ETag"))
            // The box is 160x480 pixels of the photo: a third as wide as tall, its long edge the tile's.
            let info = try JPEGInfo(answer.body)
            #expect(info.height == SpineCover.longEdge)
            #expect(abs(info.width - SpineCover.longEdge / 3) <= 2, "\(info)")
            // Only the bright spine is in it, not the dark shelf around it.
            let crop = try JPEGDecoder().decode(answer.body)
            let luma = crop.buffer.bytes
            let middle = luma[crop.height / 2 * crop.layout.lumaStride + crop.width / 2]
            #expect(middle > 220, "centre \(middle)")
            var sum = 0
            for row in 0..<crop.height {
                for column in 0..<crop.width { sum += Int(luma[row * crop.layout.lumaStride + column]) }
            }
            #expect(sum / (crop.width * crop.height) > 200)

            let again = try await device.request(
                "GET", "/books/\(spine.id ?? 0)/cover", headers: [("Cookie", cookie), ("If-None-Match", tag)])
            #expect(again.status == 304)
            #expect(again.body.isEmpty)
            #expect(try await device.get("/books/\(spine.id ?? 0)/cover").status == 303)
        }
    }

    @Test func theKeptSpineIsServedAfterThePhotoIsGone() async throws {
        try await withWebDevice { device in
            let (cookie, _) = try await device.pair()
            // The scan's photo was deleted when its books landed; the spine kept then is all there is.
            let scan = try Self.queueScan(device, photo: nil)
            let library = device.database.library
            let kept = try #require(try library.insert(BookRecord(title: "Kept", scanID: scan, rawJSON: Self.box)).id)
            let bare = try #require(try library.insert(BookRecord(title: "Bare", scanID: scan, rawJSON: Self.box)).id)
            let spine = try JPEGEncoder(quality: 80).encode(YUV420Frame(layout: YUV420Layout(width: 54, height: 320)))
            try device.database.saveBookCovers([BookCover(bookID: kept, jpeg: spine, width: 54, height: 320)])

            let grid = try await device.get("/library/grid", cookie: cookie).text
            #expect(grid.contains(#"<img src="/books/\#(kept)/cover" alt="" class="spine""#))
            #expect(!grid.contains("/books/\(bare)/cover"))
            let answer = try await device.get("/books/\(kept)/cover", cookie: cookie)
            #expect(answer.status == 200)
            #expect(answer.header("Content-Type") == "image/jpeg")
            #expect(answer.header("Cache-Control") == "private, max-age=86400")
            #expect(answer.body == spine)
            let tag = try #require(answer.header("ETag"))
            let again = try await device.request(
                "GET", "/books/\(kept)/cover", headers: [("Cookie", cookie), ("If-None-Match", tag)])
            #expect(again.status == 304)
            #expect(try await device.get("/books/\(bare)/cover", cookie: cookie).status == 404)

            _ = try library.delete(id: kept)
            #expect(try device.database.bookCover(id: kept) == nil)
            #expect(try await device.get("/books/\(kept)/cover", cookie: cookie).status == 404)
        }
    }

    @Test func undoingADeleteBringsTheBookBackWithItsKeptSpine() async throws {
        try await withWebDevice { device in
            let (cookie, csrf) = try await device.pair()
            // No photo in the spool: the kept spine is the only picture the book has.
            let scan = try Self.queueScan(device, photo: nil)
            let kept = try #require(
                try device.database.library.insert(BookRecord(title: "Kept", scanID: scan, rawJSON: Self.box)).id)
            let spine = try JPEGEncoder(quality: 80).encode(YUV420Frame(layout: YUV420Layout(width: 54, height: 320)))
            try device.database.saveBookCovers([BookCover(bookID: kept, jpeg: spine, width: 54, height: 320)])

            let deleted = try await device.post("/books/\(kept)/delete", [("csrf", csrf)], cookie: cookie)
            #expect(deleted.status == 303)
            #expect(try device.database.bookCover(id: kept) == nil)
            let location = try #require(deleted.header("Location"))
            let page = try await device.get(location, cookie: cookie).text
            let token = try #require(
                page.range(of: "name=\"token\" value=\"").map {
                    String(page[$0.upperBound...].prefix { $0 != "\"" })
                })
            let undone = try await device.post("/undo", [("csrf", csrf), ("token", token)], cookie: cookie)
            #expect(undone.header("Location") == "/books/\(kept)")

            #expect(
                try device.database.bookCover(id: kept) == BookCover(bookID: kept, jpeg: spine, width: 54, height: 320))
            let cover = try await device.get("/books/\(kept)/cover", cookie: cookie)
            #expect(cover.status == 200)
            #expect(cover.body == spine)
            let grid = try await device.get("/library/grid", cookie: cookie).text
            #expect(grid.contains(#"<img src="/books/\#(kept)/cover" alt="" class="spine""#))
        }
    }

    @Test func aCoverIsOnlyEverTheDevicesOwnPhotoOfThatBook() async throws {
        try await withWebDevice { device in
            let (cookie, _) = try await device.pair()
            let library = device.database.library
            // A scan row naming a file outside the spool (as a damaged database might): never read.
            let hostileScan = try Self.queueScan(device, photo: nil, fileName: "../state.lock")
            let hostile = try library.insert(BookRecord(title: "Hostile", scanID: hostileScan, rawJSON: Self.box))
            // A photo the spool no longer holds.
            let goneScan = try Self.queueScan(device, photo: nil)
            let gone = try library.insert(BookRecord(title: "Gone", scanID: goneScan, rawJSON: Self.box))
            for path in [
                "/books/\(hostile.id ?? 0)/cover", "/books/\(gone.id ?? 0)/cover", "/books/999/cover",
                "/books/-1/cover", "/books/..%2F..%2Fstate.lock/cover", "/books/%2Fetc%2Fpasswd/cover",
                "/books/1%00/cover", "/books/\(hostileScan.uuidString)/cover",
            ] {
                let answer = try await device.get(path, cookie: cookie)
                #expect(answer.status == 404, "\(path)")
                #expect(answer.header("Content-Type") != "image/jpeg", "\(path)")
            }
            let grid = try await device.get("/library/grid", cookie: cookie).text
            #expect(!grid.contains("/cover"))
        }
    }

    @Test func aBoundingBoxIsReadOnlyWhenItLiesOnThePhoto() {
        #expect(SpineCover.box(inRawJSON: Self.box) == SpineCover.Box(x: 0.25, y: 0.1, width: 0.2, height: 0.8))
        for json in [
            nil, "", "not json", #"{"boundingBox":null}"#, #"{"boundingBox":{"x":0.1,"y":0.1,"width":0,"height":1}}"#,
            #"{"boundingBox":{"x":1.2,"y":0.1,"width":0.1,"height":0.5}}"#,
            #"{"boundingBox":{"x":"a","y":0.1,"width":0.1,"height":0.5}}"#,
        ] {
            #expect(SpineCover.box(inRawJSON: json) == nil, "\(json ?? "nil")")
        }
    }
}
