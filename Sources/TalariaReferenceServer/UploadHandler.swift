import Foundation
import Hummingbird
import NIOCore

extension Handlers {
    // MARK: Upload

    func upload(_ request: Request, _ context: Context) async throws -> Response {
        let key = request.headers[.idempotencyKey]
        await state.countUpload(idempotencyKey: key)
        let faults = await state.takeFaults(.upload)
        try await sleepSlow(faults)
        if faults.contains(.drop) {
            // Close the connection before any response: the client sees a broken transfer.
            try? await context.channel.close()
            throw ConnectionDropped()
        }
        if let apiKey = configuration.apiKey, !presents(request, apiKey) {
            return problem(
                401, "UNAUTHORIZED", "Unauthorized", "A valid API key is required (Authorization: Bearer <key>)",
                request)
        }
        guard let deviceID = request.headers[.deviceID], !deviceID.isEmpty else {
            return problem(400, "INVALID_REQUEST", "Invalid request", "The X-Device-ID header is required", request)
        }
        guard let key, !key.isEmpty else {
            return problem(400, "INVALID_REQUEST", "Invalid request", "The Idempotency-Key header is required", request)
        }
        // Both are kept with the job and the key is logged: no terminal escapes, no megabyte of "key".
        for (name, value) in [("X-Device-ID", deviceID), ("Idempotency-Key", key)] where !Self.isIdentifier(value) {
            return problem(
                400, "INVALID_REQUEST", "Invalid request",
                "The \(name) header must be at most \(Self.identifierMaxBytes) bytes with no control characters",
                request)
        }
        if let response = faultResponse(faults, request) { return response }

        // Refused before its body is read when full; the place is held while the body is read, so uploads read
        // side by side count too.
        guard let reservation = await state.reserve(forKey: key) else { return busy(request) }
        do {
            let response = try await receive(
                request, context, key: key, deviceID: deviceID, faults: faults, reservation: reservation)
            await state.release(reservation)
            return response
        } catch {
            await state.release(reservation)
            throw error
        }
    }

    /// The rest of an upload once it holds a place: its body read and checked, its job made.
    private func receive(
        _ request: Request, _ context: Context, key: String, deviceID: String, faults: [FaultAction],
        reservation: ReferenceState.PhotoReservation
    ) async throws -> Response {
        let body: ByteBuffer
        do {
            body = try await Self.collect(
                request, upTo: configuration.maxImageBytes + 1_048_576, before: reservation.deadline)
        } catch is NIOTooManyBytesError {
            return problem(
                413, "FILE_TOO_LARGE", "File too large",
                "An image may have at most \(configuration.maxImageBytes) bytes", request)
        } catch is UploadDeadlinePassed {
            let seconds = configuration.uploadDeadline.map { "\($0.components.seconds) s" } ?? "the time allowed"
            context.logger.notice(
                "upload not received within \(seconds): its place is freed", metadata: ["idempotency-key": "\(key)"])
            return problem(
                408, "UPLOAD_TIMEOUT", "Upload timed out",
                "The photo was not received within \(seconds) and this upload made no job: send it again (on a slow "
                    + "link, a smaller photo gets through sooner)",
                request, retryable: true, headers: [.connection: "close"])
        }
        // Only the first `photos[]` part is read, within the parts' limits; the answer never repeats what was sent
        // (200,000 part names came back as a 1 MB error before).
        let found: UploadForm.Part?
        do {
            let boundary = try UploadForm.boundary(fromContentType: request.headers[.contentType] ?? "")
            found = try UploadForm.firstPart(named: "photos[]", of: body, boundary: boundary)
        } catch {
            return problem(400, "INVALID_REQUEST", "Invalid request", "\(error)", request)
        }
        guard let photo = found else {
            return problem(
                400, "INVALID_REQUEST", "Invalid request",
                "The image must be sent in a part named 'photos[]'; the body has none", request)
        }
        let mediaType = photo.contentType?.split(separator: ";").first?.trimmingCharacters(in: .whitespaces)
            .lowercased()
        guard mediaType == "image/jpeg" else {
            return problem(
                400, "INVALID_FILE", "Invalid file",
                "The 'photos[]' part must have Content-Type image/jpeg"
                    + (photo.contentType == nil ? " (it has none)" : ""),
                request)
        }
        let image = photo.body.readableBytesView
        guard image.count <= configuration.maxImageBytes else {
            return problem(
                413, "FILE_TOO_LARGE", "File too large",
                "The image has \(image.count) bytes; at most \(configuration.maxImageBytes) are accepted", request)
        }
        switch configuration.imageCheck {
        case .magicBytes:
            guard image.starts(with: [0xFF, 0xD8]) else {
                return problem(400, "INVALID_FILE", "Invalid file", "The 'photos[]' part is not a JPEG image", request)
            }
        case .structure(let maxPixels):
            do {
                _ = try JPEGHeader.check(image, maxPixels: maxPixels)
            } catch .tooManyPixels(let width, let height, let limit) {
                let problem = JPEGHeader.Problem.tooManyPixels(width: width, height: height, limit: limit)
                return self.problem(413, "IMAGE_TOO_LARGE", "Image too large", "\(problem)", request)
            } catch {
                return problem(400, "INVALID_FILE", "Invalid file", "\(error)", request)
            }
        }
        guard
            let (job, created) = await state.job(
                forKey: key, deviceID: deviceID, image: Array(image), reservation: reservation)
        else {
            return busy(request)
        }
        context.logger.info(
            "\(created ? "created" : "existing") job \(job.id) (\(job.books.count) books)",
            metadata: ["idempotency-key": "\(key)"])
        var shape = configuration.envelope
        var noStream = false
        for fault in faults {
            if case .envelope(let s) = fault { shape = s }
            if fault == .noStream { noStream = true }
        }
        let requestID = "req_" + UUID().uuidString.lowercased().prefix(8)
        return ReferenceServer.json(
            202,
            Render.envelope(job, shape: shape, noStream: noStream, base: baseURL(request), requestID: String(requestID))
        )
    }

