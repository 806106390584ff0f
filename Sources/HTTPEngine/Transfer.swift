import CCurl
import Foundation
import SwiftWingCore
import Synchronization

/// Where a transfer's outcome goes.
enum TransferDelivery: Sendable {
    /// `send`: the whole response, or why there is none.
    case buffered(OneShot<Result<HTTPResponse, HTTPError>>)
    /// `stream`: the head, body chunks, then the end.
    case streamed(StreamBuffer)
}

/// One request and its curl easy handle.
///
/// Everything but `cancelRequested` and the completion flag is touched only by the transfer thread
/// (``TransferLoop``), which is why the class is `@unchecked Sendable`: other threads only hold it
/// to name it in a cancel command.
final class Transfer: @unchecked Sendable {
    let request: HTTPRequest
    let target: TransferTarget
    let delivery: TransferDelivery
    /// Set by any thread that wants the transfer gone; the loop and the data callbacks honour it.
    let cancelRequested = Atomic<Bool>(false)
    private let completed = Atomic<Bool>(false)

    // Transfer-thread state.
    private(set) var easy: UnsafeMutableRawPointer?
    private var headerList: UnsafeMutablePointer<curl_slist>?
    /// curl does not copy POSTFIELDS: the bytes live here until the handle is cleaned up.
    private var bodyCopy: UnsafeMutableRawBufferPointer?
    /// A file body's descriptor, open from `prepare` until the handle is cleaned up.
    private var fileBody: FileBodyReader?
    private let errorBuffer = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
    private var head = ResponseHeadParser()
    private var headDelivered = false
    private var body: [UInt8] = []
    private var maximumBodyBytes = 0
    private(set) var receivedBytes = 0
    /// Why a callback stopped the transfer on purpose (too large, cancelled); wins over curl's code.
    private var refusal: HTTPError?
    /// When bytes last moved (either way); the stall clock starts once the first bytes moved.
    private var lastProgress: ErasedClock.Instant?
    private var progressCounts: (download: Int64, upload: Int64) = (0, 0)
    /// This engine paused the transfer for a slow stream consumer: not a stall.
    var isPausedForConsumer = false
    let clock: ErasedClock
    let startedAt: ErasedClock.Instant

    init(request: HTTPRequest, target: TransferTarget, delivery: TransferDelivery, clock: ErasedClock) {
        self.request = request
        self.target = target
        self.delivery = delivery
        self.clock = clock
        startedAt = clock.now
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
    }

    deinit {
        releaseHandle()
        errorBuffer.deallocate()
    }

    var isCompleted: Bool { completed.load(ordering: .acquiring) }
    var status: Int { head.status }

    // MARK: Setting up (transfer thread)

