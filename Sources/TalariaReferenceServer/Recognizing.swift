import Synchronization

/// The recognition step of a job, pluggable: the server owns the protocol (upload, stream, status, results,
/// cleanup, idempotency, faults) and hands each new job's photo to a `PhotoRecognizing`. `talaria-reference` uses
/// ``HashRecognizer``; `swiftwing-recognizer serve` plugs in the real one (OCR, spines, catalogue).

/// A box in fractions (0–1) of the photo's width and height, as `boundingBox` in docs/protocol.md §3.
public struct BoundingBox: Sendable, Equatable {
    public var x: Double
    public var y: Double
    public var width: Double
    public var height: Double
    public init(x: Double, y: Double, width: Double, height: Double) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }

    var json: JSONValue {
        [
            "x": .double(round4(x)), "y": .double(round4(y)), "width": .double(round4(width)),
            "height": .double(round4(height)),
        ]
    }
}

/// One book a recognizer found on a photo.
public struct FoundBook: Sendable, Equatable {
    public var isbn: String?
    public var title: String
    public var authors: [String]
    /// 0–1, calibrated: below 0.8 the device puts the book in review.
    public var confidence: Double
    public var boundingBox: BoundingBox?
    /// The text read on the spine, kept in the book's JSON (the device stores that JSON beside the book).
    public var text: String?
    /// Where the match came from ("catalogue", "openlibrary").
    public var source: String?
    /// The books the spine may be instead, best first, the book itself among them (docs/protocol.md §6): what a
    /// "wrong book?" offers. Empty from a recognizer that names none, and then not sent.
    public var candidates: [BookCandidate]

    public init(
        isbn: String?, title: String, authors: [String], confidence: Double, boundingBox: BoundingBox?, text: String?,
        source: String? = nil, candidates: [BookCandidate] = []
    ) {
        self.isbn = isbn
        self.title = title
        self.authors = authors
        self.confidence = confidence
        self.boundingBox = boundingBox
        self.text = text
        self.source = source
        self.candidates = candidates
    }

    /// The book as docs/protocol.md §3 spells it.
    public var json: JSONValue {
        var fields: [String: JSONValue] = [
            "isbn": isbn.map { .string($0) } ?? .null, "title": .string(title),
            "authors": .array(authors.map { .string($0) }),
            "confidence": .double(round4(confidence)),
            "enrichmentStatus": .string(confidence < 0.8 ? "review_needed" : "success"),
        ]
        if let boundingBox { fields["boundingBox"] = boundingBox.json }
        if let text { fields["text"] = .string(text) }
        if let source { fields["source"] = .string(source) }
        if !candidates.isEmpty { fields["candidates"] = .array(candidates.map(\.json)) }
        return .object(fields)
    }
}

/// A book a spine may be, with the confidence it would have as the recognizer's choice (docs/protocol.md §6).
public struct BookCandidate: Sendable, Equatable {
    public var isbn: String?
    public var title: String
    public var authors: [String]
    /// 0–1, on the same scale as a book's `confidence`.
    public var confidence: Double
    /// Where it came from ("catalogue", "openlibrary").
    public var source: String?

    public init(isbn: String?, title: String, authors: [String], confidence: Double, source: String? = nil) {
        self.isbn = isbn
        self.title = title
        self.authors = authors
        self.confidence = confidence
        self.source = source
    }

    public var json: JSONValue {
        var fields: [String: JSONValue] = [
            "isbn": isbn.map { .string($0) } ?? .null, "title": .string(title),
            "authors": .array(authors.map { .string($0) }), "confidence": .double(round4(confidence)),
        ]
        if let source { fields["source"] = .string(source) }
        return .object(fields)
    }
}

/// A spine whose text was read but not identified (docs/protocol.md §6): no book matched it, or none well enough to
/// be taken without the owner. Kept with the books it may be, so the owner picks one in a tap.
public struct UnmatchedSpine: Sendable, Equatable {
    public var text: String
    public var boundingBox: BoundingBox
    /// Best first; empty when nothing came close (then not sent).
    public var candidates: [BookCandidate]
    public init(text: String, boundingBox: BoundingBox, candidates: [BookCandidate] = []) {
        self.text = text
        self.boundingBox = boundingBox
        self.candidates = candidates
    }

    var json: JSONValue {
        var fields: [String: JSONValue] = ["text": .string(text), "boundingBox": boundingBox.json]
        if !candidates.isEmpty { fields["candidates"] = .array(candidates.map(\.json)) }
        return .object(fields)
    }
}

/// What a recognizer found on one photo.
public struct PhotoRecognition: Sendable, Equatable {
    public var books: [FoundBook]
    public var unmatched: [UnmatchedSpine]
    public init(books: [FoundBook], unmatched: [UnmatchedSpine] = []) {
        self.books = books
        self.unmatched = unmatched
    }
}

/// A recognizer's refusal of a photo that says whether sending it again can help (`retryable` in the job's
/// `failed` event). Any other error thrown by a recognizer fails the job as retryable: the photo may be fine and
/// the step broken (a crashed OCR worker).
public struct JobFailure: Error, Sendable, Equatable, CustomStringConvertible {
    public var code: String
    public var message: String
    public var retryable: Bool
    public init(code: String, message: String, retryable: Bool) {
        self.code = code
        self.message = message
        self.retryable = retryable
    }
    public var description: String { "\(code): \(message)" }
}

/// Turns a photo (JPEG bytes, already checked by the server) into books. Runs off the request path, as a job's
/// task; `progress` takes a fraction 0–1 and a short stage name, each becoming a `progress` event on the stream.
/// Cancellation (the job timed out or was cancelled) should stop the work.
public protocol PhotoRecognizing: Sendable {
    func recognize(photo: [UInt8], progress: @escaping @Sendable (Double, String) async -> Void) async throws
        -> PhotoRecognition