    static let identifierMaxBytes = 256

    /// The request's body, or `UploadDeadlinePassed` when `deadline` (a sleep on the state's clock) ends first; the
    /// body's reading is then cancelled, which stops the connection's reads for good.
    private static func collect(
        _ request: Request, upTo limit: Int, before deadline: (@Sendable () async throws -> Void)?
    ) async throws -> ByteBuffer {
        guard let deadline else { return try await request.body.collect(upTo: limit) }
        return try await withThrowingTaskGroup(of: ByteBuffer?.self) { group in
            group.addTask { try await request.body.collect(upTo: limit) }
            group.addTask {
                try await deadline()
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let body = first else { throw UploadDeadlinePassed() }
            return body
        }
    }

    /// A header value fit to keep and log as an identifier (an Idempotency-Key, a device id).
    static func isIdentifier(_ value: String) -> Bool {
        value.utf8.count <= identifierMaxBytes
            && !value.unicodeScalars.contains { $0.properties.generalCategory == .control }
    }

    /// `maxWaitingPhotos` jobs hold their photo: this upload made no job and is to be sent again.
    private func busy(_ request: Request) -> Response {
        let seconds = configuration.busyRetryAfterSeconds
        return problem(
            503, "BUSY", "Busy",
            "\(configuration.maxWaitingPhotos ?? 0) photos are already waiting to be read and this upload made no job: "
                + "send the photo again in \(seconds) s",
            request, retryable: true, retryAfterMs: seconds * 1000, headers: [.retryAfter: "\(seconds)"])
    }

    /// The response of an upload fault that answers instead of the real handler, if any.
    private func faultResponse(_ faults: [FaultAction], _ request: Request) -> Response? {
        let now = Date()
        for fault in faults {
            switch fault {
            case .rateLimitMs(let ms):
                let ms = ms ?? 1500
                return problem(
                    429, "RATE_LIMIT_EXCEEDED", "Too many requests", "Rate limit exceeded; retry after \(ms) ms",
                    request, retryable: true, retryAfterMs: ms)
            case .rateLimitSeconds(let seconds):
                let seconds = seconds ?? 2
                return problem(
                    429, "RATE_LIMIT_EXCEEDED", "Too many requests", "Rate limit exceeded", request, retryable: true,
                    headers: [.retryAfter: String(seconds)])
            case .rateLimitDate(let seconds):
                let date = now.addingTimeInterval(Double(seconds ?? 3))
                return problem(
                    429, "RATE_LIMIT_EXCEEDED", "Too many requests", "Rate limit exceeded", request, retryable: true,
                    headers: [.retryAfter: httpDate(date)])
            case .rateLimitReset(let ms):
                let reset = Int(now.timeIntervalSince1970 * 1000) + (ms ?? 2500)
                return problem(
                    429, "RATE_LIMIT_EXCEEDED", "Too many requests", "Rate limit exceeded", request, retryable: true,
                    headers: [.rateLimitReset: String(reset)])
            case .rateLimitLegacy(let seconds):
                let seconds = seconds ?? 2
                return ReferenceServer.json(
                    429,
                    [
                        "error": "Too many requests, please slow down", "code": "RATE_LIMIT_EXCEEDED",
                        "details": ["retryAfter": .int(seconds)],
                    ])
            case .http500:
                return problem(
                    500, "INTERNAL_ERROR", "Internal server error", "An unexpected error occurred", request,
                    retryable: true, plain: true)
            case .http503:
                return problem(
                    503, "CIRCUIT_OPEN", "Service unavailable", "The recognition provider is unavailable", request,
                    retryable: true,
                    retryAfterMs: 1000)
            case .http401:
                return problem(401, "UNAUTHORIZED", "Unauthorized", "The API key was rejected", request)
            case .http413:
                return problem(
                    413, "FILE_TOO_LARGE", "File too large",
                    "An image may have at most \(configuration.maxImageBytes) bytes", request)
            case .invalidFile:
                return problem(400, "INVALID_FILE", "Invalid file", "The image could not be decoded", request)
            case .html:
                return Response(
                    status: .badGateway, headers: [.contentType: "text/html; charset=utf-8"],
                    body: .init(
                        byteBuffer: ByteBuffer(
                            string:
                                "<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway</h1></center><hr><center>nginx</center></body></html>\n"
                        )))
            default:
                continue
            }
        }
        return nil
    }
}

/// An upload's body was not received within `uploadDeadline`.
struct UploadDeadlinePassed: Error {}
