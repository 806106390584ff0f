import ApplianceCore
import Foundation
import Hummingbird
import HummingbirdCore
import Imaging
import Logging
import Mustache
import NIOCore
import ServiceLifecycle
import Store
import Synchronization

/// What the Now page last read from the database, and the state of its files then.
struct LibrarySnapshot: Sendable {
    typealias Value = (LibraryReader.Counts, [ScanRecord], [BookRecord])

    let signature: [Int]
    let value: Value

    /// Size, modification time and inode of the database and its WAL.
    static func signature(of databasePath: String) -> [Int] {
        [databasePath, databasePath + "-wal"].flatMap { path -> [Int] in
            var info = stat()
            guard stat(path, &info) == 0 else { return [-1] }
            return [Int(info.st_size), info.st_mtim.tv_sec, info.st_mtim.tv_nsec, Int(info.st_ino)]
        }
    }
}

/// The request context: the session the access check found, and the form it read and checked.
public struct WebRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    var sessionToken: String?
    var form = FormFields()
    /// What wrong pairing codes count under: the peer's IPv4 address or IPv6 /64 (``PairingTries``).
    var client: String

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        client = PairingTries.key(for: source.channel.remoteAddress)
    }

    var csrf: String { sessionToken.map(Session.csrfToken(for:)) ?? "" }
}

/// The library in a browser: the routes, the pages and what they change.
///
/// It reads the daemon's database as a WAL reader, changes the library only through ``LibraryManagement`` (the
/// code behind `swiftwing library edit|delete|review`), asks the daemon for its status, presses, retries and
/// discards over the control socket, and decides who may do so with ``WebAccess``. The daemon knows nothing of
/// it: it may crash or stop without any effect on scanning.
public final class WebApp: Sendable {
    public let settings: WebSettings
    let clock: WebClock
    let logger: Logger
    let reader: LibraryReader
    let access: WebAccess
    let undo = UndoShelf()
    let templates: MustacheLibrary
    let openStreams = Atomic<Int>(0)
    /// `/events` requests answered, for the tests that wait until early-reset clients were handled.
    let eventRequests = Atomic<Int>(0)
    let snapshot = Mutex<LibrarySnapshot?>(nil)
    let pairingTries = PairingTries(
        wrongBeforeLock: WebAccess.wrongCodesBeforeLock, lockDuration: WebAccess.lockDuration)
    let hosts: HostCheck
    /// "None of these" searches through it; nil when the backend is not this machine's recognizer.
    let bookSearch: (any BookSearching)?
    /// Wrong codes from all addresses together that burn the code and lock pairing (``PairingTries``).
    static let wrongCodesAcrossAddresses = 20

    static let pageSize = 48

    public convenience init(settings: WebSettings, clock: WebClock = .system, logger: Logger) throws(ApplianceError) {
        try self.init(
            settings: settings, clock: clock, logger: logger,
            bookSearch: RecognizerBookSearch(backendURL: settings.configuration.backend.url))
    }

    /// `bookSearch`: where "none of these" searches (nil: no search, the book is typed).
    init(settings: WebSettings, clock: WebClock, logger: Logger, bookSearch: (any BookSearching)?)
        throws(ApplianceError)
    {
        self.settings = settings
        self.bookSearch = bookSearch
        self.clock = clock
        self.logger = logger
        let state = StateDirectory(path: settings.configuration.stateDirectory)
        reader = LibraryReader(stateDirectory: state)
        hosts = HostCheck(extra: [settings.address])
        do {
            access = try WebAccess.open(state)
        } catch {
            throw ApplianceError(error.description)
        }
        do {
            templates = try Templates.library()
        } catch {
            throw ApplianceError("a page template does not parse (\(error)): this build is broken, report it")
        }
    }

    /// The server, bounded as ``WebSettings/Limits`` says. `onRunning` gets the port it listens on.
    public func makeApplication(onRunning: @escaping @Sendable (Int) async -> Void = { _ in })
        -> some ApplicationProtocol
    {
        let limits = settings.limits
        let decoder = HTTP1Channel.Configuration.DecoderConfiguration(
            maxHeaderFieldSize: limits.headerFieldBytes, maxHeaderListSize: limits.headerListBytes,
            maxHeaderFieldCount: limits.headerFieldCount)
        return Application(
            router: makeRouter(),
            server: .http1(
                configuration: .init(idleTimeout: .seconds(limits.idleSeconds), httpDecoderConfiguration: decoder)),
            configuration: .init(
                address: .hostname(settings.address, port: settings.port), serverName: nil, backlog: 64,
                availableConnectionsDelegate: MaximumAvailableConnections(limits.connections)),
            onServerRunning: { channel in await onRunning(channel.localAddress?.port ?? 0) },
            logger: logger)
    }