    /// The result without any work, when the recognizer knows it at once (the hash one): the job's book list is
    /// then fixed from the upload on and the books are spread over `recognitionDelayMs` as the reference backend
    /// always did. nil (the default) runs `recognize` as the job's task.
    func immediateRecognition(of photo: [UInt8]) -> [RecognisedBook]?

    /// The books a text may be, best first, at most `limit` (docs/protocol.md §7, the owner's "none of these"
    /// search); nil (the default) when this recognizer has no catalogue to search.
    func searchBooks(_ text: String, limit: Int) async throws -> [BookCandidate]?
}

extension PhotoRecognizing {
    public func searchBooks(_ text: String, limit: Int) async throws -> [BookCandidate]? { nil }

    public func immediateRecognition(of photo: [UInt8]) -> [RecognisedBook]? { nil }
}

/// For fault-injection tests and demos of the protocol only: it reads nothing on the photo. It picks 1–4 books of
/// the built-in ``Catalog`` from a hash of the bytes (the same photo always gives the same books), with the
/// field spellings varied between books as the real service's versions vary them.
public struct HashRecognizer: PhotoRecognizing {
    public init() {}

    public func immediateRecognition(of photo: [UInt8]) -> [RecognisedBook]? { Catalog.recognise(photo) }

    public func recognize(photo: [UInt8], progress: @escaping @Sendable (Double, String) async -> Void) async throws
        -> PhotoRecognition
    {
        PhotoRecognition(books: Catalog.recognise(photo).map(\.foundBook))
    }
}

extension RecognisedBook {
    var foundBook: FoundBook {
        guard case .object(let fields) = json(), case .object(let box)? = fields["boundingBox"] else {
            preconditionFailure("RecognisedBook.json() always has a boundingBox object")
        }
        func number(_ key: String) -> Double {
            if case .double(let d)? = box[key] { return d }
            if case .int(let i)? = box[key] { return Double(i) }
            return 0
        }
        return FoundBook(
            isbn: book.isbn13, title: book.title, authors: book.authors, confidence: confidence,
            boundingBox: BoundingBox(x: number("x"), y: number("y"), width: number("width"), height: number("height")),
            text: nil, source: "reference-catalog")
    }
}

func round4(_ d: Double) -> Double { (d * 10000).rounded() / 10000 }

enum RecognitionOutcome: Sendable {
    case recognized(PhotoRecognition)
    case failed(JobFailure)
}

/// A recognition against its time limit. The recognizer runs in a task of its own and is only cancelled when the
/// limit passes: a step that hangs and ignores cancellation is left behind (its result is dropped) rather than
/// holding the job, so the job fails on time and the server lives on.
final class RecognitionRace: Sendable {
    private struct State {
        var outcome: RecognitionOutcome?
        var continuation: CheckedContinuation<RecognitionOutcome, Never>?
        var tasks: [Task<Void, Never>] = []
    }
    private let state = Mutex(State())

    static func run(
        timeout: Duration, clock: any Clock<Duration>,
        _ recognize: @escaping @Sendable () async throws -> PhotoRecognition
    ) async -> RecognitionOutcome {
        let race = RecognitionRace()
        let work = Task {
            do {
                race.resolve(.recognized(try await recognize()))
            } catch let failure as JobFailure {
                race.resolve(.failed(failure))
            } catch is CancellationError {
                race.resolve(.failed(.cancelled))
            } catch {
                race.resolve(
                    .failed(
                        JobFailure(
                            code: "RECOGNIZER_ERROR", message: "The recognizer failed: \(error)", retryable: true)))
            }
        }
        let timer = Task {
            do { try await sleep(clock, for: timeout) } catch { return }
            race.resolve(
                .failed(
                    JobFailure(
                        code: "RECOGNIZER_TIMEOUT",
                        message: "The recognizer did not answer within \(timeout); the photo can be sent again",
                        retryable: true)))
        }
        race.hold([work, timer])
        return await withTaskCancellationHandler {
            await race.outcome()
        } onCancel: {
            race.resolve(.failed(.cancelled))
        }
    }

    private func hold(_ tasks: [Task<Void, Never>]) {
        let resolved = state.withLock { state in
            if state.outcome == nil { state.tasks = tasks }
            return state.outcome != nil
        }
        if resolved { for task in tasks { task.cancel() } }
    }

    /// The first outcome wins; the tasks still running are cancelled.
    private func resolve(_ outcome: RecognitionOutcome) {
        let (continuation, tasks) = state.withLock {
            state -> (CheckedContinuation<RecognitionOutcome, Never>?, [Task<Void, Never>]) in
            guard state.outcome == nil else { return (nil, []) }
            state.outcome = outcome
            defer {
                state.continuation = nil
                state.tasks = []
            }
            return (state.continuation, state.tasks)
        }
        for task in tasks { task.cancel() }
        continuation?.resume(returning: outcome)
    }

    private func outcome() async -> RecognitionOutcome {
        await withCheckedContinuation { continuation in
            let outcome = state.withLock { state in
                if state.outcome == nil { state.continuation = continuation }
                return state.outcome
            }
            if let outcome { continuation.resume(returning: outcome) }
        }
    }
}

private func sleep<C: Clock>(_ clock: C, for duration: C.Duration) async throws {
    try await clock.sleep(for: duration)
}

extension JobFailure {
    static let cancelled = JobFailure(code: "CANCELED", message: "The recognition was cancelled", retryable: false)
}
