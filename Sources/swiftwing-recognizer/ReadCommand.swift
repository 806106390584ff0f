import ArgumentParser
import Foundation
import Recognition
import SwiftWingCore

/// `swiftwing-recognizer read [--catalogue FILE]... --json IMAGE...`: the whole recognizer on photos, from the command
/// line, against the owner's catalogues and the shipped open one.
struct ReadCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "read",
        abstract: "Reads the book spines on shelf photos and matches them against a catalogue.")

    @OptionGroup var catalogues: CatalogueOptions

    @Flag(help: "Print {\"images\": [{\"file\", \"books\", \"unmatched\"}]} as JSON (the only output form so far).")
    var json = false

    @Option(
        help: "Long edge, in pixels, of the copy of the photo that text is found on (default: the worker's, as serve).")
    var detectionSize: Int?

    @Option(help: "Seconds one photo may take before the OCR worker is considered hung.")
    var timeout: Double = 120

    @Flag(help: "Add each photo's seconds and the OCR worker's peak resident memory (MB) to the output (benchmarks).")
    var timings = false

    @Flag(help: "Match without the catalogue's call numbers (a catalogue with none is always matched without).")
    var ignoreTags = false

    @Flag(help: "Add the evidence behind each book's confidence to the output (for fitting the calibration).")
    var explain = false

    @Option(
        help: ArgumentHelp(
            "Add every spine with up to N candidates (the books a review would offer) to the output, as \"spines\".",
            valueName: "N"))
    var candidates: Int?

    @Option(
        help: ArgumentHelp(
            "Debugging: write the lines the OCR worker read on each photo to DIR/NAME.json (NAME: the photo's file name).",
            valueName: "DIR"))
    var saveOcr: String?

    @Option(
        help: ArgumentHelp(
            "Debugging: take each photo's lines from DIR/NAME.json (written by --save-ocr) instead of running the OCR "
                + "worker, so grouping and matching can be tried again in seconds.",
            valueName: "DIR"))
    var ocrFrom: String?

    @Argument(help: "JPEG or PNG photos of shelves.")
    var images: [String]

    func validate() throws {
        guard json else { throw ValidationError("give --json: it is the only output form so far") }
        guard !images.isEmpty else { throw ValidationError("give at least one photo") }
        guard saveOcr == nil || ocrFrom == nil else {
            throw ValidationError("give --save-ocr or --ocr-from, not both: saved lines are already saved")
        }
    }

    func run() async throws {
        let matcher = try catalogues.matcher(useTags: !ignoreTags)
        let supervisor: OCRWorkerSupervisor?
        if ocrFrom == nil {
            var worker = try OCRWorkerConfiguration.locate()
            // Without the option, the worker's own default (what `serve` reads with).
            worker.workerArguments = detectionSize.map { ["--det-side", String($0)] } ?? []
            worker.readTimeout = timeout
            supervisor = OCRWorkerSupervisor(configuration: worker)
        } else {
            supervisor = nil
        }
        defer { supervisor?.shutdown() }
        var results: [ImageResult] = []
        for file in images {
            let bytes: [UInt8]
            do {
                bytes = try Array(Data(contentsOf: URL(fileURLWithPath: file)))
            } catch {
                throw ValidationError("cannot read the photo \(file): \(error.localizedDescription)")
            }
            let started = ContinuousClock.now
            let reader: any TextReading
            if let supervisor {
                reader =
                    saveOcr.map { SavingTextReader(reader: supervisor, file: savedLinesFile(in: $0, for: file)) }
                    ?? supervisor
            } else {
                reader = SavedTextReader(file: savedLinesFile(in: ocrFrom!, for: file))
            }
            let recognizer = ShelfRecognizer(reader: reader, matcher: matcher)
            var result: ImageResult
            if let candidates {
                // One read, both views: the books and the unmatched spines as `serve` reports them, and every spine.
                let reading = try await recognizer.read(jpeg: bytes, candidates: candidates) { _, _ in }
                let books = reading.spines.compactMap { spine in
                    spine.match.map { RecognizedBook(match: $0, spine: spine.spine) }
                }
                let unmatched = reading.spines.filter { $0.match == nil }.map(\.spine)
                result = ImageResult(
                    file: file, recognition: ShelfRecognition(books: books, unmatched: unmatched), explain: explain)
                result.spines = reading.spines.map(ImageResult.Spine.init)
            } else {
                let recognition = try await recognizer.recognize(jpeg: bytes) { _, _ in }
                result = ImageResult(file: file, recognition: recognition, explain: explain)
            }
            if timings {
                result.seconds = (ContinuousClock.now - started).inSeconds
                result.workerPeakMB = supervisor?.workerProcessID.flatMap(peakResidentMegabytes)
            }
            results.append(result)
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let data = try encoder.encode(["images": results])
        FileHandle.standardOutput.write(data)
        FileHandle.standardOutput.write(Data("\n".utf8))
    }
}

