import Identify
import SwiftWingCore
import Testing

@Suite("Check digits")
struct ProductCodeTests {
    @Test(
        "valid EAN-13 / ISBN-13, EAN-8 and UPC-A codes pass",
        arguments: [
            (BarcodeFormat.ean13, "9780306406157"),  // ISBN-13
            (.ean13, "9791032305690"),  // ISBN-13, 979 range
            (.ean13, "5449000039231"),  // a drink, not a book
            (.ean8, "96385074"),
            (.ean8, "40170725"),
            (.upcA, "036000291452"),
            (.upcA, "042100005264"),
        ])
    func valid(format: BarcodeFormat, text: String) {
        #expect(Barcode(format: format, text: text) != nil)
    }

    @Test(
        "a wrong check digit, a wrong length or a letter is rejected",
        arguments: [
            (BarcodeFormat.ean13, "9780306406158"),
            (.ean13, "9780306406150"),
            (.ean13, "978030640615"),  // 12 digits
            (.ean13, "97803064061A7"),
            (.ean8, "96385075"),
            (.upcA, "036000291453"),
            (.upcA, "9780306406157"),  // 13 digits as UPC-A
        ])
    func invalid(format: BarcodeFormat, text: String) {
        #expect(Barcode(format: format, text: text) == nil)
    }

    @Test("only EAN-13 codes in the 978/979 ranges are ISBNs")
    func isbnRanges() throws {
        #expect(try #require(Barcode(format: .ean13, text: "9780306406157")).isbn13 == "9780306406157")
        #expect(try #require(Barcode(format: .ean13, text: "9791032305690")).isbn13 == "9791032305690")
        #expect(try #require(Barcode(format: .ean13, text: "5449000039231")).isbn13 == nil)
        #expect(try #require(Barcode(format: .upcA, text: "036000291452")).isbn13 == nil)
    }

    @Test("ISBN-10 becomes its ISBN-13; a bad ISBN-10 becomes nothing")
    func isbn10Conversion() {
        #expect(ISBN(isbn10: "0306406152")?.isbn13 == "9780306406157")
        #expect(ISBN(isbn10: "080442957X")?.isbn13 == "9780804429573")
        #expect(ISBN(isbn10: "080442957x")?.isbn13 == "9780804429573")
        #expect(ISBN(isbn10: "0306406153")?.isbn13 == nil)
        #expect(ISBN(isbn10: "X306406152")?.isbn13 == nil)
        #expect(ISBN(isbn10: "030640615")?.isbn13 == nil)
    }
}
