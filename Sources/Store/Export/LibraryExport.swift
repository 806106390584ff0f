import Foundation
import SwiftWingCore

#if canImport(Glibc)
    import Glibc
#endif

/// Exports the library as CSV: to a file (`swiftwing export --to FILE`) or onto a USB stick
/// (``StickExport``). Reads through the store as any reader does, so it runs beside the daemon.
public struct LibraryExport: Sendable {
    public let library: Library

    public init(library: Library) {
        self.library = library
    }

    /// Every book, oldest first.
    public func books() throws(ExportError) -> [BookRecord] {
        do {
            return try library.books()
        } catch {
            throw .library(error)
        }
    }

    /// Writes the library to `path` in `format` so the file there is either the old one or the whole
    /// new one (temporary file, fsync, rename, fsync of the folder). Returns the number of books.
    @discardableResult
    public func write(_ format: ExportFormat, to path: String) throws(ExportError) -> Int {
        let books = try books()
        let bytes = LibraryCSV.encode(books, format: format)
        do {
            try Self.writeDurably(bytes, to: path)
        } catch {
            throw .file(error)
        }
        return books.count
    }

    /// `bytes` into `path` (mode 0644) through a temporary file, fsync, rename and fsync of the folder.
    static func writeDurably(_ bytes: [UInt8], to path: String) throws(SystemCallError) {
        var failure: SystemCallError?
        bytes.withUnsafeBytes { buffer in
            do throws(SystemCallError) {
                try FileOperations.writeDurably(buffer, to: path, temporaryPath: temporaryPath(for: path), mode: 0o644)
            } catch {
                failure = error
            }
        }
        if let failure { throw failure }
    }

    /// `dir/.name.partial-<random>`: hidden, and never the final name.
    static func temporaryPath(for path: String) -> String {
        let directory = FileOperations.parentDirectory(of: path)
        let name = path.split(separator: "/").last.map(String.init) ?? path
        return "\(directory)/.\(name).partial-\(FileOperations.randomSuffix())"
    }

    /// Today as `YYYY-MM-DD` in the device's time zone, for the file names.
    public static func day(_ date: Date = Date(), timeZone: TimeZone = .current) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let parts = calendar.dateComponents([.year, .month, .day], from: date)
        return String(format: "%04d-%02d-%02d", parts.year ?? 0, parts.month ?? 0, parts.day ?? 0)
    }
}
