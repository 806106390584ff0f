import FuzzSupport
import Recognition

/// A catalogue CSV (an owner's export, a library's list) through the recognizer's import, as text. Every entry it
/// gives has a title; a refusal names the file and a line inside the text.
func fuzzCatalogue(_ bytes: UnsafeRawBufferPointer) {
    let text = String(decoding: bytes, as: UTF8.self)
    do {
        for entry in try CatalogueImport.entries(csv: text, file: "fuzz.csv") {
            precondition(!entry.title.isEmpty, "an entry without a title")
        }
    } catch let error as CatalogueImportError {
        precondition(error.file == "fuzz.csv" && error.line >= 0, "a refusal that names no place: \(error)")
        precondition(!error.reason.isEmpty, "a refusal without a reason")
    } catch {
        preconditionFailure("not a CatalogueImportError: \(error)")
    }
}

@main enum FuzzMain { static func main() { FuzzInput.main(fuzzCatalogue) } }
