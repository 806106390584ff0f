import Foundation
import SwiftWingTesting
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

    @Test(
        "anything else is nil",
        arguments: [
            "tomorrow", "", "Sun, 06 Nov 1994 25:49:37 GMT", "Sun, 06 Nov 1994 08:49:61 GMT",
            "Fri, 30 Feb 2024 10:00:00 GMT", "Sun, 06 Nov 1994 08:49:37 UTC", "1994-11-06T08:49:37Z",
        ])
    func rejects(text: String) {
        #expect(HTTPDate.parse(text) == nil)
    }

    @Test("asctime days may be one digit or two; names match in any case")
    func spellings() {
        #expect(HTTPDate.parse("Sun Nov 6 08:49:37 1994") == expected)
        #expect(HTTPDate.parse("Sun Nov 06 08:49:37 1994") == expected)
        #expect(HTTPDate.parse("  sun, 06 NOV 1994 08:49:37 GMT ") == expected)
        #expect(HTTPDate.parse("SUNDAY, 06-nov-94 08:49:37 GMT") == expected)
    }

    @Test(
        "malformed fields are nil",
        arguments: [
            "Sux, 06 Nov 1994 08:49:37 GMT", "Sun 06 Nov 1994 08:49:37 GMT", "Sun, 6 Nov 1994 08:49:37 GMT",
            "Sun, 06 Nox 1994 08:49:37 GMT", "Sun, 06 Nov 94 08:49:37 GMT", "Sun, 06 Nov 1994 08:49 GMT",
            "Sun, 06 Nov 1994 8:49:37 GMT", "Sun, 00 Nov 1994 08:49:37 GMT", "Sun, 31 Nov 1994 08:49:37 GMT",
            "Sun, 06 Nov 1994 08:49:37 GMT extra", "Sun, 06 Nov 1994 08:49:3x GMT", "Sun, 06 Nov +994 08:49:37 GMT",
            "Sun, 06-Nov-94 08:49:37 GMT", "Sunday, 06-Nov-1994 08:49:37 GMT", "Sunday, 06 Nov 94 08:49:37 GMT",
            "Sun Nov 123 08:49:37 1994", "Sun Nov 6 08:49:37 94", "Thu, 29 Feb 2023 10:00:00 GMT",
        ])
    func rejectsMalformed(text: String) {
        #expect(HTTPDate.parse(text) == nil)
    }

    @Test("3000 random instants written by Foundation's formatter in the three forms read back the same")
    func agreesWithFoundation() throws {
        func formatter(_ format: String) -> DateFormatter {
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "GMT")
            formatter.dateFormat = format
            return formatter
        }
        let imf = formatter("EEE, dd MMM yyyy HH:mm:ss 'GMT'")
        let rfc850 = formatter("EEEE, dd-MMM-yy HH:mm:ss 'GMT'")
        let asctime = formatter("EEE MMM d HH:mm:ss yyyy")
        var generator = SeededGenerator(seed: 7)
        for _ in 0..<3000 {
            // 1970 up to 2069: the years RFC 850's two digits can name.
            let date = Date(timeIntervalSince1970: TimeInterval(Int.random(in: 0..<3_155_760_000, using: &generator)))
            for text in [imf.string(from: date), rfc850.string(from: date), asctime.string(from: date)] {
                #expect(HTTPDate.parse(text) == date, "\(text)")
            }
        }
    }
}
