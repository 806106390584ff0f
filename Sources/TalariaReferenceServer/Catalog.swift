import Foundation

/// The reference server's deterministic catalog of real books, and the "recognition" that picks 1–4 of them
/// per image from an FNV-1a hash of its bytes (the same image always yields the same books).

public enum BookFormat: String, Sendable {
    case hardcover, paperback
}

public struct CatalogBook: Sendable, Equatable {
    public let isbn13: String
    public let title: String
    public let authors: [String]
    public let publisher: String
    public let year: Int
    public let format: BookFormat
    public let pageCount: Int
}

public enum Catalog {
    /// Real books with their real ISBN-13 (each checked: ISBN-13 and ISBN-10 check digits agree).
    public static let books: [CatalogBook] = [
        b(
            "9780131103627", "The C Programming Language", ["Brian W. Kernighan", "Dennis M. Ritchie"], "Prentice Hall",
            1988, .paperback, 272),
        b(
            "9780262510875", "Structure and Interpretation of Computer Programs",
            ["Harold Abelson", "Gerald Jay Sussman"], "MIT Press", 1996, .paperback, 657),
        b(
            "9780201633610", "Design Patterns: Elements of Reusable Object-Oriented Software",
            ["Erich Gamma", "Richard Helm", "Ralph Johnson", "John Vlissides"], "Addison-Wesley", 1994, .hardcover, 395),
        b(
            "9780201616224", "The Pragmatic Programmer: From Journeyman to Master", ["Andrew Hunt", "David Thomas"],
            "Addison-Wesley", 1999, .paperback, 352),
        b("9780735619678", "Code Complete", ["Steve McConnell"], "Microsoft Press", 2004, .paperback, 960),
        b(
            "9780132350884", "Clean Code: A Handbook of Agile Software Craftsmanship", ["Robert C. Martin"],
            "Prentice Hall", 2008, .paperback, 464),
        b(
            "9780262033848", "Introduction to Algorithms",
            ["Thomas H. Cormen", "Charles E. Leiserson", "Ronald L. Rivest", "Clifford Stein"], "MIT Press", 2009,
            .hardcover, 1312),
        b(
            "9780201835953", "The Mythical Man-Month: Essays on Software Engineering", ["Frederick P. Brooks Jr."],
            "Addison-Wesley", 1995, .paperback, 336),
        b(
            "9780201485677", "Refactoring: Improving the Design of Existing Code", ["Martin Fowler"], "Addison-Wesley",
            1999, .hardcover, 431),
        b(
            "9780201896831", "The Art of Computer Programming, Volume 1: Fundamental Algorithms", ["Donald E. Knuth"],
            "Addison-Wesley", 1997, .hardcover, 672),
        b(
            "9780465026562", "Gödel, Escher, Bach: An Eternal Golden Braid", ["Douglas R. Hofstadter"], "Basic Books",
            1999, .paperback, 777),
        b(
            "9780321486813", "Compilers: Principles, Techniques, and Tools",
            ["Alfred V. Aho", "Monica S. Lam", "Ravi Sethi", "Jeffrey D. Ullman"], "Addison-Wesley", 2006, .hardcover,
            1009),
        b("9780201657883", "Programming Pearls", ["Jon Bentley"], "Addison-Wesley", 1999, .paperback, 256),
        b(
            "9780139376818", "The UNIX Programming Environment", ["Brian W. Kernighan", "Rob Pike"], "Prentice Hall",
            1984, .paperback, 357),
        b(
            "9780321637734", "Advanced Programming in the UNIX Environment", ["W. Richard Stevens", "Stephen A. Rago"],
            "Addison-Wesley", 2013, .hardcover, 1032),
        b(
            "9780131177055", "Working Effectively with Legacy Code", ["Michael C. Feathers"], "Prentice Hall", 2004,
            .paperback, 456),
        b(
            "9780321125217", "Domain-Driven Design: Tackling Complexity in the Heart of Software", ["Eric Evans"],
            "Addison-Wesley", 2003, .hardcover, 560),
        b(
            "9781449373320", "Designing Data-Intensive Applications", ["Martin Kleppmann"], "O'Reilly Media", 2017,
            .paperback, 616),
        b(
            "9780262162098", "Types and Programming Languages", ["Benjamin C. Pierce"], "MIT Press", 2002, .hardcover,
            648),
        b(
            "9780201615869", "The Practice of Programming", ["Brian W. Kernighan", "Rob Pike"], "Addison-Wesley", 1999,
            .paperback, 288),
        b(
            "9780596007126", "Head First Design Patterns",
            ["Eric Freeman", "Elisabeth Robson", "Bert Bates", "Kathy Sierra"], "O'Reilly Media", 2004, .paperback, 694),
        b(
            "9780596517748", "JavaScript: The Good Parts", ["Douglas Crockford"], "O'Reilly Media", 2008, .paperback,
            176),
        b(
            "9780321146533", "Test Driven Development: By Example", ["Kent Beck"], "Addison-Wesley", 2002, .paperback,
            240),
        b(
            "9780321127426", "Patterns of Enterprise Application Architecture", ["Martin Fowler"], "Addison-Wesley",
            2002, .hardcover, 533),
        b(
            "9780137081073", "The Clean Coder: A Code of Conduct for Professional Programmers", ["Robert C. Martin"],
            "Prentice Hall", 2011, .paperback, 256),
        b("9780134685991", "Effective Java", ["Joshua Bloch"], "Addison-Wesley", 2018, .paperback, 412),
        b(
            "9780984782857", "Cracking the Coding Interview", ["Gayle Laakmann McDowell"], "CareerCup", 2015,
            .paperback, 687),
        b("9780060935467", "To Kill a Mockingbird", ["Harper Lee"], "Harper Perennial", 2002, .paperback, 336),
        b("9780451524935", "1984", ["George Orwell"], "Signet Classic", 1961, .paperback, 328),
        b("9780743273565", "The Great Gatsby", ["F. Scott Fitzgerald"], "Scribner", 2004, .paperback, 180),
        b("9780141439518", "Pride and Prejudice", ["Jane Austen"], "Penguin Classics", 2002, .paperback, 480),
        b(
            "9780316769488", "The Catcher in the Rye", ["J. D. Salinger"], "Little, Brown and Company", 1991,
            .paperback, 277),
        b("9780060850524", "Brave New World", ["Aldous Huxley"], "Harper Perennial", 2006, .paperback, 288),
        b("9781451673319", "Fahrenheit 451", ["Ray Bradbury"], "Simon & Schuster", 2012, .paperback, 249),
        b("9780547928227", "The Hobbit", ["J. R. R. Tolkien"], "Houghton Mifflin Harcourt", 2012, .paperback, 300),
        b("9780399501487", "Lord of the Flies", ["William Golding"], "Perigee", 2003, .paperback, 208),
        b("9780451526342", "Animal Farm", ["George Orwell"], "Signet Classic", 1996, .paperback, 140),
        b("9780142437247", "Moby-Dick; or, The Whale", ["Herman Melville"], "Penguin Classics", 2003, .paperback, 720),
        b("9780141441146", "Jane Eyre", ["Charlotte Brontë"], "Penguin Classics", 2006, .paperback, 532),
        b("9780141439556", "Wuthering Heights", ["Emily Brontë"], "Penguin Classics", 2002, .paperback, 416),
        b("9780141439471", "Frankenstein", ["Mary Shelley"], "Penguin Classics", 2003, .paperback, 273),
        b("9780679734505", "Crime and Punishment", ["Fyodor Dostoevsky"], "Vintage Classics", 1993, .paperback, 564),
        b("9780140268867", "The Odyssey", ["Homer"], "Penguin Classics", 1997, .paperback, 541),
        b("9780060934347", "Don Quixote", ["Miguel de Cervantes"], "Ecco", 2003, .paperback, 992),
        b(
            "9780060883287", "One Hundred Years of Solitude", ["Gabriel García Márquez"],
            "Harper Perennial Modern Classics", 2006, .paperback, 417),
        b("9780307387899", "The Road", ["Cormac McCarthy"], "Vintage", 2007, .paperback, 287),
        b("9780441172719", "Dune", ["Frank Herbert"], "Ace", 1990, .paperback, 535),
        b("9780385333849", "Slaughterhouse-Five", ["Kurt Vonnegut"], "Dial Press", 1999, .paperback, 275),
        b("9780140177398", "Of Mice and Men", ["John Steinbeck"], "Penguin Books", 1993, .paperback, 107),
        b("9780143039433", "The Grapes of Wrath", ["John Steinbeck"], "Penguin Books", 2006, .paperback, 464),
        b("9780684833392", "Catch-22", ["Joseph Heller"], "Simon & Schuster", 1996, .paperback, 464),
        b("9781400033416", "Beloved", ["Toni Morrison"], "Vintage", 2004, .paperback, 324),
        b("9780385490818", "The Handmaid's Tale", ["Margaret Atwood"], "Anchor Books", 1998, .paperback, 311),
        b("9780553380163", "A Brief History of Time", ["Stephen Hawking"], "Bantam", 1998, .paperback, 212),
        b(
            "9780062316097", "Sapiens: A Brief History of Humankind", ["Yuval Noah Harari"], "Harper", 2015, .hardcover,
            443),
        b(
            "9780374275631", "Thinking, Fast and Slow", ["Daniel Kahneman"], "Farrar, Straus and Giroux", 2011,
            .hardcover, 499),
        b("9780199291151", "The Selfish Gene", ["Richard Dawkins"], "Oxford University Press", 2006, .paperback, 360),
        b(
            "9780590353427", "Harry Potter and the Sorcerer's Stone", ["J. K. Rowling"], "Scholastic", 1999, .paperback,
            309),
        b("9780156012195", "The Little Prince", ["Antoine de Saint-Exupéry"], "Harcourt", 2000, .paperback, 96),
        b("9780143035008", "Anna Karenina", ["Leo Tolstoy"], "Penguin Classics", 2004, .paperback, 838),
        b("9781400079988", "War and Peace", ["Leo Tolstoy"], "Vintage Classics", 2008, .paperback, 1273),
        b(
            "9780374528379", "The Brothers Karamazov", ["Fyodor Dostoevsky"], "Farrar, Straus and Giroux", 2002,
            .paperback, 796),
        b("9780743477123", "Hamlet", ["William Shakespeare"], "Simon & Schuster", 2003, .paperback, 342),
        b("9780684801223", "The Old Man and the Sea", ["Ernest Hemingway"], "Scribner", 1995, .paperback, 127),
        b("9780141439600", "A Tale of Two Cities", ["Charles Dickens"], "Penguin Classics", 2003, .paperback, 489),
        b("9780141439563", "Great Expectations", ["Charles Dickens"], "Penguin Classics", 2002, .paperback, 544),
        b("9780679723165", "Lolita", ["Vladimir Nabokov"], "Vintage International", 1989, .paperback, 317),
        b("9780679722762", "Ulysses", ["James Joyce"], "Vintage International", 1990, .paperback, 783),
        b("9780679720201", "The Stranger", ["Albert Camus"], "Vintage International", 1989, .paperback, 123),
    ]

