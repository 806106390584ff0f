import Foundation

/// Turns jobs into the JSON and SSE text the protocol specifies (docs/protocol.md §1–§4).
enum Render {
    static func jobPath(_ id: String) -> String { "/v3/jobs/scans/\(id)" }
    static func streamPath(_ id: String) -> String { "/v3/jobs/scans/\(id)/stream" }
    static func resultsPath(_ id: String) -> String { "/v3/jobs/scans/\(id)/results" }

    /// The 202 body of an upload.
    static func envelope(_ job: JobSnapshot, shape: EnvelopeShape, noStream: Bool, base: String, requestID: String)
        -> JSONValue
    {
        let statusURL = jobPath(job.id)
        let streamURL = streamPath(job.id)
        let data: JSONValue
        var links: [String: JSONValue] = ["self": .string(statusURL)]
        if noStream {
            data = ["jobId": .string(job.id), "status": "queued", "statusUrl": .string(statusURL)]
        } else {
            switch shape {
            case .sseAbsolute:
                data = [
                    "jobId": .string(job.id), "sseUrl": .string(base + streamURL), "authToken": .string(job.token),
                    "statusUrl": .string(base + statusURL),
                ]
                links = ["self": .string(base + statusURL), "stream": .string(base + streamURL)]
            case .sseRelative:
                data = [
                    "jobId": .string(job.id), "sseUrl": .string(streamURL), "authToken": .string(job.token),
                    "statusUrl": .string(statusURL),
                ]
                links["stream"] = .string(streamURL)
            case .streamToken:
                data = [
                    "jobId": .string(job.id), "status": "queued", "streamUrl": .string(streamURL),
                    "token": .string(job.token),
                ]
                links["stream"] = .string(streamURL)
            case .statusOnly:
                data = ["jobId": .string(job.id), "status": "queued"]
            }
        }
        links["cancel"] = .string(shape == .sseAbsolute && !noStream ? base + statusURL : statusURL)
        return [
            "success": true, "data": data,
            "metadata": ["timestamp": .string(isoTimestamp()), "requestId": .string(requestID)],
            "_links": .object(links),
        ]
    }

    static func books(_ job: JobSnapshot) -> [JSONValue] {
        job.books.enumerated().map { i, book in
            var json = book.json
            if i == 0, job.sticky.contains(.badISBN), let isbn = book.sentISBN, case .object(var fields) = json {
                fields["isbn"] = .string(ISBN.corrupted(isbn))
                json = .object(fields)
            }
            return i == 0 && job.sticky.contains(.wrongTypes) ? wrongTypes(json) : json
        }
    }

    /// The spines read but not matched (docs/protocol.md §6).
    static func unmatched(_ job: JobSnapshot) -> JSONValue { .array(job.unmatched.map(\.json)) }

    /// The `wrong-types` fault: a word for the confidence and a number for the authors, as a
    /// careless backend might send them; the title and ISBN stay, so the book can be found.
    static func wrongTypes(_ book: JSONValue) -> JSONValue {
        guard case .object(var fields) = book else { return book }
        fields["confidence"] = "high"
        fields["author"] = nil
        fields["authors"] = .int(3)
        return .object(fields)
    }

    static func summary(_ job: JobSnapshot) -> JSONValue {
        let confidences = job.books.map(\.confidence)
        let average = confidences.isEmpty ? 0 : confidences.reduce(0, +) / Double(confidences.count)
        return [
            "totalBooks": .int(job.books.count), "unmatchedSpines": .int(job.unmatched.count),
            "needsReview": .int(confidences.filter { $0 < 0.8 }.count),
            "averageConfidence": .double(round2(average)),
            "processingTimeMs": .int(Int(job.updatedAt.timeIntervalSince(job.createdAt) * 1000)),
        ]
    }

    static func progressValue(_ p: Double, percent: Bool) -> JSONValue {
        percent ? .double((p * 100).rounded()) : .double(round2(p))
    }

    /// One SSE event (name + JSON data) for a job event.
    static func sse(_ event: LogicalEvent, job: JobSnapshot, percent: Bool) -> (name: String, data: JSONValue) {
        switch event {
        case .progress(let status, let progress, let processed, let total, let message, let timestamp):
            var fields: [String: JSONValue] = [
                "jobId": .string(job.id), "status": .string(status.rawValue),
                "progress": progressValue(progress, percent: percent), "processedCount": .int(processed),
                "totalCount": .int(total), "timestamp": .string(timestamp),
            ]
            if let message { fields["message"] = .string(message) }
            return ("progress", .object(fields))
        case .result(let i):
            let book = books(job)[i]
            // Vary the shape between catalog entries: a bare book, or a one-book list.
            if job.books[i].variant % 2 == 0 {
                return ("result", ["jobId": .string(job.id), "book": book])
            }
            return ("result", ["jobId": .string(job.id), "books": [book]])
        case .enrichmentDegraded(let i):
            let book = job.books[i]
            return (
                "enrichment_degraded",
                [
                    "isbn": book.isbn13.map { .string($0) } ?? .null, "title": .string(book.title),
                    "reason": "circuit_open",
                    "fallbackSource": "cache",
                ]
            )
        case .statusResult(let status, let message):
            return (
                "result", ["jobId": .string(job.id), "status": .string(status.rawValue), "message": .string(message)]
            )
        case .completed:
            var fields: [String: JSONValue] = [
                "jobId": .string(job.id), "status": "completed", "summary": summary(job),
            ]
            if job.sticky.contains(.stripped) {
                fields["resultsUrl"] = .string(resultsPath(job.id))
            } else {
                fields[job.sticky.contains(.resultsKey) ? "results" : "books"] = .array(books(job))
            }
            if !job.unmatched.isEmpty { fields["unmatched"] = unmatched(job) }
            return (job.sticky.contains(.completeAlias) ? "complete" : "completed", .object(fields))
        case .failed(let status, let code, let message, let retryable):
            return (
                "failed",
                [
                    "jobId": .string(job.id), "status": .string(status.rawValue),
                    "error": ["code": .string(code), "message": .string(message), "retryable": .bool(retryable)],
                ]
            )
        }
    }

    static func sseText(name: String, data: String, id: Int?) -> String {
        var text = ""
        if let id { text += "id: \(id)\n" }
        text += "event: \(name)\n"
        for line in data.split(separator: "\n", omittingEmptySubsequences: false) { text += "data: \(line)\n" }
        return text + "\n"
    }

    static func problem(
        status: Int, code: String, title: String, detail: String, instance: String, retryable: Bool,
        retryAfterMs: Int? = nil
    ) -> JSONValue {
        var fields: [String: JSONValue] = [
            "type": .string(
                "https://talaria.example/problems/" + code.lowercased().replacingOccurrences(of: "_", with: "-")),
            "title": .string(title), "status": .int(status), "detail": .string(detail), "instance": .string(instance),
            "code": .string(code), "retryable": .bool(retryable),
        ]
        if let retryAfterMs { fields["retryAfterMs"] = .int(retryAfterMs) }
        return .object(fields)
    }
}
