/// What one job may bring (docs/protocol.md §3). A shelf photo shows tens of books; more than this is a
/// broken or hostile backend, and committing it would fill the library and the kiosk's storage.
public enum TalariaLimits {
    /// Books in one job's result.
    public static let booksPerJob = 200
    /// The JSON of one book, as kept beside it (``TalariaBook/rawJSON``).
    public static let bookJSONBytes = 64 * 1024

    /// Why `books` cannot be one job's result, or `nil` when they can.
    public static func violation(in books: [TalariaBook]) -> String? {
        if books.count > booksPerJob {
            return "the backend's result holds \(books.count) books, more than the \(booksPerJob) one photo may "
                + "give; nothing was added and the photo is kept: check the backend, then discard the scan "
                + "(`swiftwing queue discard`)"
        }
        if let book = books.first(where: { $0.rawJSON.utf8.count > bookJSONBytes }) {
            let title = book.title.isEmpty ? "(no title)" : String(book.title.prefix(60))
            return "the backend described book \"\(title)\" in \(book.rawJSON.utf8.count) bytes of JSON, more than "
                + "\(bookJSONBytes) (64 KiB) a book may take; nothing was added and the photo is kept: check the "
                + "backend, then discard the scan (`swiftwing queue discard`)"
        }
        return nil
    }
}