    /// Creates and configures the easy handle. The corresponding C functions are `curl_easy_init`
    /// and `curl_easy_setopt`.
    func prepare(_ configuration: CurlEngine.Configuration) throws(HTTPError) {
        guard let easy = curl_easy_init() else {
            throw .other(code: Int(CURLE_OUT_OF_MEMORY.rawValue), detail: "curl_easy_init failed")
        }
        self.easy = easy
        maximumBodyBytes = configuration.maximumBodyBytes
        let timeouts = request.timeouts

        try set(CURLOPT_URL, target.url)
        try set(CURLOPT_NOSIGNAL, 1)
        try set(CURLOPT_PROTOCOLS_STR, "http,https")
        try set(CURLOPT_REDIR_PROTOCOLS_STR, "http,https")
        try set(CURLOPT_FOLLOWLOCATION, 0)
        try set(CURLOPT_HTTP_VERSION, Int(CURL_HTTP_VERSION_2TLS))
        try set(CURLOPT_SSLVERSION, Int(CURL_SSLVERSION_TLSv1_3))
        try set(CURLOPT_SSL_VERIFYPEER, 1)
        try set(CURLOPT_SSL_VERIFYHOST, 2)
        if let caFile = configuration.caFile { try set(CURLOPT_CAINFO, caFile) }
        try set(CURLOPT_CONNECTTIMEOUT_MS, Self.milliseconds(timeouts.connect))
        try set(CURLOPT_TIMEOUT_MS, timeouts.total.map(Self.milliseconds) ?? 0)
        if let stall = timeouts.stall {
            // curl's low-speed check averages over about five seconds, so after a burst it notices a
            // stall seconds late; it stays as the backstop for a server that never answers at all,
            // and `progressed` below ends a stall once the response started within about a second.
            try set(CURLOPT_LOW_SPEED_LIMIT, 1)
            try set(CURLOPT_LOW_SPEED_TIME, max(1, (Self.milliseconds(stall) + 999) / 1000))
        }
        try set(CURLOPT_USERAGENT, configuration.userAgent)
        try set(CURLOPT_TCP_KEEPALIVE, 1)
        try set(CURLOPT_TCP_KEEPIDLE, 60)
        try set(CURLOPT_TCP_KEEPINTVL, 20)
        // A proxy's CONNECT reply is not the server's response.
        try set(CURLOPT_SUPPRESS_CONNECT_HEADERS, 1)
        // Proxies: CURLOPT_PROXY is left unset on purpose, so curl reads http_proxy / https_proxy /
        // no_proxy from the environment exactly as the curl tool does.
        try check(sw_curl_easy_setopt_pointer(easy, CURLOPT_ERRORBUFFER, errorBuffer), CURLOPT_ERRORBUFFER)

        var lines = try request.headers.map { header throws(HTTPError) -> String in
            guard !header.name.contains(where: \.isNewline), !header.value.contains(where: \.isNewline),
                !header.name.isEmpty, !header.name.contains(":")
            else {
                throw .other(
                    code: Int(CURLE_BAD_FUNCTION_ARGUMENT.rawValue),
                    detail: "a request header name or value contains a line break or colon; fix the caller")
            }
            // "Name;" is curl's way to send a header with an empty value ("Name:" would remove it).
            return header.value.isEmpty ? "\(header.name);" : "\(header.name): \(header.value)"
        }
        switch request.method {
        case .get:
            try set(CURLOPT_HTTPGET, 1)
        case .post:
            try setBody()
            // Send the body at once instead of waiting up to a second for `100 Continue`.
            lines.append("Expect:")
        case .delete:
            try set(CURLOPT_CUSTOMREQUEST, "DELETE")
            if !request.body.isEmpty {
                try setBody()
                lines.append("Expect:")
            }
        }
        for line in lines {
            guard let appended = curl_slist_append(headerList, line) else {
                throw .other(code: Int(CURLE_OUT_OF_MEMORY.rawValue), detail: "curl_slist_append failed")
            }
            headerList = appended
        }
        if let headerList {
            try check(sw_curl_easy_setopt_slist(easy, CURLOPT_HTTPHEADER, headerList), CURLOPT_HTTPHEADER)
        }

        let context = Unmanaged.passUnretained(self).toOpaque()
        try check(
            sw_curl_easy_set_header_callback(
                easy,
                { data, size, count, context in
                    let transfer = Unmanaged<Transfer>.fromOpaque(context!).takeUnretainedValue()
                    return transfer.receivedHeaderLine(UnsafeRawBufferPointer(start: data, count: size * count))
                }, context), CURLOPT_HEADERFUNCTION)
        try check(
            sw_curl_easy_set_write_callback(
                easy,
                { data, size, count, context in
                    let transfer = Unmanaged<Transfer>.fromOpaque(context!).takeUnretainedValue()
                    return transfer.receivedBody(UnsafeRawBufferPointer(start: data, count: size * count))
                }, context), CURLOPT_WRITEFUNCTION)
        try check(
            sw_curl_easy_set_progress_callback(
                easy,
                { context, _, downloaded, _, uploaded in
                    let transfer = Unmanaged<Transfer>.fromOpaque(context!).takeUnretainedValue()
                    return transfer.progressed(downloaded: downloaded, uploaded: uploaded) ? 0 : 1
                }, context), CURLOPT_XFERINFOFUNCTION)
    }

    private func setBody() throws(HTTPError) {
        switch request.body {
        case .bytes(let bytes):
            let copy = UnsafeMutableRawBufferPointer.allocate(byteCount: max(bytes.count, 1), alignment: 1)
            bytes.withUnsafeBytes { copy.copyMemory(from: $0) }
            bodyCopy = copy
            try setBodySize(bytes.count)
            try check(sw_curl_easy_setopt_pointer(easy, CURLOPT_POSTFIELDS, copy.baseAddress), CURLOPT_POSTFIELDS)
        case .file(let file):
            // The descriptor lives as long as the handle; the size announced is the file's now.
            let reader = try FileBodyReader(file)
            fileBody = reader
            try set(CURLOPT_POST, 1)
            try setBodySize(reader.totalSize)
            let context = Unmanaged.passUnretained(self).toOpaque()
            try check(
                sw_curl_easy_set_read_callback(
                    easy,
                    { buffer, size, count, context in
                        let transfer = Unmanaged<Transfer>.fromOpaque(context!).takeUnretainedValue()
                        return transfer.bodyWanted(UnsafeMutableRawBufferPointer(start: buffer, count: size * count))
                    }, context), CURLOPT_READFUNCTION)
            try check(
                sw_curl_easy_set_seek_callback(
                    easy,
                    { context, offset, origin in
                        let transfer = Unmanaged<Transfer>.fromOpaque(context!).takeUnretainedValue()
                        return transfer.bodyRewound(to: offset, origin: origin)
                            ? sw_curl_seek_ok() : sw_curl_seek_fail()
                    }, context), CURLOPT_SEEKFUNCTION)
        }
    }

