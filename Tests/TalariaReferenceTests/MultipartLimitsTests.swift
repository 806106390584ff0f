import Foundation
import NIOCore
import Testing

@testable import TalariaReferenceServer

/// Issue 36, point 7: an upload's body is read within a number of parts and of header bytes, only up to its first
/// `photos[]` part, and a refusal never repeats what was sent.
@Suite struct MultipartLimitsTests {
    private func empties(_ count: Int, name: String = "x") -> String {
        String(repeating: "--b\r\nContent-Disposition: form-data; name=\"\(name)\"\r\n\r\n\r\n", count: count)
    }

    @Test func moreThanThePartLimitIsRefusedWithoutEchoingTheParts() throws {
        let limit = UploadForm.Limits().parts
        let fits = Array((empties(limit) + "--b--\r\n").utf8)
        #expect(try UploadForm.parts(of: ByteBuffer(bytes: fits), boundary: "b").count == limit)
        let over = Array((empties(200_000, name: "secret-name") + "--b--\r\n").utf8)
        do {
            _ = try UploadForm.parts(of: ByteBuffer(bytes: over), boundary: "b")
            Issue.record("200,000 parts were read")
        } catch {
            #expect(error.description.contains("more than \(limit) parts"))
            #expect(!error.description.contains("secret-name"))
            #expect(error.description.utf8.count < 200)
        }
    }

    @Test func headerBytesOverTheLimitAreRefused() {
        let long = String(repeating: "h", count: 20_000)
        let body = "--b\r\nContent-Disposition: form-data; name=\"photos[]\"\r\nX-Long: \(long)\r\n\r\nx\r\n--b--\r\n"
        #expect(throws: UploadForm.Failure.self) { try UploadForm.parts(of: ByteBuffer(string: body), boundary: "b") }
    }

    @Test func onlyTheFirstPhotoPartIsReadAndWhatFollowsIsNotParsed() throws {
        let body =
            "--b\r\nContent-Disposition: form-data; name=\"note\"\r\n\r\nhi\r\n"
            + "--b\r\nContent-Disposition: form-data; name=\"photos[]\"\r\nContent-Type: image/jpeg\r\n\r\nFIRST\r\n"
            + "--b\r\nContent-Disposition: form-data; name=\"photos[]\"\r\n\r\nSECOND\r\n"
            + empties(100_000) + "--b\r\nno colon, not even closed"
        let photo = try #require(
            try UploadForm.firstPart(named: "photos[]", of: ByteBuffer(string: body), boundary: "b"))
        #expect(String(buffer: photo.body) == "FIRST")
        #expect(photo.contentType == "image/jpeg")
    }
}

/// Found by Fuzz/FuzzMultipart: a header-name byte from 0x80 up trapped MultipartKit 4.7.1 (an index past its
/// 128-entry table) and ended the whole service; such a body is refused before it is parsed.
@Suite struct MultipartTrapTests {
    @Test func aNonASCIIHeaderNameIsRefusedNotTrapped() {
        for body in [
            "--b\r\nContent-Disposition: form-data; name=\"photos[]\"\r\nCont\u{E9}nt-Type: image/jpeg\r\n\r\nx\r\n--b--\r\n",
            "junk\u{0}--b\r\nC\u{FF}: v\r\n\r\nx\r\n--b--\r\n",
        ] {
            #expect(throws: UploadForm.Failure.self) {
                try UploadForm.parts(of: ByteBuffer(string: body), boundary: "b")
            }
            #expect(throws: UploadForm.Failure.self) {
                try UploadForm.firstPart(named: "photos[]", of: ByteBuffer(string: body), boundary: "b")
            }
        }
    }
}