    private static func b(
        _ isbn: String, _ title: String, _ authors: [String], _ publisher: String, _ year: Int, _ format: BookFormat,
        _ pages: Int
    ) -> CatalogBook {
        CatalogBook(
            isbn13: isbn, title: title, authors: authors, publisher: publisher, year: year, format: format,
            pageCount: pages)
    }

    /// Entries at these catalog positions give their ISBN as ISBN-10 (clients must normalise).
    static func usesISBN10(_ index: Int) -> Bool { index % 5 == 2 }

    /// The catalogue's book with this ISBN-13 or ISBN-10 (hyphens and spaces ignored), if it has one.
    public static func book(isbn: String) -> CatalogBook? {
        let compact = isbn.filter { $0 != "-" && $0 != " " }
        guard let isbn13 = ISBN.isbn13(compact) else { return nil }
        return books.first { $0.isbn13 == isbn13 }
    }

    /// The books holding at least half of the words of `query` in their title and authors (case and accents
    /// ignored), with the fraction held, the most first (catalogue order between equals).
    public static func search(_ query: String) -> [(CatalogBook, Double)] {
        let wanted = Set(words(query))
        guard !wanted.isEmpty else { return [] }
        let scored = books.enumerated().compactMap { index, book -> (Int, CatalogBook, Double)? in
            let held = Set(words(book.title + " " + book.authors.joined(separator: " ")))
            let score = Double(wanted.intersection(held).count) / Double(wanted.count)
            return score >= 0.5 ? (index, book, score) : nil
        }
        return scored.sorted { ($0.2, -$0.0) > ($1.2, -$1.0) }.map { ($0.1, $0.2) }
    }