    func makeRouter() -> Router<WebRequestContext> {
        let router = Router(context: WebRequestContext.self)
        router.middlewares.add(SecurityHeadersMiddleware(app: self))
        router.middlewares.add(AccessMiddleware(app: self))
        router.get("/static/app.css") { _, _ in Self.asset(Templates.styleSheet, type: "text/css; charset=utf-8") }
        router.get("/static/app.js") { _, _ in Self.asset(Templates.script, type: "text/javascript; charset=utf-8") }
        router.get("/static/mono.ttf") { _, _ in try await Self.monospaceFont() }
        router.get("/pair") { request, _ in self.pairPage(request) }
        router.post("/pair") { _, context in try await self.pair(context) }
        router.get("/") { _, context in await self.nowPage(context) }
        router.get("/events") { _, _ in self.events() }
        router.post("/shutter") { _, context in await self.shutter(context) }
        router.get("/library") { request, context in try await self.libraryPage(request, context) }
        router.get("/library/grid") { request, context in try await self.libraryGrid(request, context) }
        router.get("/books/:id") { request, context in
            let replaced = FormFields(parsing: request.uri.query ?? "")["replaced"] != nil
            return try await self.bookPage(context, notice: replaced ? "Changed to the book you picked." : nil)
        }
        router.get("/books/:id/cover") { request, context in try await self.spineCover(request, context) }
        router.post("/books/:id/edit") { _, context in try await self.edit(context) }
        router.post("/books/:id/approve") { _, context in try await self.approve(context) }
        router.post("/books/:id/replace") { _, context in try await self.replaceBook(context) }
        router.post("/books/:id/delete") { _, context in try await self.delete(context) }
        router.post("/undo") { _, context in try await self.undoDelete(context) }
        router.get("/review") { request, context in try await self.reviewPage(request, context) }
        addSpineReviewRoutes(to: router)
        router.get("/queue") { request, context in try await self.queuePage(request, context) }
        router.post("/queue/retry-all") { _, context in await self.queueAction(context, .retry, all: true) }
        router.post("/queue/:id/retry") { _, context in await self.queueAction(context, .retry, all: false) }
        router.post("/queue/:id/discard") { _, context in await self.queueAction(context, .discard, all: false) }
        router.get("/scans/:id/thumbnail") { _, context in try await self.thumbnail(context) }
        router.get("/export") { _, context in try await self.exportPage(context) }
        router.get("/export/swiftwing.csv") { _, _ in try await self.exportFile(.swiftwing) }
        router.get("/export/goodreads.csv") { _, _ in try await self.exportFile(.goodreads) }
        return router
    }

    // MARK: Rendering

    func render(_ template: String, _ object: Any) -> String {
        templates.render(object, withTemplate: template) ?? ""
    }

    func page(
        _ title: String, current: String?, _ template: String, _ object: Any, status: HTTPResponse.Status = .ok,
        paired: Bool = true
    ) -> Response {
        let body = render(template, object)
        let html = render(
            "layout",
            LayoutModel(title: title, showNav: paired, nav: paired ? NavItem.all(current: current) : [], body: body))
        return Self.html(html, status: status)
    }

