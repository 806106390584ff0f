import Foundation
import Testing

@testable import TalariaReferenceServer

@Suite struct JSONTests {
    @Test func writesCompactTextWithSortedKeys() {
        let value: JSONValue = [
            "z": 1, "a": [true, false, .null], "m": ["y": "x/y", "b": 0.62],
            "s": "quote \" backslash \\ newline \n tab \t bell \u{7} é",
        ]
        let escaped = #""s":"quote \" backslash \\ newline \n tab \t bell \u0007 é""#
        #expect(value.serialized() == #"{"a":[true,false,null],"m":{"b":0.62,"y":"x/y"},"# + escaped + #","z":1}"#)
    }

    @Test func numbersKeepTheirValues() throws {
        let value: JSONValue = [
            "whole": .double(100), "fraction": .double(0.05), "isbn": .int(9_780_441_013_593), "nan": .double(.nan),
            "infinity": .double(.infinity),
        ]
        let text = value.serialized()
        #expect(text.contains(#""whole":100}"#) && text.contains(#""nan":null"#) && text.contains(#""infinity":null"#))
        let parsed = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        #expect(parsed["fraction"] as? Double == 0.05)
        #expect(parsed["isbn"] as? Int == 9_780_441_013_593)
    }

    @Test func timestampsAreISO8601WithMillisecondsInUTC() {
        let date = Date(timeIntervalSince1970: 1_795_000_000.1239)  // 2026-11-18T11:06:40.1239Z
        #expect(isoTimestamp(date) == "2026-11-18T11:06:40.123Z")
        #expect(isoTimestamp(Date(timeIntervalSince1970: 0)) == "1970-01-01T00:00:00.000Z")
    }

    @Test func httpDatesAreIMFFixdatesRoundedUp() {
        #expect(httpDate(Date(timeIntervalSince1970: 784_111_777)) == "Sun, 06 Nov 1994 08:49:37 GMT")
        #expect(httpDate(Date(timeIntervalSince1970: 784_111_776.2)) == "Sun, 06 Nov 1994 08:49:37 GMT")
        #expect(httpDate(Date(timeIntervalSince1970: 1_709_251_199)) == "Thu, 29 Feb 2024 23:59:59 GMT")
    }
}
