import ApplianceCore
import Foundation
import Hummingbird
import NIOCore
import Store

/// The spines read but not identified (docs/protocol.md §6), reviewed on a phone: each with its picture, the text
/// read and its candidates as buttons, so one tap lands the book. The changes go through ``SpineReview``, the code
/// behind `swiftwing review`, so the web and the CLI cannot disagree.
extension WebApp {
    /// Spines shown per review page: a page stays quick to load on a phone with hundreds waiting.
    static let spinesPerPage = 20

    func addSpineReviewRoutes(to router: Router<WebRequestContext>) {
        router.get("/spines/:id") { request, context in
            try await self.spinePage(context, query: FormFields(parsing: request.uri.query ?? "")["q"])
        }
        router.get("/spines/:id/picture") { request, context in try await self.spinePicture(request, context) }
        router.post("/spines/:id/pick") { _, context in try await self.pickSpine(context) }
        router.post("/spines/:id/dismiss") { _, context in try await self.dismissSpine(context) }
    }

    static func spineID(_ context: WebRequestContext) -> Int64? {
        context.parameters.get("id").flatMap { Int64($0) }
    }

    /// One page of spines to check and how many wait in all.
    func spinesToCheck(page: Int) async throws -> (spines: [SpineToCheck], total: Int) {
        let reader = self.reader
        return try await blocking {
            let database = try reader.database()
            let total = try database.spinesToCheckCount()
            let spines = try database.spinesToCheck(limit: Self.spinesPerPage, offset: page * Self.spinesPerPage)
            return (spines, total)
        }
    }

    /// The spine section of the review page, `page` counted from 0.
    func spineList(page: Int, csrf: String) async throws -> SpineListModel {
        let (spines, total) = try await spinesToCheck(page: page)
        let first = page * Self.spinesPerPage
        let summary: String
        if total == 0 {
            summary = "Every spine read is in the library or dismissed."
        } else if spines.isEmpty {
            summary = "\(total) spines to check; none on this page."
        } else {
            summary =
                "\(total) spine\(total == 1 ? "" : "s") to check"
                + (total > spines.count ? ", \(first + 1)–\(first + spines.count) shown." : ".")
        }
        return SpineListModel(
            page: page > 0 ? page : nil, summary: summary, spines: spines.map { SpineItem($0, csrf: csrf) },
            previous: page > 0 ? "/review?page=\(page - 1)" : nil,
            next: first + spines.count < total ? "/review?page=\(page + 1)" : nil)
    }

    /// One spine on its own ("none of these"): its picture large, every candidate, a search over the recognizer's
    /// catalogues run at once with the text read (`query` when the person searched for something else), and a form
    /// to type the book, its title pre-filled with the text read.
    func spinePage(
        _ context: WebRequestContext, query: String? = nil, problem: String? = nil, status: HTTPResponse.Status = .ok
    ) async throws -> Response {
        guard let id = Self.spineID(context) else { return message("Spine", "No such spine.", status: .notFound) }
        let reader = self.reader
        let spine: SpineToCheck?
        do {
            spine = try await blocking { try reader.database().spineToCheck(id: id) }
        } catch {
            return message("Spine", "\(error)", status: .serviceUnavailable)
        }
        guard let spine else {
            return message(
                "Spine", "No spine has id \(id): the review page lists the spines to check.", status: .notFound)
        }
        var model = SpinePageModel(spine, csrf: context.csrf)
        model.problem = problem
        let searched = String((query ?? spine.text).prefix(200)).trimmingCharacters(in: .whitespacesAndNewlines)
        model.query = searched
        if let bookSearch {
            model.canSearch = true
            if !searched.isEmpty, spine.state == .toCheck {
                model.searched = true
                do {
                    model.results = try await bookSearch.search(searched).map {
                        SearchResultRow($0, spineID: id, csrf: context.csrf)
                    }
                } catch {
                    model.searchProblem = publicText("\(error)") + ": type the book below instead."
                }
                model.noResults = model.results.isEmpty && model.searchProblem == nil
            }
        }
        model.resolved = spine.state != .toCheck ? spine.state.csvWord : nil
        return page("Spine \(id)", current: "/review", "spine", model, status: status)
    }

