import Foundation
import Hummingbird

/// `GET /v3/books/search?q=<text>[&limit=N]` (docs/protocol.md §7): the books a text may be, from the recognizer's
/// catalogues, as `{"books": [candidate…]}` best first. The owner's "none of these" search on the device's review
/// page. It reads no photo and starts no job, and it answers the device itself (a loopback caller) without the key,
/// since the device's web process never holds the key; any other caller needs it when one is set.
extension Handlers {
    /// The longest query read; a spine's text is a few dozen characters.
    static let searchQueryCharacters = 200
    static let searchLimitMaximum = 20

    func searchBooks(_ request: Request, _ context: Context) async throws -> Response {
        if let apiKey = configuration.apiKey, !presents(request, apiKey),
            !Self.isLoopback(context.channel.remoteAddress)
        {
            return problem(
                401, "UNAUTHORIZED", "Unauthorized",
                "The book search needs the API key (Authorization: Bearer <key>) from another machine", request)
        }
        let query = String((request.uri.queryParameters.get("q") ?? "").prefix(Self.searchQueryCharacters))
            .trimmingCharacters(in: .whitespacesAndNewlines)
        guard !query.isEmpty else {
            return problem(400, "INVALID_REQUEST", "Bad request", "q is required: the text to search for", request)
        }
        let limit = min(
            max(request.uri.queryParameters.get("limit").flatMap { Int($0) } ?? 8, 1), Self.searchLimitMaximum)
        let found: [BookCandidate]?
        do {
            found = try await state.recognizer.searchBooks(query, limit: limit)
        } catch {
            return problem(
                503, "SEARCH_FAILED", "Search failed", "The catalogue could not be searched: \(error)", request,
                retryable: true)
        }
        guard let found else {
            return problem(
                404, "NOT_FOUND", "Not found", "This backend has no catalogue to search (docs/protocol.md §7)", request)
        }
        return ReferenceServer.json(200, ["books": .array(found.prefix(limit).map(\.json))])
    }
}
