import Foundation
import Testing

@testable import Talaria

@Suite("HTTP dates (RFC 9110 §5.6.7)")
struct HTTPDateTests {
    private let expected = Date(timeIntervalSince1970: 784_111_777)  // 1994-11-06T08:49:37Z

    @Test("the three forms: IMF-fixdate, RFC 850, asctime")
    func threeForms() {
        #expect(HTTPDate.parse("Sun, 06 Nov 1994 08:49:37 GMT") == expected)
        #expect(HTTPDate.parse("Sunday, 06-Nov-94 08:49:37 GMT") == expected)
        #expect(HTTPDate.parse("Sun Nov  6 08:49:37 1994") == expected)
    }

    @Test("a leap second is the first second of the next minute")
    func leapSecond() {
        #expect(HTTPDate.parse("Thu, 29 Feb 2024 23:59:60 GMT") == Date(timeIntervalSince1970: 1_709_251_200))
        #expect(HTTPDate.parse("Sun, 06 Nov 1994 08:60:37 GMT") == nil)
    }

    @Test("two-digit RFC 850 years: 70-99 are 19xx, 00-69 are 20xx")
    func twoDigitYears() {
        #expect(HTTPDate.parse("Friday, 06-Nov-70 08:49:37 GMT") == Date(timeIntervalSince1970: 26_729_377))
        #expect(HTTPDate.parse("Wednesday, 06-Nov-69 08:49:37 GMT") == Date(timeIntervalSince1970: 3_150_953_377))
    }

    @Test("anything else is nil", arguments: [
        "tomorrow", "", "Sun, 06 Nov 1994 25:49:37 GMT", "Sun, 06 Nov 1994 08:49:61 GMT",
        "Fri, 30 Feb 2024 10:00:00 GMT", "Sun, 06 Nov 1994 08:49:37 UTC", "1994-11-06T08:49:37Z",
    ])
    func rejects(text: String) {
        #expect(HTTPDate.parse(text) == nil)
    }
}