    /// A spine's picture, as the daemon cut it before the photo went. Only the spine's id is read from the request.
    func spinePicture(_ request: Request, _ context: WebRequestContext) async throws -> Response {
        guard let id = Self.spineID(context) else { return Response(status: .notFound) }
        let tag = "\"spine-\(id)\""
        // A spine's picture is cut once and never changes.
        var headers: HTTPFields = [.cacheControl: "private, max-age=86400", .eTag: tag]
        if request.headers[.ifNoneMatch] == tag { return Response(status: .notModified, headers: headers) }
        let reader = self.reader
        guard let picture = (try? await blocking { try reader.database().spineCrop(id: id) }) ?? nil else {
            return Response(status: .notFound)
        }
        headers[.contentType] = "image/jpeg"
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: picture.jpeg)))
    }

    /// A tap on a candidate (`candidate`, numbered from 1), or a book from the search or typed (`title`, `authors`
    /// one a line, `isbn`): the book lands and the spine leaves the list.
    func pickSpine(_ context: WebRequestContext) async throws -> Response {
        guard let id = Self.spineID(context) else { return message("Spine", "No such spine.", status: .notFound) }
        let form = context.form
        let configuration = settings.configuration
        let now = clock.now()
        do {
            let book: BookRecord
            if let number = form["candidate"] {
                guard let number = Int(number) else {
                    return message("Spine", "That is not a candidate's number.", status: .unprocessableContent)
                }
                book = try await blocking {
                    try SpineReview.pick(id: id, candidate: number, configuration: configuration, now: now)
                }
            } else {
                let title = String((form["title"] ?? "").prefix(500))
                let authors = (form["authors"] ?? "").split(whereSeparator: \.isNewline)
                    .map { String($0.prefix(200)).trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
                let isbn = (form["isbn"] ?? "").trimmingCharacters(in: .whitespaces)
                book = try await blocking {
                    try SpineReview.pick(
                        id: id, title: title, authors: Array(authors.prefix(20)), isbn: isbn.isEmpty ? nil : isbn,
                        configuration: configuration, now: now)
                }
            }
            return Self.redirect("/review?picked=\(book.id ?? 0)" + Self.pageSuffix(form))
        } catch {
            return try await spinePage(
                context, problem: publicText(Self.webWords("\(error)")), status: .unprocessableContent)
        }
    }

    func dismissSpine(_ context: WebRequestContext) async throws -> Response {
        guard let id = Self.spineID(context) else { return message("Spine", "No such spine.", status: .notFound) }
        let configuration = settings.configuration
        let now = clock.now()
        do {
            try await blocking { try SpineReview.dismiss(id: id, configuration: configuration, now: now) }
        } catch {
            return message("Not a book", Self.webWords("\(error)"), status: .unprocessableContent)
        }
        return Self.redirect("/review?dismissed=\(id)" + Self.pageSuffix(context.form))
    }

    /// "Wrong book?" on a book's page: the book becomes the candidate tapped (`candidate`, numbered from 1).
    func replaceBook(_ context: WebRequestContext) async throws -> Response {
        guard let id = Self.bookID(context) else { return message("Book", "No such book.", status: .notFound) }
        guard let number = context.form["candidate"].flatMap({ Int($0) }) else {
            return message("Wrong book?", "That is not a candidate's number.", status: .unprocessableContent)
        }
        let configuration = settings.configuration
        let now = clock.now()
        do {
            _ = try await blocking {
                try SpineReview.replace(bookID: id, candidate: number, configuration: configuration, now: now)
            }
        } catch {
            return try await bookPage(context, notice: nil, problem: publicText(Self.webWords("\(error)")))
        }
        return Self.redirect("/books/\(id)?replaced=1")
    }

    /// Back to the review page the person was on.
    static func pageSuffix(_ form: FormFields) -> String {
        guard let page = form["page"].flatMap(Int.init), page > 0, page < 100_000 else { return "" }
        return "&page=\(page)"
    }

    /// ``SpineReview``'s refusals name the CLI; on a page they name the page.
    static func webWords(_ text: String) -> String {
        text.replacingOccurrences(
            of: "`swiftwing review list --all` shows what became of it", with: "it is no longer on the review page"
        )
        .replacingOccurrences(
            of: "`swiftwing review list` shows the ids of the spines to check",
            with: "the review page lists the spines to check"
        )
        .replacingOccurrences(
            of: "name the book with `swiftwing review pick \\d+ --title …`", with: "type the book below",
            options: .regularExpression
        )
        .replacingOccurrences(of: "give the book's title with --title", with: "type the book's title")
        .replacingOccurrences(of: "or name the book with --title", with: "or type the book below")
        .replacingOccurrences(
            of: "correct it with `swiftwing library edit \\d+`", with: "correct it below", options: .regularExpression
        )
        .replacingOccurrences(of: "or correct it with `swiftwing library edit`", with: "or correct it below")
    }
}

