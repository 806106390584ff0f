import Logging
import Recognition
import TalariaReferenceServer

/// The service's recognition step: the whole-photo recognizer (OCR, spines, one assignment against the owner's
/// catalogue) plugged into the protocol server, and, when an Open Library URL is given, an open-set lookup of the
/// spines the catalogue did not match. What neither resolves is reported as unmatched (docs/protocol.md §6).
struct ServiceRecognizer: PhotoRecognizing {
    let shelf: any ShelfRecognizing
    let openLibrary: (any OpenLibrarySearching)?
    let logger: Logger

    func recognize(photo: [UInt8], progress: @escaping @Sendable (Double, String) async -> Void) async throws
        -> PhotoRecognition
    {
        // The shelf recognizer's share of the job; the open-set lookups, when there are any, take the rest.
        let shelfShare = openLibrary == nil ? 1.0 : 0.85
        let recognition: ShelfRecognition
        do {
            recognition = try await shelf.recognize(jpeg: photo) { fraction, stage in
                await progress(fraction * shelfShare, stage)
            }
        } catch let failure as any RecognitionFailure {
            // A photo the OCR step cannot read fails for good; a worker that crashed or hung is worth another try.
            throw JobFailure(
                code: failure.isRetryable ? "RECOGNIZER_ERROR" : "UNREADABLE_PHOTO", message: failure.description,
                retryable: failure.isRetryable)
        }
        var books = recognition.books.map { book in
            FoundBook(
                isbn: book.match.entry.isbn, title: book.match.entry.title, authors: book.match.entry.authors,
                confidence: book.match.confidence, boundingBox: BoundingBox(book.spine.box), text: book.spine.text,
                source: "catalogue")
        }
        var unmatched: [UnmatchedSpine] = []
        for (index, spine) in recognition.unmatched.enumerated() {
            try Task.checkCancellation()
            if let openLibrary {
                await progress(
                    shelfShare + (1 - shelfShare) * Double(index) / Double(recognition.unmatched.count), "looking up")
                do {
                    if let found = try await openLibrary.bestMatch(for: spine.text) {
                        books.append(
                            FoundBook(
                                isbn: found.isbn, title: found.title, authors: found.authors,
                                confidence: found.confidence,
                                boundingBox: BoundingBox(spine.box), text: spine.text, source: "openlibrary"))
                        continue
                    }
                } catch {
                    // Offline or refused: the spine stays unmatched (with its text), nothing else is lost.
                    logger.notice(
                        "open library lookup failed; the spine stays unmatched", metadata: ["error": "\(error)"])
                }
            }
            unmatched.append(UnmatchedSpine(text: spine.text, boundingBox: BoundingBox(spine.box)))
        }
        return PhotoRecognition(books: books, unmatched: unmatched)
    }
}

extension BoundingBox {
    init(_ box: NormalizedBox) {
        self.init(x: box.x, y: box.y, width: box.width, height: box.height)
    }
}