    static func words(_ text: String) -> [String] {
        text.folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil).lowercased()
            .split { !$0.isLetter && !$0.isNumber }.map(String.init)
    }

    /// The books "recognised" on an image: 1–4 distinct catalog entries picked from the FNV-1a hash of its bytes.
    public static func recognise(_ image: some Sequence<UInt8>) -> [RecognisedBook] {
        let hash = fnv1a64(image)
        let count = 1 + Int(hash % 4)
        var picked: [Int] = []
        var state = hash
        while picked.count < count {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let index = Int((state >> 33) % UInt64(books.count))
            if !picked.contains(index) { picked.append(index) }
        }
        return picked.enumerated().map { position, index in
            var mix = (hash ^ UInt64(index &* 0x9E37_79B9)) &* 0x100_0000_01b3
            mix ^= mix >> 29
            let confidence = Double(62 + Int(mix % 38)) / 100  // 0.62 ... 0.99
            return RecognisedBook(
                catalogIndex: index, book: books[index], confidence: confidence, position: position, of: count)
        }
    }
}

/// One recognised book on one image: a catalog entry, how sure the "recogniser" is, and where on the photo it is.
public struct RecognisedBook: Sendable, Equatable {
    public let catalogIndex: Int
    public let book: CatalogBook
    public let confidence: Double
    public let position: Int
    public let of: Int

