import Foundation
import Testing

@testable import TalariaReferenceServer

@Suite struct FaultParsingTests {
    @Test func parsesEveryDocumentedFault() throws {
        let spellings = [
            "upload:429-ms", "upload:429-ms:700", "upload:429-seconds", "upload:429-date:4", "upload:429-reset",
            "upload:429-legacy", "upload:500", "upload:503", "upload:401", "upload:413", "upload:400-invalid-file",
            "upload:html", "upload:slow:100", "upload:drop", "upload:envelope:stream-token", "upload:no-stream",
            "stream:drop-after:2", "stream:malformed", "stream:duplicate-terminal", "stream:results-key",
            "stream:complete-alias", "stream:stripped", "stream:progress-100", "stream:timeout-event",
            "stream:never-end",
            "stream:huge-line", "stream:failed", "stream:failed-retryable", "stream:bad-isbn",
            "stream:wrong-types", "stream:slow:5",
            "status:404",
            "status:500", "status:slow:5", "results:404", "results:500", "cleanup:500", "cleanup:404", "cleanup:slow:1",
        ]
        for spelling in spellings {
            let fault = try Fault.parse(spelling)
            #expect(fault.spelling == spelling)
        }
        #expect(try Fault.parse("stream:drop-after:3").action == .dropAfter(3))
        #expect(try Fault.parse("upload:envelope:status-only").action == .envelope(.statusOnly))
    }

    @Test func rejectsUnknownFaults() {
        for bad in [
            "upload", "upload:nope", "stream:500", "status:drop", "upload:slow", "upload:slow:x", "stream:drop-after",
            "upload:envelope:weird", "bogus:500", "upload:500:1",
        ] {
            #expect(throws: Fault.ParseError.self, "\(bad)") { try Fault.parse(bad) }
        }
    }
}
