import Foundation
import Testing

@testable import TalariaReferenceServer

@Suite struct UploadTests {
    @Test func happyPathReturns202WithTheEnvelope() async throws {
        try await withServer { server in
            let response = try await server.upload()
            #expect(response.status == 202)
            #expect(response.header("content-type") == "application/json")
            let body = try response.json()
            #expect(body["success"] as? Bool == true)
            let data = try #require(body["data"] as? [String: Any])
            let id = try #require(data["jobId"] as? String)
            #expect(data["sseUrl"] as? String == "/v3/jobs/scans/\(id)/stream")
            #expect(data["statusUrl"] as? String == "/v3/jobs/scans/\(id)")
            #expect((data["authToken"] as? String)?.isEmpty == false)
            let metadata = try #require(body["metadata"] as? [String: Any])
            #expect(metadata["timestamp"] is String && metadata["requestId"] is String)
            let links = try #require(body["_links"] as? [String: Any])
            #expect(links["self"] as? String == "/v3/jobs/scans/\(id)")
            #expect(links["stream"] as? String == "/v3/jobs/scans/\(id)/stream")
            #expect(links["cancel"] as? String == "/v3/jobs/scans/\(id)")
            let stats = try await server.stats()
            #expect(stats["jobsCreated"] as? Int == 1 && stats["uploads"] as? Int == 1)
            #expect((stats["booksByJob"] as? [String: [String]])?[id]?.isEmpty == false)
        }
    }

