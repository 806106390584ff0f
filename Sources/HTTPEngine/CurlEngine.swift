import CCurl
import Foundation
import Logging
import SwiftWingCore

/// # The HTTP engine
///
/// `CurlEngine` is SwiftWing's one real ``HTTPTransport``: libcurl's multi interface driven by a
/// single thread named `swiftwing-http` (see ``TransferLoop``). Callers never block the Swift
/// cooperative pool: `send` and `stream` queue a command and await its outcome.
///
/// Policy, the same for every transfer:
/// - `https://` with TLS 1.3 or newer, certificate and host name always verified, HTTP/2 when the
///   server offers it through ALPN. `Configuration.caFile` trusts that file's CAs instead of the
///   system store (a private CA, or the test rig's self-signed certificate).
/// - Plain `http://` only to loopback (127.0.0.0/8, `::1`, `localhost`); anything else is refused
///   with ``HTTPError/insecureURL(_:)`` before a connection is made.
/// - No redirects are followed; a 3xx is a response for the caller to judge.
/// - Proxies come from the environment (`https_proxy`, `http_proxy`, `no_proxy`) exactly as the
///   curl tool reads them: the engine never sets `CURLOPT_PROXY`.
/// - Logs (label `swiftwing.http`, debug level) carry method, URL without user info or query,
///   status, bytes and milliseconds: never header values (the API key travels in `Authorization`).
///
/// - A body is bytes in memory or a file between two in-memory pieces (``HTTPFileBody``), read from
///   disk in curl's chunks, so an upload holds no copy of the photo; curl can rewind it to send it
///   again, and a file that ends early fails the transfer rather than send a short body.
/// - Timeouts: connect and total from ``HTTPTimeouts``; a stall (no byte moving either way for
///   `stall`) ends the transfer within about a second of the limit.
///
/// Cancelling the task that iterates a stream ends its loop as with any `AsyncThrowingStream`:
/// quietly (`nil`), or with `.cancelled` when it was waiting for data at that moment; the transfer
/// is cancelled and its connection closed either way. Streams are bounded: when a consumer falls
/// more than `streamBufferBytes` behind, the transfer is paused (`CURL_WRITEFUNC_PAUSE`) until
/// half of it drained.
public final class CurlEngine: HTTPTransport {
    public struct Configuration: Sendable {
        /// The `User-Agent` header.
        public var userAgent: String
        /// A PEM file with the CA certificate(s) to trust instead of the system store (a private CA,
        /// or the test rig's self-signed certificate); `nil` for the system store.
        public var caFile: String?
        /// The largest body `send` buffers; larger responses fail with `.responseTooLarge`.
        public var maximumBodyBytes: Int
        /// Connections open at once over all hosts; more transfers wait in curl's queue.
        public var maximumConcurrentConnections: Int
        /// How far a stream's consumer may fall behind before the transfer pauses.
        public var streamBufferBytes: Int

        public init(
            userAgent: String = "swiftwing/\(SwiftWingVersion.string)", caFile: String? = nil,
            maximumBodyBytes: Int = 16 << 20, maximumConcurrentConnections: Int = 8, streamBufferBytes: Int = 4 << 20
        ) {
            self.userAgent = userAgent
            self.caFile = caFile
            self.maximumBodyBytes = maximumBodyBytes
            self.maximumConcurrentConnections = maximumConcurrentConnections
            self.streamBufferBytes = streamBufferBytes
        }
    }

    /// What the linked libcurl can do, for the doctor report.
    public struct VersionInfo: Hashable, Sendable {
        /// e.g. "7.88.1".
        public var libcurl: String
        /// The TLS library, e.g. "GnuTLS/3.7.9".
        public var sslBackend: String
        public var supportsHTTP2: Bool
        /// Whether the TLS library is new enough for TLS 1.3 (OpenSSL 1.1.1, GnuTLS 3.6.5).
        public var supportsTLS13: Bool
    }

    public let configuration: Configuration
    private let loop: TransferLoop
    private let logger: Logger
    /// Times stalls and transfers: the daemon's `ContinuousClock`, in tests a clock they advance.
    private let clock: ErasedClock

    public init(
        configuration: Configuration = Configuration(), clock: any Clock<Duration> = ContinuousClock(),
        logger: Logger = Logger(label: "swiftwing.http")
    ) {
        self.configuration = configuration
        self.logger = logger
        self.clock = ErasedClock(clock)
        loop = TransferLoop(configuration: configuration, logger: logger)
    }

