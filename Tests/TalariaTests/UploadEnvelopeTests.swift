import Foundation
import Testing

@testable import Talaria

private let base = URL(string: "https://api.example.org/")!

@Suite("Tolerant JSON and upload envelopes (docs/protocol.md §1)")
struct UploadEnvelopeTests {
    @Test("JSONValue tells booleans from numbers and reads numbers written as strings")
    func jsonValue() throws {
        let json = try JSONValue.parse(#"{"a":true,"b":1,"c":0,"d":"0.5","e":null,"f":9780441013593}"#, what: "test")
        #expect(json["a"] == .bool(true))
        #expect(json["b"] == .number(1))
        #expect(json["c"]?.boolValue == nil)  // 0 is not false
        #expect(json["d"]?.doubleValue == 0.5)
        #expect(json["e"]?.isNull == true)
        #expect(json["f"]?.stringValue == "9780441013593")  // an ISBN sent as a number
        #expect(json.jsonText == #"{"a":true,"b":1,"c":0,"d":"0.5","e":null,"f":9780441013593}"#)
    }

    @Test("shape 1: jobId, sseUrl, authToken, statusUrl — relative URLs resolved against the base")
    func shapeOne() throws {
        let body = #"""
            {"success":true,"data":{"jobId":"j-1","sseUrl":"/v3/jobs/scans/j-1/stream","authToken":"tok",
            "statusUrl":"https://other.example.org/v3/jobs/scans/j-1"},
            "metadata":{"timestamp":"2026-11-21T13:00:00Z","requestId":"req-9"},
            "_links":{"self":"/v3/jobs/scans/j-1","stream":"/ignored","cancel":"/v3/jobs/scans/j-1"}}
            """#
        let accepted = try UploadAccepted.decode(body.bytes, base: base)
        #expect(accepted.jobID == "j-1")
        #expect(accepted.streamURL?.absoluteString == "https://api.example.org/v3/jobs/scans/j-1/stream")
        #expect(accepted.streamToken == "tok")
        #expect(accepted.statusURL.absoluteString == "https://other.example.org/v3/jobs/scans/j-1")
        #expect(accepted.resultsURL.absoluteString == "https://api.example.org/v3/jobs/scans/j-1/results")
        #expect(accepted.cancelURL?.absoluteString == "https://api.example.org/v3/jobs/scans/j-1")
        #expect(accepted.requestID == "req-9")
        #expect(!accepted.needsPolling)
    }

    @Test("shape 2: jobId, status, streamUrl, token (null) — base with a path prefix")
    func shapeTwo() throws {
        let prefixed = URL(string: "https://api.example.org/talaria/")!
        let body =
            #"{"success":true,"data":{"jobId":"j-2","status":"initialized","streamUrl":"v3/jobs/scans/j-2/events","token":null}}"#
        let accepted = try UploadAccepted.decode(body.bytes, base: prefixed)
        #expect(accepted.status == .queued)
        #expect(accepted.streamURL?.absoluteString == "https://api.example.org/talaria/v3/jobs/scans/j-2/events")
        #expect(accepted.streamToken == nil)
        #expect(accepted.statusURL.absoluteString == "https://api.example.org/talaria/v3/jobs/scans/j-2")
    }

    @Test("shape 3: jobId and status only → polling; _links.stream used when data has no stream")
    func shapeThree() throws {
        let polling = try UploadAccepted.decode(
            #"{"success":true,"data":{"jobId":"j-3","status":"queued"}}"#.bytes, base: base)
        #expect(polling.needsPolling)
        #expect(polling.statusURL.absoluteString == "https://api.example.org/v3/jobs/scans/j-3")
        let linked = try UploadAccepted.decode(
            #"{"data":{"jobId":"j-4"},"_links":{"stream":{"href":"/v3/jobs/scans/j-4/stream"}}}"#.bytes, base: base)
        #expect(linked.streamURL?.absoluteString == "https://api.example.org/v3/jobs/scans/j-4/stream")
        // No envelope at all, and a numeric job id.
        let bare = try UploadAccepted.decode(#"{"jobId":12345,"status":"processing"}"#.bytes, base: base)
        #expect(bare.jobID == "12345")
        #expect(bare.status == .processing)
    }

    @Test("a stream URL with a non-HTTP scheme is not followed")
    func schemeGuard() throws {
        let accepted = try UploadAccepted.decode(
            #"{"data":{"jobId":"j","sseUrl":"file:///etc/passwd"}}"#.bytes, base: base)
        #expect(accepted.streamURL == nil)
        #expect(accepted.needsPolling)
    }

    @Test("HTML instead of JSON is a typed error quoting the start of the page, with advice")
    func htmlInsteadOfJSON() {
        let html =
            "<!DOCTYPE html>\n<html><head><title>Wi-Fi login</title></head><body>Please sign in to continue…</body></html>"
        #expect {
            try UploadAccepted.decode(html.bytes, base: base)
        } throws: { error in
            guard case TalariaDecodingError.notJSON(_, let prefix) = error else { return false }
            let text = "\(error)"
            return prefix.hasPrefix("\"<!DOCTYPE html> <html>") && text.contains("captive portal")
                && text.contains("the upload response is not JSON")
        }
        #expect(throws: TalariaDecodingError.notJSON(what: "the upload response", prefix: "nothing (an empty body)")) {
            try UploadAccepted.decode([UInt8](), base: base)
        }
    }

    @Test("JSON without a job id is a typed error naming the field")
    func missingJobID() {
        #expect {
            try UploadAccepted.decode(#"{"success":true,"data":{"status":"queued"}}"#.bytes, base: base)
        } throws: { error in
            guard case TalariaDecodingError.missingField(_, let field, _) = error else { return false }
            return field == "data.jobId"
        }
    }
}