    private func setBodySize(_ count: Int) throws(HTTPError) {
        try check(
            sw_curl_easy_setopt_off_t(easy, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(count)), CURLOPT_POSTFIELDSIZE_LARGE
        )
    }

    private func set(_ option: CURLoption, _ value: Int) throws(HTTPError) {
        try check(sw_curl_easy_setopt_long(easy, option, value), option)
    }

    private func set(_ option: CURLoption, _ value: String) throws(HTTPError) {
        try check(sw_curl_easy_setopt_string(easy, option, value), option)  // curl copies strings
    }

    private func check(_ code: CURLcode, _ option: CURLoption) throws(HTTPError) {
        guard code != CURLE_OK else { return }
        let text = String(cString: curl_easy_strerror(code))
        throw .other(
            code: Int(code.rawValue), detail: "libcurl refused option \(option.rawValue): \(text); is libcurl too old?")
    }

    /// Frees the easy handle and what it pointed at. Call after `curl_multi_remove_handle`.
    /// The corresponding C functions are `curl_easy_cleanup` and `curl_slist_free_all`.
    func releaseHandle() {
        if let easy { curl_easy_cleanup(easy) }
        easy = nil
        if let headerList { curl_slist_free_all(headerList) }
        headerList = nil
        bodyCopy?.deallocate()
        bodyCopy = nil
        fileBody?.close()
        fileBody = nil
    }

    // MARK: Callbacks (transfer thread, inside curl_multi_perform)

    private func receivedHeaderLine(_ line: UnsafeRawBufferPointer) -> Int {
        if cancelRequested.load(ordering: .relaxed) {
            refusal = .cancelled
            return 0
        }
        lastProgress = clock.now
        head.consume(line: line)
        if head.isComplete { deliverHeadIfNeeded() }
        return line.count
    }

    private func receivedBody(_ bytes: UnsafeRawBufferPointer) -> Int {
        if cancelRequested.load(ordering: .relaxed) {
            refusal = .cancelled
            return 0
        }
        switch delivery {
        case .buffered:
            guard body.count + bytes.count <= maximumBodyBytes else {
                refusal = .responseTooLarge(limit: maximumBodyBytes)
                return 0  // not all taken: curl stops with CURLE_WRITE_ERROR
            }
            body.append(contentsOf: bytes)
        case .streamed(let buffer):
            if !headDelivered {
                head.markComplete()
                deliverHeadIfNeeded()
            }
            guard buffer.deliver(.body(Array(bytes))) else {
                isPausedForConsumer = true
                return sw_curl_write_pause()
            }
        }
        receivedBytes += bytes.count
        return bytes.count
    }

    /// curl wants the next bytes of a file body. A file that fails or ends early aborts the
    /// transfer (`CURLE_ABORTED_BY_CALLBACK`), so a body never goes out shorter than announced.
    private func bodyWanted(_ buffer: UnsafeMutableRawBufferPointer) -> Int {
        if cancelRequested.load(ordering: .relaxed) {
            refusal = .cancelled
            return sw_curl_read_abort()
        }
        guard let fileBody else { return sw_curl_read_abort() }
        do {
            return try fileBody.read(into: buffer)
        } catch {
            refusal = error
            return sw_curl_read_abort()
        }
    }

    /// curl sends a file body again (a re-sent request) and rewinds it first.
    private func bodyRewound(to offset: curl_off_t, origin: Int32) -> Bool {
        guard origin == SEEK_SET, let fileBody else { return false }
        return fileBody.seek(to: Int(offset))
    }

    /// Called by curl about once a second and whenever bytes move. Returns false to abort: the
    /// transfer was cancelled, or no byte moved for longer than the stall limit.
    private func progressed(downloaded: curl_off_t, uploaded: curl_off_t) -> Bool {
        if cancelRequested.load(ordering: .relaxed) {
            refusal = .cancelled
            return false
        }
        let now = clock.now
        if (Int64(downloaded), Int64(uploaded)) != progressCounts || isPausedForConsumer {
            progressCounts = (Int64(downloaded), Int64(uploaded))
            lastProgress = now
            return true
        }
        guard let stall = request.timeouts.stall, let lastProgress, now - lastProgress > stall else { return true }
        refusal = .timedOut(detail: "no data moved for \(Self.milliseconds(stall)) ms")
        return false
    }

    private func deliverHeadIfNeeded() {
        guard !headDelivered, case .streamed(let buffer) = delivery else { return }
        headDelivered = true
        head = ResponseHeadParser.withVersion(head, from: easy)
        _ = buffer.deliver(.head(head.head))
    }

    // MARK: Ending (any thread, exactly once)

