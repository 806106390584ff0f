import TalariaReferenceServer
import Testing

/// The API key and job tokens are compared as bytes, in a time that does not depend on where a guess goes wrong.
@Suite struct CredentialsTests {
    @Test func bytesEqualOrNot() {
        #expect(credentialsEqual("sekret", "sekret"))
        #expect(credentialsEqual("", ""))
        #expect(credentialsEqual("jt_0123456789abcdef", "jt_0123456789abcdef"))
        // A common prefix, either one longer: not equal.
        #expect(!credentialsEqual("sekret", "sekret2"))
        #expect(!credentialsEqual("sekret2", "sekret"))
        #expect(!credentialsEqual("sek", "sekret"))
        #expect(!credentialsEqual("", "sekret"))
        #expect(!credentialsEqual("sekret", ""))
        // Same length, differing at the first byte, at the last.
        #expect(!credentialsEqual("xekret", "sekret"))
        #expect(!credentialsEqual("sekrex", "sekret"))
        // Lengths 256 apart (a byte-truncated length difference would be 0).
        #expect(!credentialsEqual(String(repeating: "a", count: 256), ""))
        #expect(!credentialsEqual(String(repeating: "a", count: 300), String(repeating: "a", count: 44)))
        // Canonically equivalent, different bytes: `String ==` says equal, a credential is not.
        let precomposed = "caf\u{E9}"
        let decomposed = "cafe\u{301}"
        #expect(precomposed == decomposed)
        #expect(!credentialsEqual(precomposed, decomposed))
        #expect(!credentialsEqual(decomposed, precomposed))
        #expect(credentialsEqual(decomposed, "cafe\u{301}"))
    }

    @Test func theAPIKeyAndTheJobTokenAreCheckedAsBytesOverHTTP() async throws {
        try await withServer({ $0.apiKey = "caf\u{E9}" }) { server in
            // The key sent decomposed: the same text to `String ==`, another key to the server.
            let decomposed = try await server.upload(bearer: "cafe\u{301}")
            #expect(decomposed.status == 401, "\(decomposed.text)")
            let right = try await server.upload(bearer: "caf\u{E9}")
            #expect(right.status == 202, "\(right.text)")
            let data = try #require(try right.json()["data"] as? [String: Any])
            let id = try #require(data["jobId"] as? String)
            let token = try #require(data["authToken"] as? String)
            let prefix = try await server.request(
                "GET", "/v3/jobs/scans/\(id)", headers: [("Authorization", "Bearer \(token.dropLast())")])
            #expect(prefix.status == 401)
            let longer = try await server.request(
                "GET", "/v3/jobs/scans/\(id)", headers: [("Authorization", "Bearer \(token)0")])
            #expect(longer.status == 401)
            let byToken = try await server.request(
                "GET", "/v3/jobs/scans/\(id)", headers: [("Authorization", "Bearer \(token)")])
            #expect(byToken.status == 200)
            let stream = try await server.stream(
                try #require(data["sseUrl"] as? String), token: String(token.dropLast()))
            #expect(stream.status == 401)
        }
    }
}
