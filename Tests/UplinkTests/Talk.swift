/// JSON bodies in the shapes of docs/protocol.md, and the SSE events of a job's stream.
enum Talk {
    static func accepted(job: String, stream: Bool = true) -> String {
        stream
            ? #"{"success":true,"data":{"jobId":"\#(job)","sseUrl":"/v3/jobs/scans/\#(job)/stream","authToken":"tok-\#(job)","statusUrl":"/v3/jobs/scans/\#(job)"}}"#
            : #"{"success":true,"data":{"jobId":"\#(job)","status":"queued"}}"#
    }

    static let book1 =
        #"{"isbn":"9780262033848","title":"Introduction to Algorithms","authors":["Thomas H. Cormen","Charles E. Leiserson"],"confidence":0.95,"format":"hardcover"}"#
    static let book2 = #"{"isbn":"0-201-63361-2","title":"Design Patterns","author":"Erich Gamma","confidence":0.7}"#

    static func completed(job: String, id: Int, books: [String] = [book1, book2]) -> String {
        "id: \(id)\nevent: completed\ndata: {\"jobId\":\"\(job)\",\"status\":\"completed\",\"books\":[\(books.joined(separator: ","))]}\n\n"
    }

    static func progress(job: String, id: Int, progress: Double) -> String {
        "id: \(id)\nevent: progress\ndata: {\"jobId\":\"\(job)\",\"status\":\"processing\",\"progress\":\(progress)}\n\n"
    }

    static let opening = ": connection established\nretry: 10\n\n"
}
