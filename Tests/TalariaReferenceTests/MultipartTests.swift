import Foundation
import NIOCore
import Testing

@testable import TalariaReferenceServer

@Suite struct MultipartTests {
    @Test func boundaryFromContentType() throws {
        func boundary(_ contentType: String) throws -> String { try UploadForm.boundary(fromContentType: contentType) }
        #expect(try boundary("multipart/form-data; boundary=abc123") == "abc123")
        #expect(try boundary("Multipart/Form-Data;boundary=\"a b;c\"") == "a b;c")
        #expect(try boundary("multipart/form-data; charset=utf-8; boundary=----x") == "----x")
        #expect(throws: UploadForm.Failure.notMultipart) { try boundary("application/json") }
        #expect(throws: UploadForm.Failure.missingBoundary) { try boundary("multipart/form-data") }
        let tooLong = "multipart/form-data; boundary=" + String(repeating: "b", count: 201)
        #expect(throws: UploadForm.Failure.missingBoundary) { try boundary(tooLong) }
    }

    @Test func parsesPartsWithBinaryBodies() throws {
        // A body containing CRLF, "--", near-delimiters and the boundary mid-line must come back byte for byte.
        let binary: [UInt8] =
            [0xFF, 0xD8, 0x0D, 0x0A, 0x2D, 0x2D, 0x58, 0x0D, 0x0A]
            + Array("--XY not quite, --XYZ only mid-line\r\n--XY".utf8) + [0x00, 0xFF, 0xD9]
        let body = multipartBody(
            boundary: "XYZ",
            parts: [
                (name: "note", filename: nil, contentType: nil, body: Array("hello".utf8)),
                (name: "photos[]", filename: "spine.jpg", contentType: "image/jpeg", body: binary),
            ])
        let parts = try parse(Array("preamble\r\n".utf8) + body + Array("epilogue".utf8), boundary: "XYZ")
        #expect(parts.count == 2)
        #expect(parts[0].name == "note" && Array(parts[0].body.readableBytesView) == Array("hello".utf8))
        #expect(parts[0].contentType == nil)
        #expect(parts[1].name == "photos[]" && parts[1].contentType == "image/jpeg")
        #expect(parts[1].headers.first(name: "content-disposition")?.contains("filename=\"spine.jpg\"") == true)
        #expect(Array(parts[1].body.readableBytesView) == binary)
    }

    @Test func acceptsEmptyParts() throws {
        let text =
            "--b\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n1\r\n"
            + "--b\r\nContent-Disposition: form-data; name=\"e\"\r\n\r\n\r\n--b--\r\n"
        let parts = try parse(Array(text.utf8), boundary: "b")
        #expect(parts.map(\.name) == ["a", "e"])
        #expect(Array(parts[0].body.readableBytesView) == Array("1".utf8) && parts[1].body.readableBytes == 0)
    }

    @Test(arguments: [
        "no delimiter here",
        "--b\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nunterminated",
        "--b\r\nno colon\r\n\r\nx\r\n--b--",
        "--b\nContent-Disposition: form-data; name=\"a\"\n\n1\n--b--\n",
        "--b--\r\n",
    ])
    func rejectsMalformedBodies(text: String) {
        #expect(throws: UploadForm.Failure.self) { try parse(Array(text.utf8), boundary: "b") }
    }

    private func parse(_ bytes: [UInt8], boundary: String) throws -> [UploadForm.Part] {
        try UploadForm.parts(of: ByteBuffer(bytes: bytes), boundary: boundary)
    }
}