    /// curl finished this transfer with `code`: deliver the response or the matching error.
    func finish(code: CURLcode) {
        if code == CURLE_OK && refusal == nil {
            head = ResponseHeadParser.withVersion(head, from: easy)
            head.markComplete()
            switch delivery {
            case .buffered:
                complete(.success(()))
            case .streamed:
                deliverHeadIfNeeded()
                complete(.success(()))
            }
        } else {
            complete(.failure(error(for: code)))
        }
    }

    /// Ends the transfer: the response (buffered) or end of stream on success, else the error.
    /// Only the first call counts.
    func complete(_ outcome: Result<Void, HTTPError>) {
        guard completed.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged
        else { return }
        switch delivery {
        case .buffered(let slot):
            slot.fulfil(outcome.map { HTTPResponse(head: head.head, body: body) })
            body = []
        case .streamed(let buffer):
            buffer.finish(outcome)
        }
    }

    /// The error for a curl result code; texts never carry header values or the query string.
    func error(for code: CURLcode) -> HTTPError {
        if let refusal { return refusal }
        if cancelRequested.load(ordering: .relaxed) { return .cancelled }
        let detail = safeDetail(for: code)
        switch code {
        case CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY, CURLE_COULDNT_CONNECT:
            return .couldNotConnect(host: target.host, detail: detail)
        case CURLE_SSL_CONNECT_ERROR, CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_ENGINE_NOTFOUND,
            CURLE_SSL_ENGINE_SETFAILED, CURLE_SSL_CERTPROBLEM, CURLE_SSL_CIPHER, CURLE_SSL_CACERT_BADFILE,
            CURLE_SSL_SHUTDOWN_FAILED, CURLE_SSL_CRL_BADFILE, CURLE_SSL_ISSUER_ERROR, CURLE_SSL_PINNEDPUBKEYNOTMATCH,
            CURLE_SSL_INVALIDCERTSTATUS, CURLE_SSL_ENGINE_INITFAILED, CURLE_SSL_CLIENTCERT, CURLE_USE_SSL_FAILED:
            return .tls(host: target.host, detail: detail)
        case CURLE_OPERATION_TIMEDOUT:
            return .timedOut(detail: detail)
        case CURLE_PARTIAL_FILE, CURLE_RECV_ERROR, CURLE_SEND_ERROR, CURLE_GOT_NOTHING, CURLE_HTTP2, CURLE_HTTP2_STREAM:
            return .connectionLost(detail: detail)
        case CURLE_UNSUPPORTED_PROTOCOL, CURLE_URL_MALFORMAT:
            return .invalidURL(target.redacted)
        default:
            return .other(code: Int(code.rawValue), detail: detail)
        }
    }

    /// curl's error buffer says most (which certificate problem, which timeout), but it is used only
    /// when it contains neither the query string nor any header value; else curl's fixed text.
    private func safeDetail(for code: CURLcode) -> String {
        let fixed = String(cString: curl_easy_strerror(code))
        let specific = String(cString: errorBuffer)
        guard !specific.isEmpty else { return fixed }
        if let query = target.query, !query.isEmpty, specific.contains(query) { return fixed }
        for header in request.headers where !header.value.isEmpty {
            let secret = HTTPRequest.secretHeaderNames.contains(header.name.lowercased())
            if (secret || header.value.count >= 4) && specific.contains(header.value) { return fixed }
            if secret {
                // A bearer token may show up without its scheme word.
                for word in header.value.split(separator: " ") where word.count >= 4 && specific.contains(word) {
                    return fixed
                }
            }
        }
        return specific
    }

    /// Rounded up and at least 1: curl reads 0 as "no timeout".
    static func milliseconds(_ duration: Duration) -> Int {
        max(Int(duration.wholeMillisecondsRoundedUp), 1)
    }
}

extension ResponseHeadParser {
    /// The parser with the HTTP version curl negotiated, when curl knows it (it does once the status
    /// line is in). The corresponding C function is `curl_easy_getinfo(CURLINFO_HTTP_VERSION)`.
    static func withVersion(_ parser: ResponseHeadParser, from easy: UnsafeMutableRawPointer?) -> ResponseHeadParser {
        var value = 0
        guard let easy, sw_curl_easy_getinfo_long(easy, CURLINFO_HTTP_VERSION, &value) == CURLE_OK else {
            return parser
        }
        var parser = parser
        switch value {
        case Int(CURL_HTTP_VERSION_1_0): parser.setVersion(.http1_0)
        case Int(CURL_HTTP_VERSION_1_1): parser.setVersion(.http1_1)
        case Int(CURL_HTTP_VERSION_2_0): parser.setVersion(.http2)
        case Int(CURL_HTTP_VERSION_3): parser.setVersion(.http3)
        default: break
        }
        return parser
    }
}
