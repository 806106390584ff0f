import Logging
import Recognition
import TalariaReferenceServer

/// The service's recognition step: the whole-photo recognizer (OCR, spines, one assignment against the owner's
/// catalogue) plugged into the protocol server, and, when an Open Library URL is given, an open-set lookup of the
/// spines the catalogue did not identify. A spine becomes a book only when its best candidate reaches
/// ``identifiedFloor``; every other spine read is reported as unidentified, with its candidates
/// (docs/protocol.md §6), so the owner picks the book in a tap instead of fixing a wrong guess.
struct ServiceRecognizer: PhotoRecognizing {
    /// The least confidence for a spine to be reported as a book. 0.8 is the device's review line (§3): the
    /// calibration is fitted so that matches at 0.8 or above are right at least 95 times in 100, and on the home
    /// shelves none of them was wrong (0 of 74 at 8a2bbe1, Benchmarks/README.md), while below it most guesses were
    /// wrong (issue 34: 39 books under review, most of them wrong). Below the line a book would land flagged for
    /// review anyway; as an unidentified spine it lands with its candidates and its crop instead, one tap away.
    static let defaultFloor = 0.8
    /// Candidates sent per spine: the issue asks for at least three; five keeps a second page of choices off the
    /// phone while leaving room for the open-set match.
    static let candidatesPerSpine = 5

    let shelf: any ShelfRecognizing
    let openLibrary: (any OpenLibrarySearching)?
    let logger: Logger
    var identifiedFloor = ServiceRecognizer.defaultFloor

    func recognize(photo: [UInt8], progress: @escaping @Sendable (Double, String) async -> Void) async throws
        -> PhotoRecognition
    {
        // The shelf recognizer's share of the job; the open-set lookups, when there are any, take the rest.
        let shelfShare = openLibrary == nil ? 1.0 : 0.85
        let reading: ShelfReading
        do {
            reading = try await read(photo) { fraction, stage in await progress(fraction * shelfShare, stage) }
        } catch let failure as any RecognitionFailure {
            // A photo the OCR step cannot read fails for good; a worker that crashed or hung is worth another try.
            throw JobFailure(
                code: failure.isRetryable ? "RECOGNIZER_ERROR" : "UNREADABLE_PHOTO", message: failure.description,
                retryable: failure.isRetryable)
        }
        var books: [FoundBook] = []
        var unidentified: [(spine: SpineText, candidates: [BookCandidate])] = []
        for spine in reading.spines {
            let candidates = spine.candidates.map { candidate in
                BookCandidate(
                    isbn: candidate.entry.isbn, title: candidate.entry.title, authors: candidate.entry.authors,
                    confidence: candidate.confidence, source: "catalogue")
            }
            if let match = spine.match, match.confidence >= identifiedFloor {
                // The book itself first, then what else the spine may be ("wrong book?").
                let alternatives = candidates.filter {
                    $0.title != match.entry.title || $0.authors != match.entry.authors
                }
                let ownFirst =
                    [
                        BookCandidate(
                            isbn: match.entry.isbn, title: match.entry.title, authors: match.entry.authors,
                            confidence: match.confidence, source: "catalogue")
                    ] + alternatives
                books.append(
                    FoundBook(
                        isbn: match.entry.isbn, title: match.entry.title, authors: match.entry.authors,
                        confidence: match.confidence, boundingBox: BoundingBox(spine.spine.box),
                        text: spine.spine.text, source: "catalogue",
                        candidates: Array(ownFirst.prefix(Self.candidatesPerSpine))))
            } else {
                unidentified.append((spine.spine, candidates))
            }
        }
        var unmatched: [UnmatchedSpine] = []
        for (index, (spine, catalogueCandidates)) in unidentified.enumerated() {
            try Task.checkCancellation()
            var candidates = catalogueCandidates
            if let openLibrary {
                await progress(shelfShare + (1 - shelfShare) * Double(index) / Double(unidentified.count), "looking up")
                do {
                    if let found = try await openLibrary.bestMatch(for: spine.text) {
                        if found.confidence >= identifiedFloor {
                            books.append(
                                FoundBook(
                                    isbn: found.isbn, title: found.title, authors: found.authors,
                                    confidence: found.confidence, boundingBox: BoundingBox(spine.box), text: spine.text,
                                    source: "openlibrary", candidates: candidates))
                            continue
                        }
                        let offered = BookCandidate(
                            isbn: found.isbn, title: found.title, authors: found.authors, confidence: found.confidence,
                            source: "openlibrary")
                        if !candidates.contains(where: { $0.title == offered.title && $0.authors == offered.authors }) {
                            candidates.append(offered)
                            candidates.sort { $0.confidence > $1.confidence }
                        }
                    }
                } catch {
                    // Offline or refused: the spine stays unidentified (with its text), nothing else is lost.
                    logger.notice(
                        "open library lookup failed; the spine stays unmatched", metadata: ["error": "\(error)"])
                }
            }
            unmatched.append(
                UnmatchedSpine(
                    text: spine.text, boundingBox: BoundingBox(spine.box),
                    candidates: Array(candidates.prefix(Self.candidatesPerSpine))))
        }
        return PhotoRecognition(books: books, unmatched: unmatched)
    }

    /// The owner's "none of these" search (docs/protocol.md §7): the catalogues' candidates for the text, and Open
    /// Library's best match when it is configured and answers (offline, the catalogues' alone).
    func searchBooks(_ text: String, limit: Int) async throws -> [BookCandidate]? {
        guard let shelf = shelf as? any CandidateShelfRecognizing else { return nil }
        var found = try await shelf.search(text: text, keep: limit).map { candidate in
            BookCandidate(
                isbn: candidate.entry.isbn, title: candidate.entry.title, authors: candidate.entry.authors,
                confidence: candidate.confidence, source: "catalogue")
        }
        if let openLibrary {
            do {
                if let match = try await openLibrary.bestMatch(for: text),
                    !found.contains(where: { $0.title == match.title && $0.authors == match.authors })
                {
                    found.append(
                        BookCandidate(
                            isbn: match.isbn, title: match.title, authors: match.authors, confidence: match.confidence,
                            source: "openlibrary"))
                    found.sort { $0.confidence > $1.confidence }
                }
            } catch {
                logger.notice("open library search failed; the catalogues' books only", metadata: ["error": "\(error)"])
            }
        }
        return Array(found.prefix(limit))
    }

    /// Every spine with its candidates; a shelf recognizer that names none gives each matched spine its match
    /// as its one candidate.
    private func read(
        _ photo: [UInt8], progress: @escaping @Sendable (Double, String) async -> Void
    ) async throws -> ShelfReading {
        if let shelf = shelf as? any CandidateShelfRecognizing {
            return try await shelf.read(jpeg: photo, candidates: Self.candidatesPerSpine, progress: progress)
        }
        let recognition = try await shelf.recognize(jpeg: photo, progress: progress)
        return ShelfReading(
            spines: recognition.books.map { book in
                SpineReading(
                    spine: book.spine, match: book.match,
                    candidates: [SpineCandidate(entry: book.match.entry, confidence: book.match.confidence)])
            } + recognition.unmatched.map { SpineReading(spine: $0, match: nil, candidates: []) })
    }
}

extension BoundingBox {
    init(_ box: NormalizedBox) {
        self.init(x: box.x, y: box.y, width: box.width, height: box.height)
    }
}
