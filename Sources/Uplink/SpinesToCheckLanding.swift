import Store
import Talaria

extension TalariaSpine {
    /// The row this unidentified spine lands as (docs/protocol.md §6): its text, its box when it has a usable one,
    /// its candidates as the backend ordered them.
    var newSpineToCheck: NewSpineToCheck {
        NewSpineToCheck(
            text: text,
            box: boundingBox.map { SpineBox(x: $0.x, y: $0.y, width: $0.width, height: $0.height) },
            candidates: candidates.map { candidate in
                SpineCandidateRecord(
                    title: candidate.title, authors: candidate.authors, isbn13: candidate.isbn13,
                    isbn10: candidate.isbn10, confidence: candidate.confidence, source: candidate.source)
            })
    }
}
