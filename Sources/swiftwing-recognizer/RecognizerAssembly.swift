import Logging
import Recognition

/// Builds the whole-photo recognizer `serve` runs: the OCR worker (its own virtual environment, made by
/// scripts/ocr-venv.sh), spine grouping and the catalogue matcher, all from the Recognition module.
enum RecognizerAssembly {
    struct Unavailable: Error, CustomStringConvertible {
        let description: String
    }

    static func make(catalogue: String, logger: Logger) async throws -> any ShelfRecognizing {
        // The OCR pipeline and the catalogue matcher are not in this build yet: `serve` says so and exits rather
        // than accept scans it cannot read.
        throw Unavailable(
            description: "this build has no OCR pipeline or catalogue matcher yet (the Recognition module's "
                + "ShelfRecognizer and catalogue index); the catalogue \(catalogue) was checked and is fine")
    }
}