    deinit {
        loop.stop()
    }

    /// Fails every pending and active transfer with `.engineStopped`, then ends and joins the
    /// transfer thread. Later requests fail at once with `.engineStopped`. Idempotent.
    public func shutdown() {
        loop.stop()
    }

    public func send(_ request: HTTPRequest) async throws(HTTPError) -> HTTPResponse {
        let target = try TransferTarget(request.url)
        let slot = OneShot<Result<HTTPResponse, HTTPError>>()
        let transfer = Transfer(request: request, target: target, delivery: .buffered(slot), clock: clock)
        let loop = self.loop
        let result = await withTaskCancellationHandler {
            loop.submit(transfer)
            return await slot.value()
        } onCancel: {
            loop.cancel(transfer)
        }
        return try result.get()
    }

    public func stream(_ request: HTTPRequest) -> AsyncThrowingStream<HTTPStreamPart, any Error> {
        let target: TransferTarget
        do {
            target = try TransferTarget(request.url)
        } catch {
            return AsyncThrowingStream { $0.finish(throwing: error) }
        }
        let buffer = StreamBuffer(pauseAboveBytes: configuration.streamBufferBytes)
        let transfer = Transfer(request: request, target: target, delivery: .streamed(buffer), clock: clock)
        let subscription = StreamSubscription(buffer: buffer, transfer: transfer, loop: loop)
        loop.submit(transfer)
        return AsyncThrowingStream(unfolding: { try await subscription.next() })
    }

    /// libcurl's own summary, e.g. "libcurl/7.88.1 GnuTLS/3.7.9 zlib/1.2.13 …".
    /// The corresponding C function is `curl_version`.
    public static var versionSummary: String { String(cString: curl_version()) }

    public static var versionInfo: VersionInfo {
        guard let data = sw_curl_version_info()?.pointee else {
            return VersionInfo(libcurl: "unknown", sslBackend: "none", supportsHTTP2: false, supportsTLS13: false)
        }
        let ssl = data.ssl_version.map { String(cString: $0) } ?? "none"
        return VersionInfo(
            libcurl: data.version.map { String(cString: $0) } ?? "unknown", sslBackend: ssl,
            supportsHTTP2: data.features & CURL_VERSION_HTTP2 != 0, supportsTLS13: Self.supportsTLS13(ssl))
    }

    /// Judged from the TLS library's name and version, e.g. "OpenSSL/3.0.19".
    static func supportsTLS13(_ sslVersion: String) -> Bool {
        let parts = sslVersion.split(separator: "/", maxSplits: 1)
        guard parts.count == 2 else { return false }
        let numbers = parts[1].split(whereSeparator: { !$0.isNumber }).prefix(3).compactMap { Int($0) }
        let version = numbers + Array(repeating: 0, count: max(0, 3 - numbers.count))
        switch parts[0].lowercased() {
        case "openssl": return version.lexicographicallyPrecedes([1, 1, 1]) == false
        case "gnutls": return version.lexicographicallyPrecedes([3, 6, 5]) == false
        case "wolfssl": return version.lexicographicallyPrecedes([3, 15, 0]) == false
        case "boringssl", "libressl", "rustls": return true
        default: return false
        }
    }
}

/// The consumer's side of one `stream`: pulls parts from the buffer, asks the loop to resume a
/// paused transfer, and cancels the transfer when the consumer's task is cancelled or the stream is
/// dropped (`deinit`: the iterator and the stream were released without reaching the end).
final class StreamSubscription: Sendable {
    private let buffer: StreamBuffer
    private let transfer: Transfer
    private let loop: TransferLoop

    init(buffer: StreamBuffer, transfer: Transfer, loop: TransferLoop) {
        self.buffer = buffer
        self.transfer = transfer
        self.loop = loop
    }

    deinit {
        cancel()
    }

    func next() async throws(HTTPError) -> HTTPStreamPart? {
        let buffer = self.buffer
        let result = await withTaskCancellationHandler {
            await buffer.next()
        } onCancel: {
            self.cancel()
        }
        if buffer.takeResumeRequest() { loop.resume(transfer) }
        return try result.get()
    }

    private func cancel() {
        buffer.consumerLeft()
        loop.cancel(transfer)
    }
}
