import Logging
import Recognition

/// Builds the whole-photo recognizer `serve` runs: the OCR worker (its own virtual environment, made by
/// scripts/ocr-venv.sh), spine grouping and the catalogue matcher, all from the Recognition module.
enum RecognizerAssembly {
    /// Opens (or builds, the first time) the catalogue's index, finds the OCR worker and starts it, so the first
    /// photo is not the one that pays for loading the models.
    static func make(catalogue: String, logger: Logger) async throws -> any ShelfRecognizing {
        let index = try CatalogueIndex.open(catalogue: catalogue)
        let matcher = CatalogueMatcher(index: index, options: MatchingOptions(useTags: true))
        let reader = OCRWorkerSupervisor(configuration: try OCRWorkerConfiguration.locate())
        try await reader.warmUp()
        logger.info("recognizer ready", metadata: ["catalogue": "\(catalogue)"])
        return ShelfRecognizer(reader: reader, matcher: matcher)
    }
}
