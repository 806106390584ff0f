import Foundation
import HTTPEngine
import Logging
import Recognition
import ServiceLifecycle
import TalariaReferenceServer
import Testing

@testable import swiftwing_recognizer

/// A whole-photo recognizer for unit tests of the service: answers each photo with `answer`.
struct FixedShelfRecognizer: ShelfRecognizing {
    let answer: @Sendable ([UInt8]) throws -> ShelfRecognition

    func recognize(jpeg: [UInt8], progress: @escaping @Sendable (Double, String) async -> Void) async throws
        -> ShelfRecognition
    {
        await progress(0.5, "reading")
        return try answer(jpeg)
    }
}

func spine(_ text: String, x: Double) -> SpineText {
    SpineText(text: text, box: NormalizedBox(x: x, y: 0.1, width: 0.05, height: 0.8), lines: [])
}

func book(_ title: String, _ authors: [String], isbn: String?, confidence: Double, spine: SpineText) -> RecognizedBook {
    RecognizedBook(
        match: SpineMatch(entry: CatalogueEntry(title: title, authors: authors, isbn: isbn), confidence: confidence),
        spine: spine)
}

let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()

/// Runs `app` on a free loopback port for `body`, then stops it.
func withRunning<App: Service>(
    _ makeApp: (@escaping @Sendable (Int) async -> Void) -> App, _ body: (Int) async throws -> Void
) async throws {
    var logger = Logger(label: "recognizer-service-test")
    logger.logLevel = .critical
    let (ports, continuation) = AsyncStream.makeStream(of: Int.self)
    let app = makeApp { port in continuation.yield(port) }
    let services = ServiceGroup(configuration: .init(services: [app], logger: logger))
    try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask { try await services.run() }
        var iterator = ports.makeAsyncIterator()
        let port = try #require(await iterator.next())
        do {
            try await body(port)
        } catch {
            await services.triggerGracefulShutdown()
            throw error
        }
        await services.triggerGracefulShutdown()
        try await group.waitForAll()
    }
}

/// The reference server (its catalogue answers `/search.json` as Open Library would) on a free port.
func withReferenceCatalogue(_ body: (URL) async throws -> Void) async throws {
    var configuration = ReferenceConfiguration()
    configuration.port = 0
    var logger = Logger(label: "reference-catalogue")
    logger.logLevel = .critical
    try await withRunning({ onRunning in
        ReferenceServer.makeApplication(configuration: configuration, logger: logger, onRunning: onRunning)
    }) { port in
        try await body(URL(string: "http://127.0.0.1:\(port)")!)
    }
}

/// One HTTP exchange through the project's own HTTP engine; the body whole (a stream is read until the server ends
/// it).
func fetch(
    _ url: URL, method: String = "GET", headers: [String: String] = [:], body: Data? = nil
) async throws -> (status: Int, body: Data, head: HTTPResponseHead) {
    let engine = CurlEngine()
    defer { engine.shutdown() }
    let method = try #require(HTTPRequest.Method(rawValue: method), "HTTPRequest has no method \(method)")
    // No keep-alive: the server stops at the end of each test without waiting for idle connections.
    let head =
        [HTTPHeader(name: "Connection", value: "close")] + headers.map { HTTPHeader(name: $0.key, value: $0.value) }
    let response = try await engine.send(
        HTTPRequest(
            method: method, url: url, headers: head, body: [UInt8](body ?? Data()),
            timeouts: HTTPTimeouts(connect: .seconds(30), total: .seconds(30), stall: .seconds(30))))
    return (response.status, Data(response.body), response.head)
}

func json(_ data: Data) throws -> [String: Any] {
    try #require(
        try JSONSerialization.jsonObject(with: data) as? [String: Any], "\(String(decoding: data, as: UTF8.self))")
}

/// Uploads `photo` as the daemon does (docs/protocol.md §1).
func upload(_ base: URL, photo: [UInt8], key: String, bearer: String? = nil) async throws -> (
    status: Int, body: Data, head: HTTPResponseHead
) {
    let boundary = "swiftwing-test-\(UUID().uuidString)"
    var body = Data(
        "--\(boundary)\r\nContent-Disposition: form-data; name=\"photos[]\"; filename=\"spine.jpg\"\r\n".utf8)
    body += Data("Content-Type: image/jpeg\r\n\r\n".utf8) + Data(photo) + Data("\r\n--\(boundary)--\r\n".utf8)
    var headers = [
        "Content-Type": "multipart/form-data; boundary=\(boundary)", "Idempotency-Key": key,
        "X-Device-ID": "device-test",
    ]
    if let bearer { headers["Authorization"] = "Bearer \(bearer)" }
    return try await fetch(base.appendingPathComponent("v3/jobs/scans"), method: "POST", headers: headers, body: body)
}

/// A structurally valid baseline JPEG of 64 x 48 up to its first scan (no pixel needs decoding), its scan bytes
/// made of `seed`: tiny photos the service accepts, told apart by their seed.
func tinyJPEG(_ seed: String) -> [UInt8] {
    var bytes: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10] + Array("JFIF".utf8) + [0, 1, 1, 0, 0, 1, 0, 1, 0, 0]
    bytes += [0xFF, 0xC0, 0x00, 0x11, 0x08, 0, 48, 0, 64, 3, 1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1]
    bytes += [0xFF, 0xDA, 0x00, 0x0C, 3, 1, 0, 2, 0x11, 3, 0x11, 0, 0x3F, 0]
    return bytes + Array(seed.utf8) + [0xFF, 0xD9]
}
