import ApplianceCore
import Foundation
import Store
import Synchronization

/// Books deleted from the browser, with their kept spine pictures, kept a while so the page can offer to put them
/// back. In memory: a restart of the web process ends the chance to undo, never the deletion.
final class UndoShelf: Sendable {
    private struct Entry {
        var deleted: DeletedBook
        var until: Date
    }

    static let keepSeconds: TimeInterval = 15 * 60
    static let capacity = 64

    private let entries = Mutex<[String: Entry]>([:])

    /// Keeps `deleted` and returns the token that takes it back.
    func keep(_ deleted: DeletedBook, now: Date) -> String {
        let token = Session.newToken()
        entries.withLock { entries in
            entries = entries.filter { $0.value.until > now }
            if entries.count >= Self.capacity, let oldest = entries.min(by: { $0.value.until < $1.value.until }) {
                entries[oldest.key] = nil
            }
            entries[token] = Entry(deleted: deleted, until: now.addingTimeInterval(Self.keepSeconds))
        }
        return token
    }

    /// The book kept under `token`, without taking it.
    func peek(_ token: String, now: Date) -> BookRecord? {
        entries.withLock { entries in entries[token].flatMap { $0.until > now ? $0.deleted.book : nil } }
    }

    /// Takes the book kept under `token` (once).
    func take(_ token: String, now: Date) -> DeletedBook? {
        entries.withLock { entries in
            guard let entry = entries.removeValue(forKey: token), entry.until > now else { return nil }
            return entry.deleted
        }
    }

    /// Puts a book back after a failed restore, so the person can try again.
    func putBack(_ deleted: DeletedBook, token: String, now: Date) {
        entries.withLock { entries in
            entries[token] = Entry(deleted: deleted, until: now.addingTimeInterval(Self.keepSeconds))
        }
    }
}
