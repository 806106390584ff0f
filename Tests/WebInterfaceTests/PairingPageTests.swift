import Appliance
import Foundation
import Logging
import Store
import Synchronization
import Testing

@testable import WebInterface

/// The pairing page as the panel's QR code opens it (`/pair?code=NNNNNN`): the code filled in, nothing paired or
/// spent until Pair is pressed, forms from other sites refused, and the code in no log line.
@Suite struct PairingPageTests {
    /// Every line logged, with its metadata, at every level.
    final class LogLines: Sendable {
        private let lines = Mutex<[String]>([])
        func append(_ line: String) { lines.withLock { $0.append(line) } }
        var all: [String] { lines.withLock { $0 } }
    }

    struct CapturingHandler: LogHandler {
        let lines: LogLines
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let all = metadata.merging(event.metadata ?? [:]) { $1 }
            lines.append(
                "\(event.level) \(event.message) \(all.map { "\($0.key)=\($0.value)" }.joined(separator: " "))")
        }
    }

    /// A code waiting, as `swiftwing web pair` or a held shutter leaves it.
    private func newCode(_ device: WebDevice) throws -> String {
        String(try WebPairing.pair(configuration: device.configuration, now: device.clock.now).split(separator: " ")[1])
    }

    private func codeField(_ html: String) -> Substring? {
        html.split(separator: "\n").first { $0.contains("id=\"code\"") }
    }

    @Test func theQRCodesAddressFillsTheCodeInAndPairsOnlyWhenPairIsPressed() async throws {
        try await withWebDevice { device in
            let code = try newCode(device)
            // A link preview or prefetch: many GETs, even with a wrong code, pair nothing and spend no try.
            let wrong = code == "000000" ? "111111" : "000000"
            for _ in 0..<(WebAccess.wrongCodesBeforeLock + 1) {
                #expect(try await device.get("/pair?code=" + wrong).status == 200)
            }
            let page = try await device.get("/pair?code=" + code)
            #expect(page.status == 200)
            #expect(page.header("Set-Cookie") == nil, "a GET never pairs")
            let field = try #require(codeField(page.text))
            #expect(field.contains("value=\"\(code)\""), "\(field)")
            #expect(page.text.contains("<button type=\"submit\" autofocus>Pair</button>"))
            #expect(page.header("Referrer-Policy") == "no-referrer", "the address with the code goes nowhere else")
            #expect(try await device.get("/library").status == 303, "still not paired")

            // Pressing Pair: the browser's form post.
            let paired = try await device.post("/pair", [("code", code)])
            #expect(paired.status == 303, "\(paired.text)")
            #expect(paired.header("Set-Cookie")?.hasPrefix("swiftwing_session=") == true)
        }
    }

    @Test(arguments: [
        "12345", "1234567", "12a456", "%3Cscript%3E", "%22%3E%3Cb%3E", "",
        "%EF%BC%91%EF%BC%92%EF%BC%93%EF%BC%94%EF%BC%95%EF%BC%96",
    ])
    func aCodeThatIsNotSixDigitsIsIgnored(query: String) async throws {
        try await withWebDevice { device in
            let page = try await device.get("/pair?code=" + query)
            #expect(page.status == 200)
            let field = try #require(codeField(page.text))
            #expect(!field.contains("value="), "\(field)")
            #expect(field.contains("autofocus"))
            #expect(!page.text.contains("<b>") && !page.text.contains("<script>"))
        }
    }

    @Test func aPairingFormFromAnotherSiteIsRefusedAndSpendsNoTry() async throws {
        try await withWebDevice { device in
            let code = try newCode(device)
            let body = Array("code=\(code)".utf8)
            let form = ("Content-Type", "application/x-www-form-urlencoded")
            for header in [
                ("Sec-Fetch-Site", "cross-site"), ("Sec-Fetch-Site", "same-site"), ("Origin", "http://evil.example"),
                ("Origin", "http://127.0.0.1:1"),
            ] {
                let answer = try await device.request("POST", "/pair", headers: [form, header], body: body)
                #expect(answer.status == 403, "\(header)")
                #expect(answer.header("Set-Cookie") == nil, "\(header)")
            }
            // None of them counted: the code still waits, and the page's own form (same origin) pairs with it.
            let access = try WebAccess.open(StateDirectory(path: device.configuration.stateDirectory))
            #expect(try access.currentPairing(now: device.clock.now)?.code == code)
            let own = try await device.request(
                "POST", "/pair",
                headers: [form, ("Sec-Fetch-Site", "same-origin"), ("Origin", "http://127.0.0.1:\(device.port)")],
                body: body)
            #expect(own.status == 303, "\(own.text)")
        }
    }

    @Test func thePairingCodeIsInNoLogLine() async throws {
        let lines = LogLines()
        let logger = Logger(label: "swiftwing-web-test") { _ in CapturingHandler(lines: lines) }
        var code = ""
        var wrong = ""
        try await withWebDevice(logger: logger) { device in
            code = try newCode(device)
            wrong = code == "000000" ? "111111" : "000000"
            _ = try await device.get("/pair?code=" + code)
            _ = try await device.get("/pair?code=" + wrong)
            _ = try await device.get("/nowhere?code=" + code)
            _ = try await device.get("/library?code=" + code)
            _ = try await device.request("DELETE", "/pair?code=" + code)
            _ = try await device.post("/pair", [("code", wrong)])
            _ = try await device.post("/pair?code=" + code, [("code", code)])
        }
        let all = lines.all
        #expect(all.contains { $0.contains("a browser paired") }, "the capture sees the web process's lines")
        #expect(!all.contains { $0.contains("code=") }, "\(all)")
        #expect(!all.contains { $0.contains(code) || $0.contains(wrong) }, "\(all)")
    }
}
