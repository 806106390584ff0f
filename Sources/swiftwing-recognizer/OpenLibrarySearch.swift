import Foundation
import HTTPEngine

/// A book found by an open-set lookup of one spine's text.
struct OpenSetMatch: Sendable, Equatable {
    var isbn: String?
    var title: String
    var authors: [String]
    /// Below 0.8 always: a lookup by noisy OCR text against millions of books is never sure enough to skip review.
    var confidence: Double
}

/// Looks a spine's text up in a catalogue of all books (the open set).
protocol OpenLibrarySearching: Sendable {
    func bestMatch(for spineText: String) async throws -> OpenSetMatch?
}

/// Open Library's search API: `GET {base}/search.json?q=<words>&limit=N` → `{"docs": [{"title", "author_name",
/// "isbn"}]}`. The spine's words are the query; the doc whose title and authors hold most of them wins, when it
/// holds at least `minimumShare` of them. Sent through the project's own HTTP engine (libcurl with GnuTLS, https only
/// off loopback), as every other request the project makes.
struct OpenLibrarySearch: OpenLibrarySearching {
    let base: URL
    let transport: any HTTPTransport
    var limit = 5
    var minimumShare = 0.6
    var timeout: Duration = .seconds(10)

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    init(base: URL, transport: any HTTPTransport) {
        self.base = base
        self.transport = transport
    }

    /// What one book may carry to the device (it never imports the device's modules, so the figures are copied):
    /// Talaria keeps a title or author of at most `TalariaSpine.textLimit` characters, and refuses the whole job
    /// when one book's JSON passes `TalariaLimits.bookJSONBytes` (64 KiB): a 64 KiB title from the open set made the
    /// kiosk refuse every book of the photo. 1,000 characters is at most 4,000 bytes (6 per escaped control
    /// character, which are dropped here); ten authors and a title stay under 44 KiB.
    enum FieldLimits {
        static let textCharacters = 1000
        static let authors = 10
    }

    /// `text` with control characters dropped and cut to ``FieldLimits/textCharacters``.
    static func bounded(_ text: String) -> String {
        var kept = ""
        var count = 0
        for character in text
        where !character.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
            guard count < FieldLimits.textCharacters else { break }
            kept.append(character)
            count += 1
        }
        return kept.trimmingCharacters(in: .whitespaces)
    }

    /// An ISBN as the device takes one: 13 digits, or 9 digits and a digit or X; anything else is dropped.
    static func plausibleISBN(_ isbn: String) -> Bool {
        let bytes = Array(isbn.utf8)
        let digit = { (byte: UInt8) in byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }
        if bytes.count == 13 { return bytes.allSatisfy(digit) }
        if bytes.count == 10 {
            return bytes.prefix(9).allSatisfy(digit) && (digit(bytes[9]) || bytes[9] == UInt8(ascii: "X"))
        }
        return false
    }

    func bestMatch(for spineText: String) async throws -> OpenSetMatch? {
        let words = Self.words(spineText).filter { $0.count >= 2 }
        guard words.count >= 2 else { return nil }  // one word finds anything
        let query = words.prefix(12).joined(separator: " ")
        var components = URLComponents(url: base.appendingPathComponent("search.json"), resolvingAgainstBaseURL: false)
        components?.queryItems = [
            URLQueryItem(name: "q", value: query), URLQueryItem(name: "limit", value: String(limit)),
            URLQueryItem(name: "fields", value: "title,author_name,isbn"),
        ]
        guard let url = components?.url else { throw Failure(description: "cannot build a search URL from \(base)") }
        let request = HTTPRequest(
            method: .get, url: url, headers: [HTTPHeader(name: "Accept", value: "application/json")],
            timeouts: HTTPTimeouts(connect: timeout, total: timeout, stall: timeout))
        let response = try await transport.send(request)
        guard response.status == 200 else {
            throw Failure(
                description: "\(url.host ?? base.absoluteString) answered HTTP \(response.status) to a search")
        }
        let data = Data(response.body)
        struct Answer: Decodable {
            struct Doc: Decodable {
                var title: String?
                // swift-format-ignore: AlwaysUseLowerCamelCase
                // Open Library's field name.
                var author_name: [String]?
                var isbn: [String]?
            }
            var docs: [Doc]?
        }
        let answer: Answer
        do {
            answer = try JSONDecoder().decode(Answer.self, from: data)
        } catch {
            throw Failure(description: "the search answer of \(url.host ?? "?") is not Open Library's JSON: \(error)")
        }
        let wanted = Set(words)
        var best: (share: Double, match: OpenSetMatch)?
        for doc in answer.docs ?? [] {
            guard let title = doc.title.map(Self.bounded), !title.isEmpty else { continue }
            let authors = (doc.author_name ?? []).prefix(FieldLimits.authors).map(Self.bounded).filter { !$0.isEmpty }
            let held = Set(Self.words(title + " " + authors.joined(separator: " ")))
            let share = Double(wanted.intersection(held).count) / Double(wanted.count)
            guard share >= minimumShare, share > (best?.share ?? 0) else { continue }
            let isbns = (doc.isbn ?? []).filter(Self.plausibleISBN)
            let isbn = isbns.first { $0.utf8.count == 13 } ?? isbns.first
            best = (
                share, OpenSetMatch(isbn: isbn, title: title, authors: authors, confidence: min(0.75, 0.5 + share / 4))
            )
        }
        return best?.match
    }

    static func words(_ text: String) -> [String] {
        text.folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil).lowercased()
            .split { !$0.isLetter && !$0.isNumber }.map(String.init)
    }
}
