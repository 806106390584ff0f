import Foundation
import Testing

@testable import Talaria

private let base = URL(string: "https://api.example.org/")!

@Suite("Endpoints and the upload request (docs/protocol.md §1, §4)")
struct RequestTests {
    @Test("endpoints under a base with or without a trailing slash or path prefix")
    func endpoints() {
        let plain = TalariaEndpoints(base: URL(string: "https://api.example.org")!)
        #expect(plain.upload.absoluteString == "https://api.example.org/v3/jobs/scans")
        let prefixed = TalariaEndpoints(base: URL(string: "https://example.org/talaria")!)
        #expect(prefixed.job("j 1").absoluteString == "https://example.org/talaria/v3/jobs/scans/j%201")
        #expect(prefixed.results("j").absoluteString == "https://example.org/talaria/v3/jobs/scans/j/results")
        #expect(prefixed.cleanup("j").absoluteString == "https://example.org/talaria/v3/jobs/scans/j/cleanup")
        #expect(TalariaEndpoints.allowsPlainHTTP(URL(string: "http://127.0.0.1:8080/")!))
        #expect(TalariaEndpoints.allowsPlainHTTP(URL(string: "http://[::1]:8080/")!))
        #expect(TalariaEndpoints.allowsPlainHTTP(URL(string: "http://localhost/")!))
        #expect(!TalariaEndpoints.allowsPlainHTTP(URL(string: "http://api.example.org/")!))
        #expect(!TalariaEndpoints.allowsPlainHTTP(URL(string: "http://127.0.0.1.evil.example/")!))
        #expect(TalariaEndpoints.allowsPlainHTTP(URL(string: "https://api.example.org/")!))
    }

    @Test("multipart body: one photos[] part named spine.jpg; headers carry ids and the key, redacted for logs")
    func uploadRequest() throws {
        let scan = UUID(uuidString: "5E1F0C4A-0000-4000-8000-000000000001")!
        let device = UUID(uuidString: "D0D0D0D0-0000-4000-8000-000000000002")!
        let jpeg: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0, 0x0D, 0x0A, 0xFF, 0xD9]
        let request = ScanUploadRequest(
            endpoints: TalariaEndpoints(base: URL(string: "https://api.example.org/")!),
            idempotencyKey: scan.uuidString.lowercased(), deviceID: device,
            apiKey: "sk-secret", version: "0.1.0", boundary: "BOUNDARY")
        let head =
            Array("--BOUNDARY\r\n".utf8)
            + Array("Content-Disposition: form-data; name=\"photos[]\"; filename=\"spine.jpg\"\r\n".utf8)
            + Array("Content-Type: image/jpeg\r\n\r\n".utf8)
        let tail = Array("\r\n--BOUNDARY--\r\n".utf8)
        // The envelope a streamed photo is sent in, and the same bytes around a photo in memory.
        #expect(request.bodyPrefix == head)
        #expect(request.bodySuffix == tail)
        #expect(request.body(jpeg: jpeg) == head + jpeg + tail)
        let headers = Dictionary(uniqueKeysWithValues: request.headers.map { ($0.name, $0.value) })
        #expect(headers["Idempotency-Key"] == "5e1f0c4a-0000-4000-8000-000000000001")
        #expect(headers["X-Device-ID"] == "d0d0d0d0-0000-4000-8000-000000000002")
        #expect(headers["Authorization"] == "Bearer sk-secret")
        #expect(headers["Content-Type"] == "multipart/form-data; boundary=BOUNDARY")
        #expect(headers["User-Agent"] == "swiftwing/0.1.0")
        #expect(!request.redactedHeaders.map(\.value).joined().contains("sk-secret"))
        let anonymous = ScanUploadRequest(
            endpoints: TalariaEndpoints(base: URL(string: "https://api.example.org/")!),
            idempotencyKey: scan.uuidString.lowercased(), deviceID: device,
            apiKey: nil, version: "0.1.0")
        #expect(!anonymous.headers.contains { $0.name == "Authorization" })
    }
}