    @Test func envelopeShapesPerRequestAndPerRun() async throws {
        try await withServer { server in
            try await server.queueFaults([
                "upload:envelope:sse-absolute", "upload:envelope:stream-token", "upload:envelope:status-only",
                "upload:no-stream",
            ])
            let absolute = try #require(try await server.upload(key: "a").json()["data"] as? [String: Any])
            #expect(
                (absolute["sseUrl"] as? String)?.hasPrefix("http://127.0.0.1:\(server.port)/v3/jobs/scans/") == true)
            #expect((absolute["statusUrl"] as? String)?.hasPrefix("http://127.0.0.1:\(server.port)/") == true)
            #expect(absolute["authToken"] is String)

            let token = try #require(try await server.upload(key: "b").json()["data"] as? [String: Any])
            #expect(token["status"] as? String == "queued" && token["streamUrl"] is String && token["token"] is String)
            #expect(token["sseUrl"] == nil)

            let statusOnly = try await server.upload(key: "c").json()
            let statusData = try #require(statusOnly["data"] as? [String: Any])
            #expect(Set(statusData.keys) == ["jobId", "status"])
            #expect((statusOnly["_links"] as? [String: Any])?["stream"] == nil)

            let noStream = try #require(try await server.upload(key: "d").json()["data"] as? [String: Any])
            #expect(noStream["sseUrl"] == nil && noStream["streamUrl"] == nil && noStream["statusUrl"] is String)

            // Queue consumed: back to the run's default.
            let plain = try #require(try await server.upload(key: "e").json()["data"] as? [String: Any])
            #expect((plain["sseUrl"] as? String)?.hasPrefix("/") == true)
        }
        try await withServer({ $0.envelope = .streamToken }) { server in
            let data = try #require(try await server.upload().json()["data"] as? [String: Any])
            #expect(data["streamUrl"] is String && data["token"] is String)
        }
    }

    @Test func repeatedIdempotencyKeyReturnsTheSameJob() async throws {
        try await withServer { server in
            let first = try await server.createJob(key: "same", image: jpeg("one"))
            let second = try await server.createJob(key: "same", image: jpeg("other image"))
            let third = try await server.createJob(key: "different", image: jpeg("one"))
            #expect(first.id == second.id && first.token == second.token)
            #expect(third.id != first.id)
            let stats = try await server.stats()
            #expect(stats["jobsCreated"] as? Int == 2)
            #expect(stats["uploads"] as? Int == 3)
            #expect(stats["uploadsByIdempotencyKey"] as? [String: Int] == ["same": 2, "different": 1])
            #expect(stats["jobByIdempotencyKey"] as? [String: String] == ["same": first.id, "different": third.id])
        }
    }

    @Test func validationErrorsAreProblemDetails() async throws {
        try await withServer { server in
            let wrongPart = try await server.upload(partName: "image")
            #expect(wrongPart.status == 400)
            #expect(wrongPart.header("content-type") == "application/problem+json")
            let problem = try wrongPart.json()
            #expect(problem["code"] as? String == "INVALID_REQUEST")
            #expect((problem["detail"] as? String)?.contains("photos[]") == true)
            for key in ["type", "title", "status", "detail", "instance", "code", "retryable"] {
                #expect(problem[key] != nil, "\(key)")
            }

            let wrongType = try await server.upload(partType: "image/png")
            #expect(wrongType.status == 400 && (wrongType.object?["code"] as? String) == "INVALID_FILE")
            let notJPEG = try await server.upload(image: Array("GIF89a....".utf8))
            #expect(notJPEG.status == 400 && (notJPEG.object?["code"] as? String) == "INVALID_FILE")
            let noDevice = try await server.upload(device: nil)
            #expect(noDevice.status == 400 && (noDevice.object?["detail"] as? String)?.contains("X-Device-ID") == true)
            let noKey = try await server.upload(key: nil)
            #expect(noKey.status == 400 && (noKey.object?["detail"] as? String)?.contains("Idempotency-Key") == true)

            // MultipartKit scans about 1 MB/s in a debug build, so a 10 MB upload may take longer than the
            // client's default 10 s.
            let tooLarge = try await server.upload(
                image: [0xFF, 0xD8] + [UInt8](repeating: 0x41, count: 10_000_000 - 1), timeout: 120)
            #expect(tooLarge.status == 413 && (tooLarge.object?["code"] as? String) == "FILE_TOO_LARGE")
            let justRight = try await server.upload(
                key: "big", image: [0xFF, 0xD8] + [UInt8](repeating: 0x41, count: 10_000_000 - 2), timeout: 120)
            #expect(justRight.status == 202)
            #expect(try await server.stats()["jobsCreated"] as? Int == 1)
        }
    }

    @Test func malformedMultipartBodiesAreProblemDetails() async throws {
        try await withServer { server in
            let head = "--b\r\nContent-Disposition: form-data; name=\"photos[]\"\r\nContent-Type: image/jpeg\r\n\r\n"
            let truncated = Array(head.utf8) + jpeg("cut off")
            let bareLineFeeds =
                Array(head.replacingOccurrences(of: "\r\n", with: "\n").utf8) + jpeg("lf") + Array("\n--b--\n".utf8)
            let photo = (
                name: "photos[]", filename: nil as String?, contentType: "image/jpeg" as String?, body: jpeg("ok")
            )
            let wellFormed = multipartBody(boundary: "b", parts: [photo])
            let cases: [(contentType: String, body: [UInt8], detail: String)] = [
                ("multipart/form-data; boundary=b", truncated, "ends inside a part"),
                ("multipart/form-data; boundary=b", bareLineFeeds, "malformed multipart body"),
                ("multipart/form-data; boundary=other", wellFormed, "no part delimited by --other"),
                ("multipart/form-data", wellFormed, "has no boundary"),
                ("image/jpeg", jpeg("raw"), "not multipart/form-data"),
            ]
            for (contentType, body, detail) in cases {
                let response = try await server.upload(contentType: contentType, body: body)
                #expect(response.status == 400, "\(contentType): \(response.text)")
                #expect(response.header("content-type") == "application/problem+json")
                #expect(response.object?["code"] as? String == "INVALID_REQUEST")
                #expect((response.object?["detail"] as? String)?.contains(detail) == true, "\(response.text)")
            }
            #expect(try await server.stats()["jobsCreated"] as? Int == 0)
            let accepted = try await server.upload(contentType: "multipart/form-data; boundary=b", body: wellFormed)
            #expect(accepted.status == 202)
        }
    }

    @Test func apiKeyIsChecked() async throws {
        try await withServer({ $0.apiKey = "sekret" }) { server in
            let missing = try await server.upload()
            #expect(missing.status == 401 && (missing.object?["code"] as? String) == "UNAUTHORIZED")
            let wrong = try await server.upload(bearer: "nope")
            #expect(wrong.status == 401)
            let right = try await server.upload(bearer: "sekret")
            #expect(right.status == 202)
        }
    }

    @Test func identifiersTooLongOrWithControlCharactersAreRefused() async throws {
        try await withServer { server in
            let long = try await server.upload(key: String(repeating: "k", count: 257))
            #expect(long.status == 400 && long.text.contains("Idempotency-Key"), "\(long.text)")
            let escape = try await server.upload(key: "scan\u{1B}[2J")
            #expect(escape.status == 400, "\(escape.text)")
            let device = try await server.upload(device: String(repeating: "d", count: 300))
            #expect(device.status == 400 && device.text.contains("X-Device-ID"), "\(device.text)")
            #expect(try await server.upload(key: String(repeating: "k", count: 256)).status == 202)
            #expect(try await server.stats()["jobsCreated"] as? Int == 1)
        }
    }

    @Test func rateLimitFormsCarryTheirHints() async throws {
        try await withServer { server in
            try await server.queueFaults([
                "upload:429-ms", "upload:429-seconds", "upload:429-date", "upload:429-reset", "upload:429-legacy",
                "upload:429-ms:700",
            ])
            let ms = try await server.upload()
            #expect(ms.status == 429 && ms.header("content-type") == "application/problem+json")
            #expect(ms.object?["retryAfterMs"] as? Int == 1500)
            #expect(
                ms.object?["code"] as? String == "RATE_LIMIT_EXCEEDED" && (ms.object?["retryable"] as? Bool) == true)

            let seconds = try await server.upload()
            #expect(seconds.status == 429 && seconds.header("retry-after") == "2")

            let date = try await server.upload()
            let dateHeader = try #require(date.header("retry-after"))
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "GMT")
            formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
            let retryAt = try #require(formatter.date(from: dateHeader), "not an HTTP date: \(dateHeader)")
            #expect(retryAt.timeIntervalSinceNow > 1 && retryAt.timeIntervalSinceNow < 6)

            let reset = try await server.upload()
            let resetMs = try #require(reset.header("x-ratelimit-reset").flatMap { Int($0) })
            let nowMs = Int(Date().timeIntervalSince1970 * 1000)
            #expect(resetMs > nowMs && resetMs < nowMs + 5000)

            let legacy = try await server.upload()
            #expect(legacy.status == 429 && legacy.header("content-type") == "application/json")
            let legacyBody = try legacy.json()
            #expect(legacyBody["error"] is String && legacyBody["code"] as? String == "RATE_LIMIT_EXCEEDED")
            #expect((legacyBody["details"] as? [String: Any])?["retryAfter"] as? Int == 2)

            #expect(try await server.upload().json()["retryAfterMs"] as? Int == 700)
            #expect(try await server.upload().status == 202)
            #expect(try await server.stats()["uploads"] as? Int == 7)
        }
    }

    @Test func serverErrorsHtmlAndDroppedConnections() async throws {
        try await withServer { server in
            try await server.queueFaults([
                "upload:500", "upload:503", "upload:html", "upload:401", "upload:413", "upload:400-invalid-file",
                "upload:drop",
            ])
            let e500 = try await server.upload()
            #expect(e500.status == 500 && e500.header("content-type") == "application/json")
            #expect(e500.object?["code"] as? String == "INTERNAL_ERROR")
            let e503 = try await server.upload()
            #expect(e503.status == 503 && (e503.object?["retryable"] as? Bool) == true)
            let html = try await server.upload()
            #expect(
                html.status == 502 && html.header("content-type")?.hasPrefix("text/html") == true
                    && html.text.contains("<html>"))
            #expect(try await server.upload().status == 401)
            #expect(try await server.upload().status == 413)
            #expect(try await server.upload().json()["code"] as? String == "INVALID_FILE")
            await #expect(throws: RawHTTPError.self) { _ = try await server.upload() }
            // Nothing was created by any of these; the next upload works.
            #expect(try await server.stats()["jobsCreated"] as? Int == 0)
            #expect(try await server.upload().status == 202)
        }
    }

    @Test func runLevelFaultsApplyToEveryRequest() async throws {
        let fault = try Fault.parse("upload:503")
        try await withServer({ $0.faults = [fault] }) { server in
            let first = try await server.upload(key: "x")
            let second = try await server.upload(key: "x")
            #expect(first.status == 503 && second.status == 503)
        }
    }

    @Test func slowFaultDelaysTheResponse() async throws {
        try await withServer { server in
            try await server.queueFaults(["upload:slow:300"])
            let start = ContinuousClock.now
            #expect(try await server.upload().status == 202)
            #expect(ContinuousClock.now - start >= .milliseconds(300))
        }
    }

    @Test func badFaultListIsRejected() async throws {
        try await withServer { server in
            let response = try await server.request(
                "POST", "/_faults", body: Array(#"{"faults":["upload:nope"]}"#.utf8))
            #expect(response.status == 400)
            #expect((response.object?["detail"] as? String)?.contains("upload:nope") == true)
        }
    }
}
