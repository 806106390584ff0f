import Foundation

/// The whole recognizer on one photo: the OCR step reads its lines, the grouper makes spines of them, the matcher
/// assigns catalogue entries to spines (one assignment per photo). Spines the matcher leaves out come back as
/// `unmatched`, with their text and box.
public struct ShelfRecognizer: ShelfRecognizing {
    public let reader: any TextReading
    public let grouper: SpineGrouper
    public let matcher: any SpineMatching

    public init(reader: any TextReading, grouper: SpineGrouper = SpineGrouper(), matcher: any SpineMatching) {
        self.reader = reader
        self.grouper = grouper
        self.matcher = matcher
    }

    /// Progress: 0 "reading" as the OCR starts (it is most of the time), 0.8 "grouping", 0.85 "matching", 1 when done.
    public func recognize(
        jpeg: [UInt8],
        progress: @escaping @Sendable (Double, String) async -> Void
    ) async throws -> ShelfRecognition {
        await progress(0, "reading")
        let photo = try await reader.read(jpeg: jpeg)
        await progress(0.8, "grouping")
        let spines = grouper.group(photo)
        await progress(0.85, "matching")
        let matcher = self.matcher
        let texts = spines.map(\.text)
        // The matcher may query SQLite: blocking work, kept off the cooperative pool.
        let matches = try await runOnOwnThread(named: "spine-matching") { try matcher.assign(texts) }
        guard matches.count == spines.count else {
            throw MatcherContractError(spines: spines.count, matches: matches.count)
        }
        var books: [RecognizedBook] = []
        var unmatched: [SpineText] = []
        for (spine, match) in zip(spines, matches) {
            if let match {
                books.append(RecognizedBook(match: match, spine: spine))
            } else {
                unmatched.append(spine)
            }
        }
        await progress(1, "matching")
        return ShelfRecognition(books: books, unmatched: unmatched)
    }
}

/// A matcher that answered a different number of results than it was given spines: a bug in the matcher.
public struct MatcherContractError: RecognitionFailure {
    public let spines: Int
    public let matches: Int
    public var isRetryable: Bool { false }
    public var description: String {
        "the spine matcher gave \(matches) results for \(spines) spines; it must give one per spine (nil for none)"
    }
}

/// Runs blocking `work` on a thread of its own and waits for it without holding a cooperative thread.
private func runOnOwnThread<T: Sendable>(
    named name: String, _ work: @escaping @Sendable () throws -> T
) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread {
            continuation.resume(with: Result { try work() })
        }
        thread.name = name
        thread.start()
    }
}
