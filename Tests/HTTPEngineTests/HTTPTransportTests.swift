import Foundation
import Testing

@testable import HTTPEngine

@Suite struct HTTPRequestTests {
    @Test func secretHeadersAreRedactedForLogs() throws {
        let request = HTTPRequest(
            method: .post, url: try #require(URL(string: "https://example.org/v3/jobs/scans")),
            headers: [
                HTTPHeader(name: "Authorization", value: "Bearer s3cret"), HTTPHeader(name: "X-Device-ID", value: "d"),
            ])
        #expect(request.redactedHeaders.map(\.value) == ["<redacted>", "d"])
        #expect(!"\(request.redactedHeaders)".contains("s3cret"))
    }
}