/// Where `--save-ocr` and `--ocr-from` keep one photo's lines: DIR/NAME.json, NAME the photo's file name.
func savedLinesFile(in directory: String, for photo: String) -> String {
    let name = URL(fileURLWithPath: photo).deletingPathExtension().lastPathComponent
    return URL(fileURLWithPath: directory).appendingPathComponent(name + ".json").path
}

/// Reads with the OCR worker and writes what it read to `file` (a `ReadPhoto` as JSON), for `--ocr-from` later.
struct SavingTextReader: TextReading {
    let reader: any TextReading
    let file: String

    func read(jpeg: [UInt8]) async throws -> ReadPhoto {
        let photo = try await reader.read(jpeg: jpeg)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        do {
            try encoder.encode(photo).write(to: URL(fileURLWithPath: file))
        } catch {
            throw ValidationError("cannot write the OCR lines to \(file): \(error.localizedDescription)")
        }
        return photo
    }
}

/// Gives the lines saved by `--save-ocr` for one photo instead of reading it again.
struct SavedTextReader: TextReading {
    let file: String

    func read(jpeg: [UInt8]) async throws -> ReadPhoto {
        do {
            return try JSONDecoder().decode(ReadPhoto.self, from: Data(contentsOf: URL(fileURLWithPath: file)))
        } catch {
            throw ValidationError(
                "cannot take the OCR lines from \(file) (\(error)): write them first with read --save-ocr DIR")
        }
    }
}

/// One photo's part of `read`'s output.
struct ImageResult: Encodable {
    struct Book: Encodable {
        let isbn: String?
        let title: String
        let authors: [String]
        let confidence: Double
        let boundingBox: NormalizedBox
        let text: String
        let evidence: MatchEvidence?

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(isbn, forKey: .isbn)  // null, not absent, when the entry has none
            try container.encode(title, forKey: .title)
            try container.encode(authors, forKey: .authors)
            try container.encode(confidence, forKey: .confidence)
            try container.encode(boundingBox, forKey: .boundingBox)
            try container.encode(text, forKey: .text)
            try container.encodeIfPresent(evidence, forKey: .evidence)
        }

        enum CodingKeys: String, CodingKey { case isbn, title, authors, confidence, boundingBox, text, evidence }
    }

    struct Unmatched: Encodable {
        let text: String
        let boundingBox: NormalizedBox
    }

    let file: String
    let books: [Book]
    let unmatched: [Unmatched]
    var seconds: Double?
    var workerPeakMB: Double?
    /// With `--candidates`: every spine, its match if any and the books a review would offer.
    var spines: [Spine]?

    struct Spine: Encodable {
        struct Candidate: Encodable {
            let isbn: String?
            let title: String
            let authors: [String]
            let confidence: Double
        }
        let text: String
        let boundingBox: NormalizedBox
        let match: String?
        let confidence: Double?
        let candidates: [Candidate]

        init(_ reading: SpineReading) {
            text = reading.spine.text
            boundingBox = reading.spine.box
            match = reading.match?.entry.title
            confidence = reading.match?.confidence
            candidates = reading.candidates.map {
                Candidate(
                    isbn: $0.entry.isbn, title: $0.entry.title, authors: $0.entry.authors, confidence: $0.confidence)
            }
        }
    }

    init(file: String, recognition: ShelfRecognition, explain: Bool = false) {
        self.file = file
        books = recognition.books.map { book in
            Book(
                isbn: book.match.entry.isbn, title: book.match.entry.title, authors: book.match.entry.authors,
                confidence: book.match.confidence, boundingBox: book.spine.box, text: book.spine.text,
                evidence: explain ? book.match.evidence : nil)
        }
        unmatched = recognition.unmatched.map { Unmatched(text: $0.text, boundingBox: $0.box) }
    }
}

/// A process's peak resident set (VmHWM in /proc/PID/status), in MB.
func peakResidentMegabytes(of pid: Int32) -> Double? {
    guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
    for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
        let kilobytes = line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first
        return kilobytes.flatMap { Double($0) }.map { $0 / 1024 }
    }
    return nil
}
