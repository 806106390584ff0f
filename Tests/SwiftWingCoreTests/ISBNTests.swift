import SwiftWingCore
import SwiftWingTesting
import Testing

@Suite("ISBN: one checked value")
struct ISBNTests {
    /// Published books the repository's tests and fixtures use, as (ISBN-13, ISBN-10 or nil for 979).
    static let known: [(String, String?)] = [
        ("9780441013593", "0441013597"),  // Dune
        ("9780547928227", "054792822X"),  // The Hobbit
        ("9780547928272", "0547928270"),
        ("9780804429573", "080442957X"),
        ("9780306406157", "0306406152"),
        ("9780975229804", "097522980X"),
        ("9780131103627", "0131103628"),  // The C Programming Language
        ("9780201616224", "020161622X"),  // The Pragmatic Programmer
        ("9780141439587", "0141439580"),  // Emma
        ("9780593099322", "059309932X"),
        ("9791032305690", nil),
    ]

    @Test("published ISBNs: both forms give the same value, and it gives both forms back")
    func publishedISBNs() throws {
        for (isbn13, isbn10) in Self.known {
            let parsed = try #require(ISBN(isbn13: isbn13), "\(isbn13)")
            #expect(parsed.isbn13 == isbn13)
            #expect(parsed.isbn10 == isbn10)
            #expect(parsed.description == isbn13)
            if let isbn10 {
                #expect(ISBN(isbn10: isbn10) == parsed)
                #expect(ISBN(isbn10: isbn10.lowercased()) == parsed)
                #expect(ISBN(isbn10) == parsed)
            }
            #expect(ISBN(isbn13) == parsed)
        }
    }

    @Test("the strict forms take only the digits: no spaces, labels, 979 ISBN-10s or EANs outside the book ranges")
    func strictForms() {
        #expect(ISBN(isbn13: "9780441013594") == nil)
        #expect(ISBN(isbn13: "4006381333931") == nil)  // a valid EAN-13, not a book
        #expect(ISBN(isbn13: "978-0441013593") == nil)
        #expect(ISBN(isbn13: " 9780441013593") == nil)
        #expect(ISBN(isbn13: "978044101359") == nil)
        #expect(ISBN(isbn13: "٩٧٨٠٤٤١٠١٣٥٩٣") == nil)  // digits, but not ASCII
        #expect(ISBN(isbn10: "0804429570") == nil)
        #expect(ISBN(isbn10: "X804429570") == nil)  // X only as the check digit
        #expect(ISBN(isbn10: "054792827") == nil)
        #expect(ISBN(isbn10: "0-547-92827-0") == nil)
    }

    @Test("what people and backends write: hyphens, spaces, labels, x, surrounding white space")
    func lenientForm() {
        #expect(ISBN("978-0-441-01359-3")?.isbn13 == "9780441013593")
        #expect(ISBN(" 978 0441 013593 ")?.isbn13 == "9780441013593")
        #expect(ISBN("ISBN-13: 978-0-441-01359-3")?.isbn13 == "9780441013593")
        #expect(ISBN("isbn 0-547-92822-x")?.isbn13 == "9780547928227")
        #expect(ISBN("\u{00A0}0\u{2010}547\u{2011}92827\u{2010}0\n")?.isbn13 == "9780547928272")
        #expect(ISBN("") == nil)
        #expect(ISBN("unknown") == nil)
        #expect(ISBN.compact(" ISBN-10: 0-547-92822-x ") == "054792822X")
    }

    @Test(
        "a text that is no ISBN says why: the check digit it needs, or what an ISBN looks like",
        arguments: [
            ("978-0-441-01359-4", ISBN.ParseError.wrongCheckDigit(compact: "9780441013594", expected: "3")),
            ("0441013591", .wrongCheckDigit(compact: "0441013591", expected: "7")),
            ("080442957-0", .wrongCheckDigit(compact: "0804429570", expected: "X")),
            ("054792827A", .wrongCheckDigit(compact: "054792827A", expected: "0")),
            ("9791032305691", .wrongCheckDigit(compact: "9791032305691", expected: "0")),
            ("4006381333931", .notAnISBN(compact: "4006381333931")),
            ("12345", .notAnISBN(compact: "12345")),
            ("X804429570", .notAnISBN(compact: "X804429570")),
            ("dune", .notAnISBN(compact: "DUNE")),
        ])
    func parseErrors(text: String, error: ISBN.ParseError) {
        #expect(throws: error) { try ISBN(parsing: text) }
    }

    @Test("every single wrong digit and every swap of two neighbours in an ISBN-10 is caught (seeded, 2,000 ISBNs)")
    func singleErrorsAreCaught() throws {
        var random = SeededGenerator(seed: 0x15B)
        for _ in 0..<2_000 {
            let payload = [9, 7, random.next() % 2 == 0 ? 8 : 9] + (0..<9).map { _ in Int(random.next() % 10) }
            let isbn13 = (payload + [GTIN.checkDigit(ofPayload: payload)]).map(String.init).joined()
            let isbn = try #require(ISBN(isbn13: isbn13))
            let digits = Array(isbn13)
            for position in digits.indices {
                for replacement in "0123456789" where replacement != digits[position] {
                    var changed = digits
                    changed[position] = replacement
                    #expect(ISBN(isbn13: String(changed)) == nil, "\(isbn13) → \(String(changed))")
                }
            }
            var wrong = digits
            wrong[12] = wrong[12] == "0" ? "1" : "0"
            #expect(throws: ISBN.ParseError.wrongCheckDigit(compact: String(wrong), expected: digits[12])) {
                try ISBN(parsing: String(wrong))
            }
            guard let isbn10 = isbn.isbn10 else { continue }
            #expect(ISBN(isbn10: isbn10) == isbn)
            let characters = Array(isbn10)
            for position in characters.indices.dropLast() where characters[position] != characters[position + 1] {
                var swapped = characters
                swapped.swapAt(position, position + 1)
                #expect(ISBN(isbn10: String(swapped)) == nil, "\(isbn10) → \(String(swapped))")
            }
        }
    }

    @Test("GTIN check digits: EAN-13, EAN-8, UPC-A")
    func gtin() {
        #expect(GTIN.hasValidCheckDigit("4006381333931"))
        #expect(GTIN.hasValidCheckDigit("96385074"))
        #expect(GTIN.hasValidCheckDigit("036000291452"))
        #expect(!GTIN.hasValidCheckDigit("4006381333932"))
        #expect(!GTIN.hasValidCheckDigit("4"))
        #expect(!GTIN.hasValidCheckDigit("40063813339a1"))
        #expect(GTIN.checkDigit(ofPayload: [9, 7, 8, 0, 4, 4, 1, 0, 1, 3, 5, 9]) == 3)
    }
}
