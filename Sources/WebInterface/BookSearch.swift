import Foundation
import HTTPEngine
import Store
import SwiftWingCore
import Synchronization

/// "None of these": the books a spine's text may be, searched in the catalogues the recognizer holds (and Open
/// Library, when the recognizer is online) through its book search (docs/protocol.md §7).
protocol BookSearching: Sendable {
    func search(_ text: String) async throws -> [SpineCandidateRecord]
}

/// The recognizer's book search, asked only on this machine: the web process holds no key (the search answers a
/// loopback caller without one) and sends the owner's text nowhere else. The HTTP engine (libcurl) is started at the
/// first search, so a web process nobody searches from never starts its thread.
final class RecognizerBookSearch: BookSearching {
    let endpoint: URL
    static let resultsShown = 8
    private let engine = Mutex<CurlEngine?>(nil)

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// The search of the backend at `backendURL`, when that is this machine's recognizer (http on 127.0.0.0/8,
    /// ::1 or localhost); nil otherwise.
    init?(backendURL: String?) {
        guard let backendURL, let url = URL(string: backendURL), url.scheme == "http",
            let host = url.host?.lowercased(),
            host == "localhost" || host == "::1" || host == "[::1]" || Self.isLoopbackIPv4(host)
        else { return nil }
        endpoint = url.appendingPathComponent("v3/books/search")
    }

    /// A dotted IPv4 literal in 127.0.0.0/8 (not a name that merely starts with "127.").
    static func isLoopbackIPv4(_ host: String) -> Bool {
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4,
            parts.allSatisfy({ !$0.isEmpty && $0.count <= 3 && $0.allSatisfy(\.isASCII) && $0.allSatisfy(\.isNumber) })
        else { return false }
        let numbers = parts.compactMap { Int($0) }
        return numbers.count == 4 && numbers[0] == 127 && numbers.allSatisfy { $0 <= 255 }
    }

    deinit { engine.withLock { $0?.shutdown() } }

    func search(_ text: String) async throws -> [SpineCandidateRecord] {
        var components = URLComponents(url: endpoint, resolvingAgainstBaseURL: false)
        components?.queryItems = [
            URLQueryItem(name: "q", value: String(text.prefix(200))),
            URLQueryItem(name: "limit", value: String(Self.resultsShown)),
        ]
        guard let url = components?.url else { throw Failure(description: "the search address could not be made") }
        let engine = self.engine.withLock { engine in
            if let engine { return engine }
            let made = CurlEngine(configuration: .init(maximumBodyBytes: 1 << 20, maximumConcurrentConnections: 2))
            engine = made
            return made
        }
        let response: HTTPResponse
        do {
            response = try await engine.send(
                HTTPRequest(
                    method: .get, url: url, timeouts: HTTPTimeouts(connect: .seconds(3), total: .seconds(20))))
        } catch {
            throw Failure(
                description: "the recognizer on this device did not answer (\(error)): is swiftwing-recognizer running?"
            )
        }
        switch response.head.status {
        case 200: return try Self.books(in: response.body)
        case 404: throw Failure(description: "this recognizer has no catalogue to search")
        default: throw Failure(description: "the recognizer answered \(response.head.status) to the search")
        }
    }

    /// `{"books": [{"title", "authors", "isbn", "confidence", "source"}…]}`, read tolerantly: a book without a title
    /// is skipped, an ISBN kept only when its check digit holds (a pick would refuse it), text cut to the device's
    /// limits.
    static func books(in body: [UInt8]) throws -> [SpineCandidateRecord] {
        guard let object = try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any],
            let books = object["books"] as? [Any]
        else { throw Failure(description: "the recognizer's search answer is not the §7 JSON") }
        return books.prefix(resultsShown).compactMap { item -> SpineCandidateRecord? in
            guard let book = item as? [String: Any],
                let title = (book["title"] as? String)?.trimmingCharacters(in: .whitespacesAndNewlines), !title.isEmpty
            else { return nil }
            let authors = ((book["authors"] as? [Any]) ?? []).compactMap { $0 as? String }.prefix(20)
                .map { String($0.prefix(200)) }
            let isbn = (book["isbn"] as? String).flatMap { ISBN($0) }
            let confidence = (book["confidence"] as? Double).flatMap { (0...1).contains($0) ? $0 : nil }
            return SpineCandidateRecord(
                title: String(title.prefix(500)), authors: Array(authors), isbn13: isbn?.isbn13, isbn10: isbn?.isbn10,
                confidence: confidence, source: (book["source"] as? String).map { String($0.prefix(40)) })
        }
    }
}