    static func html(_ text: String, status: HTTPResponse.Status = .ok) -> Response {
        Response(
            status: status, headers: [.contentType: "text/html; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(string: text)))
    }

    static func asset(_ text: String, type: String) -> Response {
        Response(
            status: .ok, headers: [.contentType: type, .cacheControl: "max-age=3600"],
            body: .init(byteBuffer: ByteBuffer(string: text)))
    }

    /// The kiosk's JetBrains Mono (Debian's fonts-jetbrains-mono, which the panel draws with too), for ISBNs and ids.
    static let monospaceFontPath = "/usr/share/fonts/truetype/jetbrains-mono/JetBrainsMono-Regular.ttf"

    static func monospaceFont() async throws -> Response {
        let bytes = try? await blocking { FileManager.default.contents(atPath: monospaceFontPath).map { Array($0) } }
        guard let bytes = bytes ?? nil else { return Response(status: .notFound) }
        return Response(
            status: .ok, headers: [.contentType: "font/ttf", .cacheControl: "max-age=86400"],
            body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
    }

    static func redirect(_ location: String) -> Response {
        Response(status: .seeOther, headers: [.location: location])
    }

    func message(_ heading: String, _ text: String, status: HTTPResponse.Status, paired: Bool = true) -> Response {
        page(
            heading, current: nil, "message", MessageModel(heading: heading, text: publicText(text)), status: status,
            paired: paired)
    }

    /// An error's words without the device's paths (the state directory, the control socket): a page must not
    /// show where things are kept.
    func publicText(_ text: String) -> String {
        var text = text
        let configuration = settings.configuration
        for (path, name) in [
            (configuration.controlSocket, "the daemon's control socket"),
            (configuration.stateDirectory, "the state directory"),
        ] where !path.isEmpty {
            text = text.replacingOccurrences(of: path, with: name)
        }
        return text
    }

    // MARK: Pairing

    /// The pairing form. `?code=` (the panel's QR code carries it) fills the code in when it is 6 digits and is
    /// ignored otherwise. Opening the page never pairs and never counts as an attempt: only pressing Pair (the POST)
    /// does, so a link preview or a prefetch of the address can neither pair a browser nor use up the five tries.
    func pairPage(_ request: Request) -> Response {
        let code = FormFields(parsing: request.uri.query ?? "")["code"].flatMap(Self.pairingCode)
        return page("Pair", current: nil, "pair", PairModel(problem: nil, code: code), paired: false)
    }

    /// The 6 digits of a code as typed (spaces dropped), or nil when it is not one.
    static func pairingCode(_ text: String) -> String? {
        let code = text.filter { !$0.isWhitespace }
        return code.count == 6 && code.allSatisfy({ $0.isASCII && $0.isNumber }) ? code : nil
    }

    func pair(_ context: WebRequestContext) async throws -> Response {
        guard let code = Self.pairingCode(context.form["code"] ?? "") else {
            return page(
                "Pair", current: nil, "pair", PairModel(problem: "The code is the 6 digits the device shows."),
                status: .badRequest, paired: false)
        }
        let token = Session.newToken()
        let now = clock.now()
        let access = self.access
        let client = context.client
        if let until = pairingTries.lockedUntil(client, now: now) {
            return page(
                "Pair", current: nil, "pair", PairModel(problem: Self.lockedText(until)), status: .forbidden,
                paired: false)
        }
        let result = try await blocking {
            try access.redeem(
                code: code, tokenHash: Session.storedHash(of: token), now: now,
                lockAfter: Self.wrongCodesAcrossAddresses)
        }
        let problem: String
        switch result {
        case .paired:
            pairingTries.paired(client)
            logger.notice("web: a browser paired")
            var response = Self.redirect("/")
            response.headers[.setCookie] = Session.cookie(token, maxAge: Int(WebAccess.sessionLifetime))
            return response
        case .noCode:
            problem = "No code is waiting, or it expired (a code works 5 minutes): make a new one on the device."
        case .wrong:
            // This address's tries, not everyone's: a neighbour's wrong codes never lock another browser.
            switch pairingTries.wrong(client, now: now) {
            case .wrong(let remaining):
                problem =
                    "That is not the code. \(remaining) more wrong \(remaining == 1 ? "code locks" : "codes lock") "
                    + "pairing from this browser for 5 minutes."
            case .locked(let until):
                logger.warning("web: pairing locked for one address after wrong codes")
                problem = Self.lockedText(until)
            }
        case .locked(let until):
            _ = pairingTries.wrong(client, now: now)
            logger.warning("web: pairing locked after wrong codes from several addresses")
            problem =
                "Pairing is locked after \(Self.wrongCodesAcrossAddresses) wrong codes, until "
                + "\(UTCDateParts(until).iso8601). Then make a new code on the device."
        }
        return page("Pair", current: nil, "pair", PairModel(problem: problem), status: .forbidden, paired: false)
    }

    static func lockedText(_ until: Date) -> String {
        "Pairing is locked for this browser after \(WebAccess.wrongCodesBeforeLock) wrong codes, until "
            + "\(UTCDateParts(until).iso8601). Then try again with the code on the device."
    }

    // MARK: Now

    func statusModel(csrf: String) async -> StatusModel {
        let socket = settings.configuration.controlSocket
        let daemon = try? await blocking { try ControlClient.send(ControlRequest(command: .status), to: socket).status }
        let library = try? await librarySnapshot()
        let counts = library?.0 ?? LibraryReader.Counts()
        let state: (String, String)
        var connectivity: String
        var countdown: String?
        if let daemon = daemon ?? nil {
            switch daemon.cameraAvailability {
            case "missing": state = ("NO CAMERA", "problem")
            case "starting", "reopening": state = ("CAMERA STARTING", "busy")
            default: state = daemon.processing > 0 ? ("PROCESSING", "busy") : ("READY", "ready")
            }
            switch (daemon.uplink?.connectivity, daemon.uplink?.apiKeyMissing) {
            case (nil, _): connectivity = "NO BACKEND: scans wait on the device"
            case (_, true?): connectivity = "NO API KEY: scans wait on the device"
            case ("online", _): connectivity = "ONLINE"
            case ("offline", _): connectivity = "OFFLINE: scans wait and go out when the backend answers"
            case (let paused?, _) where paused == "rate-limited" || paused == "busy":
                connectivity = paused == "busy" ? "BACKEND BUSY: uploads resume in" : "RATE LIMITED: uploads resume in"
                let seconds = daemon.uplink?.rateLimitRemainingSeconds ?? 0
                countdown = String(format: "%d:%02d", seconds / 60, seconds % 60)
            case ("unauthorized", _): connectivity = "API KEY REFUSED: install a new key on the device"
            default: connectivity = "CONNECTING"
            }
        } else {
            state = ("DAEMON STOPPED", "problem")
            connectivity =
                "The daemon does not answer: scanning is off until it runs again (systemctl status swiftwing)"
        }
        let camera = (daemon ?? nil)?.cameraAvailability
        return StatusModel(
            state: state.0, stateClass: state.1, connectivity: connectivity, countdown: countdown, camera: camera,
            counts: CountsModel(
                active: counts.active, stuck: counts.stuck, books: counts.books, needsReview: counts.needsReview,
                spinesToCheck: counts.spinesToCheck),
            scans: (library?.1 ?? []).map { scanRow($0, csrf: csrf) },
            books: (library?.2 ?? []).map {
                BookLine(
                    id: $0.id ?? 0, title: $0.title.isEmpty ? ($0.isbn13 ?? "(no title yet)") : $0.title,
                    authors: $0.authors.isEmpty ? nil : $0.authors.joined(separator: ", "))
            })
    }

    /// The counts, latest scans and latest books, read again only when the database's files changed: every commit
    /// of the daemon changes the WAL's size or time, a checkpoint the database file's. The live status looks often;
    /// with 10,000 books a read costs milliseconds, a look at two files microseconds.
    func librarySnapshot() async throws -> LibrarySnapshot.Value {
        try await blocking {
            let reader = self.reader
            let signature = LibrarySnapshot.signature(of: reader.stateDirectory.databasePath)
            if let cached = self.snapshot.withLock({ $0 }), cached.signature == signature { return cached.value }
            let value = (try reader.counts(), try reader.scans(limit: 5), try reader.latestBooks(5))
            self.snapshot.withLock { $0 = LibrarySnapshot(signature: signature, value: value) }
            return value
        }
    }

    func scanRow(_ scan: ScanRecord, csrf: String) -> ScanRow {
        ScanRow(
            id: scan.idString, shortID: String(scan.idString.prefix(8)), stateLabel: scan.state.label,
            stateClass: scan.state.rawValue, when: UTCDateParts(scan.createdAt).iso8601,
            reason: scan.lastError.map(publicText),
            thumbnail: scan.thumbnailPath == nil ? nil : "/scans/\(scan.idString)/thumbnail",
            actionable: scan.state == .failed || scan.state == .needsAttention, csrf: csrf)
    }

    func nowPage(_ context: WebRequestContext, notice: String? = nil, problem: String? = nil) async -> Response {
        let model = NowModel(
            status: await statusModel(csrf: context.csrf), shutter: settings.configuration.web.shutterButton,
            csrf: context.csrf, notice: notice, problem: problem)
        return page("Now", current: "/", "now", model)
    }

    func shutter(_ context: WebRequestContext) async -> Response {
        guard settings.configuration.web.shutterButton else {
            return message(
                "Shutter", "The shutter button is off in this device's configuration ([web] shutter_button).",
                status: .forbidden)
        }
        let socket = settings.configuration.controlSocket
        do {
            let reply = try await blocking { try ControlClient.send(ControlRequest(command: .shutter), to: socket) }
            if reply.ok {
                return await nowPage(
                    context, notice: "Pressed: scan \(reply.scanId.map { String($0.prefix(8)) } ?? "") is queued.")
            }
            return await nowPage(context, problem: publicText(reply.error ?? "the daemon refused the press"))
        } catch {
            return await nowPage(context, problem: daemonProblem(error))
        }
    }

    func daemonProblem(_ error: any Error) -> String {
        if let error = error as? ControlSocketError, case .daemonNotRunning = error {
            return "The daemon does not answer: start it on the device (systemctl start swiftwing)."
        }
        return publicText("\(error)")
    }

    /// The live part of the Now page as server-sent events: the page gets a new `status` event whenever what it
    /// shows changes (the web process looks every ``WebSettings/statusIntervalMilliseconds``).
    func events() -> Response {
        defer { eventRequests.wrappingAdd(1, ordering: .relaxed) }
        let limits = settings.limits
        guard openStreams.wrappingAdd(1, ordering: .relaxed).newValue <= limits.eventStreams else {
            openStreams.wrappingSubtract(1, ordering: .relaxed)
            return Response(status: .serviceUnavailable, headers: [.retryAfter: "10"])
        }
        // Given back when the body ends, or when the response is dropped unsent (a client that reset before
        // the head went out: the body never runs); a `defer` inside the body alone leaked the place then.
        let slot = EventStreamSlot(self)
        let interval = settings.statusIntervalMilliseconds
        let body = ResponseBody { writer in
            defer { slot.giveBack() }
            let stopping = Atomic<Bool>(false)
            try await withGracefulShutdownHandler {
                try await writer.write(ByteBuffer(string: "retry: 3000\n\n"))
                var last: StatusModel?
                var quiet = 0
                let end = ContinuousClock.now.advanced(by: .seconds(limits.eventStreamSeconds))
                while ContinuousClock.now < end, !stopping.load(ordering: .relaxed) {
                    let model = await self.statusModel(csrf: "")
                    if model != last {
                        let lines = self.render("now-status", model).split(
                            separator: "\n", omittingEmptySubsequences: false)
                        let event = "event: status\n" + lines.map { "data: " + $0 }.joined(separator: "\n") + "\n\n"
                        try await writer.write(ByteBuffer(string: event))
                        last = model
                        quiet = 0
                    } else {
                        quiet += 1
                        if Int64(quiet) * interval >= 15_000 {
                            try await writer.write(ByteBuffer(string: ": still here\n\n"))
                            quiet = 0
                        }
                    }
                    try await Task.sleep(for: .milliseconds(interval))
                }
            } onGracefulShutdown: {
                stopping.store(true, ordering: .relaxed)
            }
            try await writer.finish(nil)
        }
        return Response(
            status: .ok, headers: [.contentType: "text/event-stream", .cacheControl: "no-store"], body: body)
    }

    // MARK: Library

    func libraryModel(_ request: Request, _ context: WebRequestContext) async throws -> LibraryModel {
        let query = FormFields(parsing: request.uri.query ?? "")
        let text = String((query["q"] ?? "").prefix(200))
        let sort = query["sort"].flatMap(LibraryReader.Sort.init(rawValue:))
        let pageNumber = min(max(Int(query["page"] ?? "") ?? 0, 0), 100_000)
        let reader = self.reader
        let spool = self.spool
        let (found, spines) = try await blocking {
            let found = try reader.page(query: text, sort: sort, page: pageNumber, pageSize: Self.pageSize)
            let tiles = found.books.filter { BookTile.safeCover($0.coverURL) == nil }
            let kept: Set<Int64> = (try? reader.booksWithCovers(among: tiles.compactMap(\.id))) ?? []
            let spines = Set(
                tiles.compactMap { book -> Int64? in
                    guard let id = book.id else { return nil }
                    return kept.contains(id) || (try? Self.spinePhoto(of: book, reader, spool)) != nil ? id : nil
                })
            return (found, spines)
        }
        func link(_ page: Int) -> String {
            var parts: [String] = []
            if !text.isEmpty { parts.append("q=" + FormFields.encode(text)) }
            if let sort { parts.append("sort=" + sort.rawValue) }
            parts.append("page=\(page)")
            return "/library?" + parts.joined(separator: "&")
        }
        let shown = found.books.count
        let first = pageNumber * Self.pageSize
        let summary: String
        if found.total == 0 {
            summary = text.isEmpty ? "No books yet: press the shutter on the device." : "No book matches “\(text)”."
        } else {
            let range = shown == 0 ? "none" : "\(first + 1)–\(first + shown)"
            summary =
                text.isEmpty
                ? "\(found.total) books, \(range) shown." : "\(found.total) books match “\(text)”, \(range) shown."
        }
        let grid = GridModel(
            summary: summary, books: found.books.map { BookTile($0, spinePhoto: $0.id.map(spines.contains) ?? false) },
            previous: pageNumber > 0 ? link(pageNumber - 1) : nil,
            next: found.hasMore ? link(pageNumber + 1) : nil)
        let shownOrder = sort ?? (text.isEmpty ? .added : .relevance)
        let orders: [(LibraryReader.Sort, String)] = [
            (.relevance, "Best match"), (.added, "Newest first"), (.title, "Title"), (.author, "Author"),
        ]
        let sorts = orders.map { SortOption(value: $0.0.rawValue, label: $0.1, selected: $0.0 == shownOrder) }
        var offer: UndoOffer?
        if let token = query["deleted"], let book = undo.peek(token, now: clock.now()) {
            offer = UndoOffer(
                token: token, title: book.title.isEmpty ? (book.isbn13 ?? "a book") : book.title, csrf: context.csrf)
        }
        return LibraryModel(query: text, sorts: sorts, grid: grid, undo: offer)
    }

    func libraryPage(_ request: Request, _ context: WebRequestContext) async throws -> Response {
        do {
            return page("Library", current: "/library", "library", try await libraryModel(request, context))
        } catch {
            return message("Library", "\(error)", status: .serviceUnavailable)
        }
    }

    /// Only the grid, for search as you type.
    func libraryGrid(_ request: Request, _ context: WebRequestContext) async throws -> Response {
        do {
            return Self.html(render("grid", try await libraryModel(request, context).grid))
        } catch {
            return Self.html(
                render("message", MessageModel(heading: "", text: publicText("\(error)"))), status: .serviceUnavailable)
        }
    }

    // MARK: Book

    static func bookID(_ context: WebRequestContext) -> Int64? {
        context.parameters.get("id").flatMap { Int64($0) }
    }

    func bookPage(_ context: WebRequestContext, notice: String? = nil, problem: String? = nil) async throws -> Response
    {
        guard let id = Self.bookID(context) else { return message("Book", "No such book.", status: .notFound) }
        let reader = self.reader
        let book: BookRecord?
        do {
            book = try await blocking { try reader.book(id: id) }
        } catch {
            return message("Book", "\(error)", status: .serviceUnavailable)
        }
        guard let book else {
            return message("Book", "No book has id \(id): it may have been deleted.", status: .notFound)
        }
        var model = BookModel(book, csrf: context.csrf)
        model.notice = notice
        model.problem = problem
        return page(
            model.heading, current: "/library", "book", model, status: problem == nil ? .ok : .unprocessableContent)
    }

    func edit(_ context: WebRequestContext) async throws -> Response {
        guard let id = Self.bookID(context) else { return message("Book", "No such book.", status: .notFound) }
        let reader = self.reader
        guard let book = try? await blocking({ try reader.book(id: id) }) else {
            return message("Book", "No book has id \(id): it may have been deleted.", status: .notFound)
        }
        let form = context.form
        let typedTitle = form["title"] ?? book.title
        let typedAuthors = (form["authors"] ?? "").split(whereSeparator: \.isNewline)
            .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        let typedISBN = (form["isbn"] ?? "").trimmingCharacters(in: .whitespaces)
        // Only what the person changed is passed on, as `library edit` passes only the options given.
        let title = typedTitle == book.title ? nil : typedTitle
        let authors = typedAuthors.isEmpty || typedAuthors == book.authors ? nil : typedAuthors
        let known = [book.isbn13, book.isbn10].compactMap { $0 }
        let isbn = typedISBN.isEmpty || known.contains(typedISBN.filter { $0 != "-" && $0 != " " }) ? nil : typedISBN
        guard title != nil || authors != nil || isbn != nil else {
            return try await bookPage(context, notice: "Nothing changed.")
        }
        let configuration = settings.configuration
        do {
            _ = try await blocking {
                try LibraryManagement.edit(
                    id: id, title: title, authors: authors, isbn: isbn, keepForReview: false,
                    configuration: configuration)
            }
        } catch {
            var model = BookModel(book, csrf: context.csrf)
            model.form = BookForm(title: typedTitle, authors: typedAuthors.joined(separator: "\n"), isbn: typedISBN)
            model.problem = publicText("\(error)")
            return page(model.heading, current: "/library", "book", model, status: .unprocessableContent)
        }
        return Self.redirect("/books/\(id)?saved=1")
    }

    func approve(_ context: WebRequestContext) async throws -> Response {
        guard let id = Self.bookID(context) else { return message("Book", "No such book.", status: .notFound) }
        let configuration = settings.configuration
        do {
            _ = try await blocking { try LibraryManagement.approve(id: id, configuration: configuration) }
        } catch {
            return message("Approve", "\(error)", status: .unprocessableContent)
        }
        return Self.redirect(context.form["back"] == "review" ? "/review?approved=\(id)" : "/books/\(id)")
    }

    func delete(_ context: WebRequestContext) async throws -> Response {
        guard let id = Self.bookID(context) else { return message("Book", "No such book.", status: .notFound) }
        let configuration = settings.configuration
        let deleted: DeletedBook
        do {
            deleted = try await blocking {
                try LibraryManagement.deleteKeepingCover(id: id, configuration: configuration)
            }
        } catch {
            return message("Delete", "\(error)", status: .unprocessableContent)
        }
        let token = undo.keep(deleted, now: clock.now())
        return Self.redirect("/library?deleted=\(token)")
    }

    func undoDelete(_ context: WebRequestContext) async throws -> Response {
        let now = clock.now()
        guard let token = context.form["token"], let deleted = undo.take(token, now: now) else {
            return message(
                "Undo", "There is nothing to undo any more (a deletion can be undone for 15 minutes).",
                status: .gone)
        }
        let configuration = settings.configuration
        let reader = self.reader
        do {
            let restored = try await blocking { try LibraryManagement.restore(deleted, configuration: configuration) }
            return Self.redirect("/books/\(restored.id ?? 0)")
        } catch {
            // Offered again only while the book is still out: when it is back without its picture, a second
            // undo could only fail on the book's own id.
            let id = deleted.book.id
            let isBack = (try? await blocking { try id.flatMap { try reader.book(id: $0) } != nil }) ?? false
            if !isBack { undo.putBack(deleted, token: token, now: now) }
            return message("Undo", "\(error)", status: .conflict)
        }
    }

    // MARK: Review, queue, export

    /// Books kept for review shown per page (a library of thousands of unsure books stays one quick page).
    static let reviewBooksPerPage = 20

    /// The spines to check (one tap each), then the books kept for review.
    func reviewPage(_ request: Request, _ context: WebRequestContext) async throws -> Response {
        let query = FormFields(parsing: request.uri.query ?? "")
        let pageNumber = min(max(Int(query["page"] ?? "") ?? 0, 0), 100_000)
        let bookPage = min(max(Int(query["books"] ?? "") ?? 0, 0), 100_000)
        let reader = self.reader
        let books: [BookRecord]
        let booksTotal: Int
        let spines: SpineListModel
        do {
            (books, booksTotal) = try await blocking {
                try reader.reviewList(limit: Self.reviewBooksPerPage, offset: bookPage * Self.reviewBooksPerPage)
            }
            spines = try await spineList(page: pageNumber, csrf: context.csrf)
        } catch {
            return message("Review", "\(error)", status: .serviceUnavailable)
        }
        let csrf = context.csrf
        let rows = books.map {
            ReviewRow(
                id: $0.id ?? 0, title: $0.title.isEmpty ? "(no title yet)" : $0.title,
                authors: $0.authors.joined(separator: ", "), isbn: $0.isbn13 ?? $0.isbn10 ?? "",
                reason: $0.reviewReason ?? LibraryReport.lowConfidence($0), csrf: csrf)
        }
        var notice: String?
        if let approved = query["approved"].flatMap({ Int64($0) }) {
            notice = "Approved book \(approved)."
        } else if let picked = query["picked"].flatMap({ Int64($0) }) {
            let title = (try? await blocking { try reader.book(id: picked)?.title }) ?? nil
            notice = title.map { "Added “\($0)” to the library." } ?? "Added book \(picked) to the library."
        } else if let dismissed = query["dismissed"].flatMap({ Int64($0) }) {
            notice = "Spine \(dismissed) is not a book: it left the list."
        }
        let first = bookPage * Self.reviewBooksPerPage
        let booksSummary =
            booksTotal == 0
            ? nil
            : "\(booksTotal) book\(booksTotal == 1 ? "" : "s") to review"
                + (booksTotal > rows.count ? ", \(first + 1)–\(first + rows.count) shown." : ".")
        return page(
            "Review", current: "/review", "review",
            ReviewModel(
                books: rows, booksSummary: booksSummary, spines: spines, notice: notice,
                previousBooks: bookPage > 0 ? "/review?books=\(bookPage - 1)" : nil,
                nextBooks: first + rows.count < booksTotal ? "/review?books=\(bookPage + 1)" : nil))
    }

    func queuePage(_ request: Request, _ context: WebRequestContext, notice: String? = nil, problem: String? = nil)
        async throws -> Response
    {
        let reader = self.reader
        let scans: [ScanRecord]
        do {
            scans = try await blocking { try reader.scans(limit: 200) }
        } catch {
            return message("Queue", "\(error)", status: .serviceUnavailable)
        }
        let rows = scans.map { scanRow($0, csrf: context.csrf) }
        let query = FormFields(parsing: request.uri.query ?? "")
        let model = QueueModel(
            scans: rows, anyFailed: rows.contains { $0.stateClass == ScanState.failed.rawValue }, csrf: context.csrf,
            notice: notice ?? query["done"], problem: problem)
        return page("Queue", current: "/queue", "queue", model)
    }

    func queueAction(_ context: WebRequestContext, _ command: ControlRequest.Command, all: Bool) async -> Response {
        var request = ControlRequest(command: command)
        if all {
            request.all = true
        } else {
            guard let id = context.parameters.get("id"), UUID(uuidString: id) != nil else {
                return message("Queue", "That is not a scan id.", status: .notFound)
            }
            request.scanId = id
        }
        let socket = settings.configuration.controlSocket
        let outcome: String
        let sent = request
        do {
            let reply = try await blocking { try ControlClient.send(sent, to: socket) }
            guard reply.ok else {
                return message("Queue", reply.error ?? "the daemon refused", status: .unprocessableContent)
            }
            switch (command, all) {
            case (.retry, true): outcome = "Queued again: \(reply.scanIds?.count ?? 0) scans."
            case (.retry, false): outcome = "Scan \(request.scanId?.prefix(8) ?? "") is queued again."
            default: outcome = "Scan \(request.scanId?.prefix(8) ?? "") is discarded."
            }
        } catch {
            return message("Queue", daemonProblem(error), status: .serviceUnavailable)
        }
        return Self.redirect("/queue?done=" + FormFields.encode(outcome))
    }

    /// A scan's thumbnail, read from the spool under the file name the database holds (never a name from the request).
    func thumbnail(_ context: WebRequestContext) async throws -> Response {
        guard let text = context.parameters.get("id"), let id = UUID(uuidString: text) else {
            return Response(status: .notFound)
        }
        let reader = self.reader
        let spool = SpoolDirectory(StateDirectory(path: settings.configuration.stateDirectory))
        let bytes = try? await blocking { () -> [UInt8]? in
            guard let name = try reader.scan(id: id)?.thumbnailPath, !name.contains("/"), !name.hasPrefix(".") else {
                return nil
            }
            return FileManager.default.contents(atPath: spool.path(of: name)).map { Array($0) }
        }
        guard let bytes = bytes ?? nil else { return Response(status: .notFound) }
        return Response(
            status: .ok, headers: [.contentType: "image/jpeg", .cacheControl: "private, max-age=3600"],
            body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
    }

    var spool: SpoolDirectory { SpoolDirectory(StateDirectory(path: settings.configuration.stateDirectory)) }

    /// The path of the photo a book was found on, and where on it: only when the book has a bounding box and the
    /// photo is still in the spool. The file name is the one the queue row holds, never one from a request.
    static func spinePhoto(of book: BookRecord, _ reader: LibraryReader, _ spool: SpoolDirectory) throws
        -> (path: String, box: SpineCover.Box)?
    {
        guard let scanID = book.scanID, let box = SpineCover.box(inRawJSON: book.rawJSON),
            let name = try reader.scan(id: scanID)?.imagePath, !name.isEmpty, !name.contains("/"), !name.hasPrefix(".")
        else { return nil }
        let path = spool.path(of: name)
        return FileManager.default.fileExists(atPath: path) ? (path, box) : nil
    }

    /// A book's spine, for a tile without a cover URL: the one the daemon kept when the book landed, else cut from
    /// its scan's photo while that is still in the spool. The book's id is the only thing read from the request;
    /// the photo is the one its scan row names, in the spool. A kept spine never changes and a cut one changes only
    /// when the book does, so browsers keep it and ask again with its tag.
    func spineCover(_ request: Request, _ context: WebRequestContext) async throws -> Response {
        guard let id = Self.bookID(context) else { return Response(status: .notFound) }
        let reader = self.reader
        let spool = self.spool
        if let kept = (try? await blocking { try reader.cover(id: id) }) ?? nil {
            let tag = "\"\(id)-kept\""
            var headers: HTTPFields = [.cacheControl: "private, max-age=86400", .eTag: tag]
            if request.headers[.ifNoneMatch] == tag { return Response(status: .notModified, headers: headers) }
            headers[.contentType] = "image/jpeg"
            return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: kept.jpeg)))
        }
        let found = try? await blocking { () -> (BookRecord, String, SpineCover.Box)? in
            guard let book = try reader.book(id: id), let photo = try Self.spinePhoto(of: book, reader, spool) else {
                return nil
            }
            return (book, photo.path, photo.box)
        }
        guard let (book, path, box) = found ?? nil else { return Response(status: .notFound) }
        let tag =
            "\"\(id)-\(book.scanID?.uuidString.lowercased() ?? "")-\(Int64(book.updatedAt.timeIntervalSince1970))\""
        let caching: HTTPFields = [.cacheControl: "private, max-age=86400", .eTag: tag]
        if request.headers[.ifNoneMatch] == tag { return Response(status: .notModified, headers: caching) }
        let jpeg: [UInt8]
        do {
            jpeg = try await blocking {
                guard let photo = FileManager.default.contents(atPath: path) else {
                    throw ImagingError.unreadableFile(path: path, reason: "gone from the spool")
                }
                return try SpineCover.jpeg(photo: Array(photo), box: box, source: "the photo of scan \(id)")
            }
        } catch {
            logger.warning(
                "web: no spine cover for a book", metadata: ["book": "\(id)", "error": "\(publicText("\(error)"))"])
            return Response(status: .notFound)
        }
        var headers = caching
        headers[.contentType] = "image/jpeg"
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: jpeg)))
    }

    func exportPage(_ context: WebRequestContext) async throws -> Response {
        let reader = self.reader
        let count = (try? await blocking { try reader.counts().books }) ?? 0
        return page("Export", current: "/export", "export", ExportModel(books: count))
    }

    /// The file `swiftwing export` writes to a stick, made by the same code, as a download.
    func exportFile(_ format: ExportFormat) async throws -> Response {
        let reader = self.reader
        let bytes: [UInt8]
        do {
            bytes = try await blocking {
                LibraryCSV.encode(try LibraryExport(library: try reader.database().library).books(), format: format)
            }
        } catch {
            return message("Export", "\(error)", status: .serviceUnavailable)
        }
        let name = format.fileName(day: LibraryExport.day(clock.now()))
        return Response(
            status: .ok,
            headers: [
                .contentType: "text/csv; charset=utf-8", .contentDisposition: "attachment; filename=\"\(name)\"",
            ],
            body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
    }
}

/// One place among ``WebSettings/Limits/eventStreams``: given back once, by the body or when dropped.
final class EventStreamSlot: Sendable {
    let app: WebApp
    let given = Atomic<Bool>(false)

    init(_ app: WebApp) {
        self.app = app
    }

    func giveBack() {
        if !given.exchange(true, ordering: .relaxed) { app.openStreams.wrappingSubtract(1, ordering: .relaxed) }
    }

    deinit { giveBack() }
}
