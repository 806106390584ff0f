import Foundation
import Testing

@testable import Talaria

@Suite("JSON reader")
struct JSONReaderTests {
    private func read(_ text: String) -> JSONValue? { try? JSONValue.parse(text, what: "test") }

    @Test("values, nesting, whitespace, numbers")
    func values() {
        #expect(
            read(#" { "a" : [1, -2.5, 3e2, 0, -0.0, 1E-2, true, false, null, "x"] , "b":{}, "c":[] } "#)
                == .object([
                    "a": .array([
                        .number(1), .number(-2.5), .number(300), .number(0), .number(-0.0), .number(0.01),
                        .bool(true), .bool(false), .null, .string("x"),
                    ]),
                    "b": .object([:]), "c": .array([]),
                ]))
        #expect(read("123456789012345678901234567890") == .number(1.2345678901234568e29))
        #expect(read("9007199254740993")?.doubleValue == 9_007_199_254_740_992)  // beyond 2^53: Double rounding
        #expect(read(#"{"a":1,"a":2}"#) == .object(["a": .number(2)]))
    }

    @Test("string escapes, surrogate pairs, lone surrogates, UTF-8")
    func strings() {
        #expect(read(#""a\"b\\c\/d\b\f\n\r\t""#) == .string("a\"b\\c/d\u{8}\u{C}\n\r\t"))
        #expect(read(#""\u00e9\u20AC\ud83d\ude00""#) == .string("é€😀"))
        #expect(read(#""\ud83d x""#) == .string("\u{FFFD} x"))
        #expect(read(#""\ude00""#) == .string("\u{FFFD}"))
        #expect(read(#""\ud83d\u0041""#) == .string("\u{FFFD}A"))
        #expect(read("\"ノルウェイの森 📚\"") == .string("ノルウェイの森 📚"))
    }

    @Test("jsonText writes what the reader reads back, escapes included")
    func roundTrip() throws {
        let value = JSONValue.object([
            "s": .string("quote \" backslash \\ nl \n tab \t bell \u{7} é 😀"), "n": .number(-1.25), "i": .number(42),
            "a": .array([.null, .bool(false)]),
        ])
        #expect(value.jsonText.contains(#"\u0007"#))
        #expect(try JSONValue.parse(value.jsonText, what: "round trip") == value)
    }

    @Test("what is not JSON is refused")
    func invalid() {
        for text in [
            "", " ", "<html>", "{", "[1,]", "{\"a\":}", "{\"a\" 1}", "01", "1.", ".5", "-", "1e", "tru", "nul",
            "\"abc", "\"\\x\"", "\"\\u12\"", "{} {}", "[1] x", "{a:1}", "'a'", "NaN", "+1",
            String(repeating: "[", count: 300) + String(repeating: "]", count: 300),
        ] {
            #expect(read(text) == nil, "\(text.prefix(20)) should be refused")
        }
        #expect(read(String(repeating: "[", count: 200) + String(repeating: "]", count: 200)) != nil)
    }

    @Test("agrees with JSONSerialization on the recorded stream's events")
    func agreesWithFoundation() throws {
        for event in parse(Fixtures.jobStream).events {
            let ours = try? JSONValue.parse(event.data, what: "event")
            let foundation = try? JSONSerialization.jsonObject(
                with: Data(event.data.utf8), options: [.fragmentsAllowed])
            #expect((ours == nil) == (foundation == nil), "\(event)")
            if let ours, let foundation {
                let reencoded = try JSONSerialization.data(
                    withJSONObject: foundation, options: [.sortedKeys, .fragmentsAllowed])
                let roundTrip = try JSONValue.parse(Array(reencoded), what: "re-encoded")
                #expect(ours == roundTrip, "\(event)")
            }
        }
    }
}
