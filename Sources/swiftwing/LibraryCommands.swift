import Appliance
import ArgumentParser
import Foundation

extension SwiftWingCommand {
    struct Library: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "The books: list, show, correct, delete and review them. Works with or without the daemon.",
            subcommands: [List.self, Show.self, Edit.self, Delete.self, Review.self], defaultSubcommand: List.self)

        struct List: ParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "List the books (oldest first), each with the id the other library commands take.")

            @OptionGroup var common: CommonOptions

            @Option(help: "Only books whose title, authors or ISBN match these words.")
            var search: String?

            @Flag(help: "Print stable JSON (documented in README.md).")
            var json = false

            func run() throws {
                let configuration = try common.load()
                let report = try orFailure { () throws(ApplianceError) in
                    try LibraryReport.gather(configuration: configuration, search: search)
                }
                print(json ? report.json() : report.text())
            }
        }

        struct Show: ParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Every field of one book, and the backend's JSON for it as it came.")

            @OptionGroup var common: CommonOptions

            @Argument(help: "The book's id (the first column of `swiftwing library`).")
            var id: Int64

            @Flag(help: "Print stable JSON: the book as in `library --json`.")
            var json = false

            func run() throws {
                let configuration = try common.load()
                let book = try orFailure { () throws(ApplianceError) in
                    try LibraryManagement.show(id: id, configuration: configuration)
                }
                let entry = LibraryEntry(book)
                print(json ? entry.json() : entry.text())
            }
        }

        struct Edit: ParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Correct a book's title, authors or ISBN; the book then counts as reviewed.")

            @OptionGroup var common: CommonOptions

            @Argument(help: "The book's id (the first column of `swiftwing library`).")
            var id: Int64

            @Option(help: "The title.")
            var title: String?

            @Option(name: .customLong("author"), help: "An author; repeat for several (they replace the old list).")
            var authors: [String] = []

            @Option(help: "The ISBN-13 or ISBN-10 (hyphens allowed); its check digit must be right.")
            var isbn: String?

            @Flag(name: .customLong("needs-review"), help: "Keep the book in `library review` after the change.")
            var needsReview = false

            func validate() throws {
                guard title != nil || !authors.isEmpty || isbn != nil || needsReview else {
                    throw ValidationError("nothing to change: give --title, --author, --isbn or --needs-review")
                }
            }

            func run() throws {
                let configuration = try common.load()
                let book = try orFailure { () throws(ApplianceError) in
                    try LibraryManagement.edit(
                        id: id, title: title, authors: authors.isEmpty ? nil : authors, isbn: isbn,
                        keepForReview: needsReview, configuration: configuration)
                }
                print(LibraryEntry(book).text())
            }
        }

        struct Delete: ParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Remove a book from the library.")

            @OptionGroup var common: CommonOptions

            @Argument(help: "The book's id (the first column of `swiftwing library`).")
            var id: Int64

            func run() throws {
                let configuration = try common.load()
                let book = try orFailure { () throws(ApplianceError) in
                    try LibraryManagement.delete(id: id, configuration: configuration)
                }
                print("deleted book \(id): \(book.title.isEmpty ? book.isbn13 ?? "(no title)" : book.title)")
            }
        }

        struct Review: ParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "The books to check (below 80 % confidence, or flagged); approve them, or fix them with "
                    + "`library edit`, which approves too.")

            @OptionGroup var common: CommonOptions

            @Option(help: "Approve this book as it is; repeat for several.")
            var approve: [Int64] = []

            @Flag(help: "Print stable JSON (as `library --json`).")
            var json = false

            func run() throws {
                let configuration = try common.load()
                for id in approve {
                    let book = try orFailure { () throws(ApplianceError) in
                        try LibraryManagement.approve(id: id, configuration: configuration)
                    }
                    print("approved book \(id): \(book.title.isEmpty ? book.isbn13 ?? "(no title)" : book.title)")
                }
                guard approve.isEmpty else { return }
                let report = try orFailure { () throws(ApplianceError) in
                    try LibraryManagement.reviewList(configuration: configuration)
                }
                print(json ? report.json() : report.books.isEmpty ? "no book needs review" : report.text())
            }
        }
    }
}

/// Runs `body`, turning its advice into the command's failure message.
private func orFailure<Value>(_ body: () throws(ApplianceError) -> Value) throws -> Value {
    do {
        return try body()
    } catch {
        throw CommandFailure(error.description)
    }
}
