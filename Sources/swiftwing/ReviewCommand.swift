import Appliance
import ArgumentParser
import Foundation
import Store

extension SwiftWingCommand {
    /// The spines read but not identified, reviewed over SSH: the CLI twin of the web's review page.
    struct Review: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "The spines read but not identified: list them, pick each one's book, or dismiss it.",
            discussion: """
                Each spine the recognizer read but could not name for sure waits here with the books it may be. \
                `pick ID N` adds candidate N as a book (with the spine's picture); `pick ID --title …` names \
                another book; `dismiss ID` says it is not a book. `replace BOOK [N]` is "wrong book?" for a book already in the \
                library: it lists the other books it may be, or makes it number N. Works with or without the daemon.
                """,
            subcommands: [List.self, Pick.self, Dismiss.self, Replace.self], defaultSubcommand: List.self)

        struct List: ParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "The spines to check, oldest first, each with its candidates numbered from 1.")

            @OptionGroup var common: CommonOptions

            @Flag(help: "Every spine, picked and dismissed ones too.")
            var all = false

            @Flag(help: "Print stable JSON.")
            var json = false

            func run() throws {
                let configuration = try common.load()
                let report = try failing { () throws(ApplianceError) in
                    try SpineReview.list(configuration: configuration, all: all)
                }
                print(json ? report.json() : report.text())
            }
        }

        struct Pick: ParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Say which book a spine is: its candidate N, or one you name with --title.")

            @OptionGroup var common: CommonOptions

            @Argument(help: "The spine's id (the first column of `swiftwing review list`).")
            var id: Int64

            @Argument(help: "The candidate's number in `swiftwing review list` (1 the first).")
            var candidate: Int?

            @Option(help: "The book's title, when none of the candidates is it.")
            var title: String?

            @Option(name: .customLong("author"), help: "An author of that book; repeat for several.")
            var authors: [String] = []

            @Option(help: "That book's ISBN-13 or ISBN-10 (hyphens allowed).")
            var isbn: String?

            func validate() throws {
                if candidate == nil && title == nil {
                    throw ValidationError("give a candidate's number, or the book's --title")
                }
                if candidate != nil && (title != nil || !authors.isEmpty || isbn != nil) {
                    throw ValidationError("give a candidate's number or --title (with --author, --isbn), not both")
                }
            }

            func run() throws {
                let configuration = try common.load()
                let book = try failing { () throws(ApplianceError) -> BookRecord in
                    if let candidate {
                        return try SpineReview.pick(id: id, candidate: candidate, configuration: configuration)
                    }
                    return try SpineReview.pick(
                        id: id, title: title ?? "", authors: authors, isbn: isbn, configuration: configuration)
                }
                let byline = book.authors.isEmpty ? "" : " — " + book.authors.joined(separator: ", ")
                print("spine \(id) is book \(book.id.map(String.init) ?? "?"): \(book.title)\(byline)")
            }
        }

        struct Replace: ParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Wrong book? List the other books a book may be, or make it candidate N.")

            @OptionGroup var common: CommonOptions

            @Argument(help: "The book's id (the first column of `swiftwing library`).")
            var book: Int64

            @Argument(help: "The candidate's number in the list this prints without it (1 the first).")
            var candidate: Int?

            func run() throws {
                let configuration = try common.load()
                guard let candidate else {
                    let shown = try failing { () throws(ApplianceError) in
                        try LibraryManagement.show(id: book, configuration: configuration)
                    }
                    let alternatives = SpineReview.alternatives(of: shown)
                    print(
                        "\(book)  \(SpinesCSV.describe(SpineCandidateRecord(title: shown.title, authors: shown.authors)))"
                    )
                    if alternatives.isEmpty {
                        print("    no other candidates: correct it with `swiftwing library edit`")
                    }
                    for (number, alternative) in zip(1..., alternatives) {
                        print("    \(number). \(SpinesCSV.describe(alternative))")
                    }
                    return
                }
                let replaced = try failing { () throws(ApplianceError) -> BookRecord in
                    try SpineReview.replace(bookID: book, candidate: candidate, configuration: configuration)
                }
                let byline = replaced.authors.isEmpty ? "" : " — " + replaced.authors.joined(separator: ", ")
                print("book \(book) is now: \(replaced.title)\(byline)")
            }
        }

        struct Dismiss: ParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Not a book: the spine leaves the list.")

            @OptionGroup var common: CommonOptions

            @Argument(help: "The spine's id (the first column of `swiftwing review list`).")
            var id: Int64

            func run() throws {
                let configuration = try common.load()
                try failing { () throws(ApplianceError) in try SpineReview.dismiss(id: id, configuration: configuration)
                }
                print("spine \(id) dismissed")
            }
        }
    }
}

private func failing<Value>(_ body: () throws(ApplianceError) -> Value) throws -> Value {
    do {
        return try body()
    } catch {
        throw CommandFailure(error.description)
    }
}
