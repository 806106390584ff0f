import Logging
import Recognition

/// Builds the whole-photo recognizer `serve` runs: the OCR worker (its own virtual environment, made by
/// scripts/ocr-venv.sh), spine grouping and the catalogue matcher, all from the Recognition module.
enum RecognizerAssembly {
    /// Opens (or builds, the first time) the catalogue's index, finds the OCR worker and starts it, so the first
    /// photo is not the one that pays for loading the models. The device's `library` (when given) and `catalogues`
    /// are searched in that order (the owner's, then the open one); each is matched with its call numbers when it
    /// has them and with the tagless features when it has none.
    static func make(catalogues: [String], library: String?, logger: Logger) async throws -> any ShelfRecognizing {
        // A damaged library file is skipped (the other catalogues still match) and said in the journal once, with
        // what to do, and again when it is usable.
        let matcher = try CatalogueOptions.matcher(paths: catalogues, library: library, useTags: true) { problem in
            if let problem {
                logger.error(
                    """
                    the library's catalogue cannot be used, so books the owner confirmed are matched from the other \
                    catalogues only until the file is rewritten (swiftwing-library-export.service rewrites it; or \
                    delete it to start it anew)
                    """,
                    metadata: ["library": "\(library ?? "")", "problem": "\(problem)"])
            } else {
                logger.notice("the library's catalogue is usable again", metadata: ["library": "\(library ?? "")"])
            }
        }
        let reader = OCRWorkerSupervisor(configuration: try OCRWorkerConfiguration.locate())
        try await reader.warmUp()
        logger.info(
            "recognizer ready",
            metadata: ["catalogues": "\(catalogues.joined(separator: ", "))", "library": "\(library ?? "none")"])
        return ShelfRecognizer(reader: reader, matcher: matcher)
    }
}