/// A spine on the review page.
struct SpineItem {
    let id: Int64
    let text: String
    let picture: String?
    let pictureAlt: String
    let candidates: [CandidateButton]
    let noCandidates: Bool
    let csrf: String
    let heading: String
    /// On the spine's own page, which is where "none of these" leads.
    var onOwnPage = false

    init(_ spine: SpineToCheck, csrf: String) {
        id = spine.id
        text = spine.text.isEmpty ? "(nothing legible)" : spine.text
        picture = spine.cropState == .kept ? "/spines/\(spine.id)/picture" : nil
        pictureAlt = "The spine as photographed, read as “\(text)”"
        candidates = zip(1..., spine.candidates).map { CandidateButton(number: $0, candidate: $1) }
        noCandidates = spine.candidates.isEmpty
        self.csrf = csrf
        heading = "Spine \(spine.id)"
    }
}

/// One candidate, as the button that picks it.
struct CandidateButton {
    let number: Int
    let title: String
    let authors: String?
    let confidence: String?
    /// What a screen reader says for the button.
    let label: String

    init(number: Int, candidate: SpineCandidateRecord) {
        self.number = number
        title = candidate.title
        authors = candidate.authors.isEmpty ? nil : candidate.authors.joined(separator: ", ")
        confidence = candidate.confidence.map { "\(Int(($0 * 100).rounded())) %" }
        label = "It is " + title + (authors.map { " by " + $0 } ?? "")
    }
}

struct SpineListModel {
    /// The page the list is on, for the forms to come back to (absent on the first).
    let page: Int?
    let summary: String
    let spines: [SpineItem]
    let previous: String?
    let next: String?
}

/// A book the search found, as the button that picks it (its fields go with the form).
struct SearchResultRow {
    let spineID: Int64
    let title: String
    let authors: String?
    /// One a line, as the typed form sends them.
    let authorLines: String
    let isbn: String
    let confidence: String?
    let source: String?
    let csrf: String
    let label: String

    init(_ found: SpineCandidateRecord, spineID: Int64, csrf: String) {
        self.spineID = spineID
        title = found.title
        authors = found.authors.isEmpty ? nil : found.authors.joined(separator: ", ")
        authorLines = found.authors.joined(separator: "\n")
        isbn = found.isbn13 ?? found.isbn10 ?? ""
        confidence = found.confidence.map { "\(Int(($0 * 100).rounded())) %" }
        source = found.source == "openlibrary" ? "Open Library" : nil
        self.csrf = csrf
        label = "It is " + title + (authors.map { " by " + $0 } ?? "")
    }
}

struct SpinePageModel {
    var item: SpineItem
    let csrf: String
    var query = ""
    var canSearch = false
    var searched = false
    var results: [SearchResultRow] = []
    var searchProblem: String?
    /// Stored, not computed: mustache sees stored properties only.
    var noResults = false
    var problem: String?
    /// "picked" or "dismissed" when the spine is no longer to check.
    var resolved: String?
    let typedTitle: String

    init(_ spine: SpineToCheck, csrf: String) {
        item = SpineItem(spine, csrf: csrf)
        item.onOwnPage = true
        self.csrf = csrf
        typedTitle = spine.text
    }
}