    /// The ISBN as the server sends it: ISBN-10 for some entries, else ISBN-13.
    public var sentISBN: String {
        Catalog.usesISBN10(catalogIndex) ? (ISBN.isbn10(fromISBN13: book.isbn13) ?? book.isbn13) : book.isbn13
    }

    /// Book JSON as in docs/protocol.md §3, varying field spellings between catalog entries.
    public func json(isbnOverride: String? = nil) -> JSONValue {
        var fields: [String: JSONValue] = [
            "isbn": .string(isbnOverride ?? sentISBN), "title": .string(book.title), "confidence": .double(confidence),
            "format": .string(book.format.rawValue), "publisher": .string(book.publisher),
            "pageCount": .int(book.pageCount),
            "coverUrl": .string("https://covers.openlibrary.org/b/isbn/\(book.isbn13)-L.jpg"),
            "enrichmentStatus": .string(confidence < 0.8 ? "review_needed" : "success"),
        ]
        if catalogIndex % 3 == 0 {
            fields["author"] = .string(book.authors.joined(separator: ", "))
        } else {
            fields["authors"] = .array(book.authors.map { .string($0) })
        }
        if catalogIndex % 2 == 0 {
            fields["publishedDate"] = .string(String(book.year))
        } else {
            fields["publicationYear"] = .int(book.year)
        }
        let width = 1.0 / Double(of)
        fields["boundingBox"] = [
            "x": .double(round2(Double(position) * width + 0.02)), "y": 0.05,
            "width": .double(round2(width - 0.04)), "height": 0.9,
        ]
        if catalogIndex % 4 == 1 {
            fields["enrichment"] = ["isbn13": .string(book.isbn13), "source": "openlibrary"]
        }
        return .object(fields)
    }
}

func round2(_ d: Double) -> Double { (d * 100).rounded() / 100 }

/// 64-bit FNV-1a.
public func fnv1a64(_ bytes: some Sequence<UInt8>) -> UInt64 {
    func run(_ buffer: UnsafeBufferPointer<UInt8>) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in buffer {
            hash ^= UInt64(byte)
            hash = hash &* 0x100_0000_01b3
        }
        return hash
    }
    if let hash = bytes.withContiguousStorageIfAvailable(run) { return hash }
    return Array(bytes).withUnsafeBufferPointer(run)
}

public enum ISBN {
    public static func isValid13(_ s: String) -> Bool {
        let digits = s.compactMap(\.wholeNumberValue)
        guard digits.count == 13, s.allSatisfy(\.isNumber) else { return false }
        let sum = digits.enumerated().reduce(0) { $0 + $1.element * ($1.offset % 2 == 0 ? 1 : 3) }
        return sum % 10 == 0
    }

    public static func isValid10(_ s: String) -> Bool {
        let chars = Array(s)
        guard chars.count == 10 else { return false }
        var sum = 0
        for (i, c) in chars.enumerated() {
            let value: Int
            if let d = c.wholeNumberValue, c.isASCII {
                value = d
            } else if (c == "X" || c == "x") && i == 9 {
                value = 10
            } else {
                return false
            }
            sum += value * (10 - i)
        }
        return sum % 11 == 0
    }

    /// The ISBN-10 of a 978-prefixed ISBN-13.
    public static func isbn10(fromISBN13 s: String) -> String? {
        guard isValid13(s), s.hasPrefix("978") else { return nil }
        let core = Array(s.dropFirst(3).prefix(9)).compactMap(\.wholeNumberValue)
        let sum = core.enumerated().reduce(0) { $0 + $1.element * (10 - $1.offset) }
        let check = (11 - sum % 11) % 11
        return core.map(String.init).joined() + (check == 10 ? "X" : String(check))
    }

    /// The ISBN-13 of an ISBN-10 (or the ISBN-13 itself).
    public static func isbn13(_ s: String) -> String? {
        if isValid13(s) { return s }
        guard isValid10(s) else { return nil }
        let core = "978" + s.prefix(9)
        let digits = core.compactMap(\.wholeNumberValue)
        let sum = digits.enumerated().reduce(0) { $0 + $1.element * ($1.offset % 2 == 0 ? 1 : 3) }
        return core + String((10 - sum % 10) % 10)
    }

    /// The same ISBN with a wrong check digit (for the `bad-isbn` fault).
    public static func corrupted(_ s: String) -> String {
        guard let last = s.last else { return s }
        let replacement: Character = last == "1" ? "2" : "1"
        var result = String(s.dropLast()) + String(replacement)
        if isValid13(result) || isValid10(result) { result = String(s.dropLast()) + (last == "3" ? "4" : "3") }
        return result
    }
}
