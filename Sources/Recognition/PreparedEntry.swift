/// A catalogue entry's text in the forms the scoring compares against. Folding and splitting a title and its authors
/// was most of a spine's ranking time, so the index stores the folded words once, when it is built (``Stored``), and
/// ranking only splits them.
struct PreparedEntry: Sendable {
    /// A folded word, and where its letters lie in ``letters``.
    struct Word: Sendable {
        let text: String
        let letters: Range<Int>
    }

    /// The stored form: each part's folded words joined by single spaces.
    struct Stored: Sendable, Hashable {
        var main: String
        var subtitle: String
        var surnames: String
        var forenames: String
        var tag: String

        init(main: String, subtitle: String, surnames: String, forenames: String, tag: String) {
            self.main = main
            self.subtitle = subtitle
            self.surnames = surnames
            self.forenames = forenames
            self.tag = tag
        }

        /// Folds `entry`: the main title (what a spine prints) apart from the subtitle, surnames apart from
        /// forenames.
        init(_ entry: CatalogueEntry) {
            let parts = Normalisation.titleParts(entry.title)
            var surnames: [String] = []
            var forenames: [String] = []
            for author in entry.authors {
                let name = Normalisation.nameParts(author)
                surnames += name.surnames
                forenames += name.forenames
            }
            main = Normalisation.fold(parts.main)
            subtitle = Normalisation.fold(parts.subtitle)
            self.surnames = surnames.joined(separator: " ")
            self.forenames = forenames.joined(separator: " ")
            tag = Normalisation.fold(entry.tag ?? "")
        }
    }

    /// Every word's letters (scalars, the form the edit distances run on), one after the other: main title,
    /// subtitle, surnames, forenames. All of it is the entry's text with the spaces dropped.
    let letters: [UInt32]
    let words: [Word]
    /// Which of ``words`` make up each part.
    let mainWords: Range<Int>
    let subtitleWords: Range<Int>
    let surnames: Range<Int>
    let forenames: Range<Int>
    /// Where the main title's letters lie in ``letters``.
    let mainLetters: Range<Int>
    let tagCompact: [UInt32]
    /// The call number's lookup key (``Normalisation/callNumberKey(_:)``).
    let callNumberKey: String

    init(_ stored: Stored) {
        var letters: [UInt32] = []
        var words: [Word] = []
        letters.reserveCapacity(stored.main.utf8.count + stored.subtitle.utf8.count + stored.surnames.utf8.count)
        func add(_ part: String) -> Range<Int> {
            let first = words.count
            let scalars = part.unicodeScalars
            var start = scalars.startIndex
            var startLetter = letters.count
            for index in scalars.indices {
                let value = scalars[index].value
                if value == 0x20 {
                    if index > start {
                        words.append(Word(text: String(scalars[start..<index]), letters: startLetter..<letters.count))
                    }
                    start = scalars.index(after: index)
                    startLetter = letters.count
                } else {
                    letters.append(value)
                }
            }
            if start < scalars.endIndex {
                words.append(Word(text: String(scalars[start...]), letters: startLetter..<letters.count))
            }
            return first..<words.count
        }
        mainWords = add(stored.main)
        mainLetters = 0..<letters.count
        subtitleWords = add(stored.subtitle)
        surnames = add(stored.surnames)
        forenames = add(stored.forenames)
        self.letters = letters
        self.words = words
        tagCompact = Normalisation.compact(stored.tag)
        callNumberKey = Normalisation.callNumberKey(stored.tag)
    }

    init(_ entry: CatalogueEntry) { self.init(Stored(entry)) }

    /// The author mark a library's label prints for the entry: the first three letters of its first surname, or of
    /// its main title's first word after a leading article when it has no author ("El Meu país" → "meu").
    var authorMark: String {
        let word: String
        if let surname = surnames.first {
            word = words[surname].text
        } else {
            let title = words[mainWords]
            let filed = title.dropFirst().isEmpty ? title.first : title.first { !Self.articles.contains($0.text) }
            guard let filed else { return "" }
            word = filed.text
        }
        return String(word.prefix(3))
    }

    /// Leading articles a library skips when it files a title, in the catalogue's languages.
    static let articles: Set<String> = [
        "el", "la", "los", "las", "l", "lo", "un", "una", "uns", "unes", "els", "les", "the", "a", "an", "il", "le",
        "der", "die", "das", "en",
    ]
}
