import Foundation
import GRDB

/// Who may use the library in a browser (`swiftwing-web`): the pairing code and the browsers' sessions.
///
/// A database of its own beside the daemon's (`web-access.sqlite` in the state directory), so the web
/// process, the CLI (`swiftwing web pair|revoke`) and the panel share it without a schema change of the
/// library and without talking to each other: the daemon never depends on the web process. Session
/// tokens are stored only as their SHA-256 (the caller hashes), so a copy of this file opens no browser.
/// Every change is one transaction; the clock is the caller's `now`.
public struct WebAccess: Sendable {
    /// How long a pairing code works after `swiftwing web pair`.
    public static let codeLifetime: TimeInterval = 5 * 60
    /// Wrong codes in a row that lock pairing, and for how long.
    public static let wrongCodesBeforeLock = 5
    public static let lockDuration: TimeInterval = 5 * 60
    /// How long a browser stays paired.
    public static let sessionLifetime: TimeInterval = 30 * 24 * 3600

    /// A code shown to a person, and until when it works.
    public struct Pairing: Equatable, Sendable {
        public var code: String
        public var expiresAt: Date
    }

    /// Pairing is locked after ``wrongCodesBeforeLock`` wrong codes.
    public struct PairingLocked: Error, Equatable, Sendable, CustomStringConvertible {
        public var until: Date
        public var description: String {
            "pairing is locked until \(UTCDateParts(until).iso8601) after \(WebAccess.wrongCodesBeforeLock) wrong codes "
                + "were entered: run `swiftwing web pair` again after that"
        }
    }

    /// What entering a code did.
    public enum Redemption: Equatable, Sendable {
        /// The code was right: the session (its token's hash) is stored.
        case paired(expiresAt: Date)
        /// No code is waiting, or it expired.
        case noCode
        /// Wrong; `remaining` more wrong codes lock pairing.
        case wrong(remaining: Int)
        /// Too many wrong codes: pairing works again at `until` (with a new code).
        case locked(until: Date)
    }

    public let path: String
    private let queue: DatabaseQueue

    /// `web-access.sqlite` in `stateDirectory`, created when missing.
    public static func open(_ stateDirectory: StateDirectory) throws(StoreError) -> WebAccess {
        try WebAccess(path: stateDirectory.path + "/web-access.sqlite")
    }

    public init(path: String) throws(StoreError) {
        self.path = path
        do {
            var configuration = Configuration()
            configuration.busyMode = .timeout(AppDatabase.busyTimeout)
            configuration.publicStatementArguments = false
            queue = try DatabaseQueue(path: path, configuration: configuration)
            try queue.write { db in
                try db.execute(
                    sql: """
                        CREATE TABLE IF NOT EXISTS pairing (
                            id INTEGER PRIMARY KEY CHECK (id = 1),
                            code TEXT, expiresAt DOUBLE,
                            wrongCodes INTEGER NOT NULL DEFAULT 0, lockedUntil DOUBLE);
                        CREATE TABLE IF NOT EXISTS session (
                            tokenHash TEXT PRIMARY KEY NOT NULL,
                            createdAt DOUBLE NOT NULL, expiresAt DOUBLE NOT NULL);
                        INSERT OR IGNORE INTO pairing (id) VALUES (1);
                        """)
            }
        } catch {
            throw StoreError.from(error, databasePath: path, consequence: "browsers can neither pair nor be checked")
        }
    }

    /// A new 6-digit code valid for ``codeLifetime`` (replacing any earlier one), or, while pairing is locked
    /// after wrong codes, when it opens again.
    public func startPairing(now: Date) throws(StoreError) -> Result<Pairing, PairingLocked> {
        var generator = SystemRandomNumberGenerator()
        let code = String(format: "%06d", Int.random(in: 0..<1_000_000, using: &generator))
        let expiresAt = now.addingTimeInterval(Self.codeLifetime)
        return try write("no pairing code was made") { db -> Result<Pairing, PairingLocked> in
            let locked = try Double.fetchOne(db, sql: "SELECT lockedUntil FROM pairing WHERE id = 1")
            if let locked, locked > now.timeIntervalSince1970 {
                return .failure(PairingLocked(until: Date(timeIntervalSince1970: locked)))
            }
            try db.execute(
                sql: "UPDATE pairing SET code = ?, expiresAt = ?, wrongCodes = 0, lockedUntil = NULL WHERE id = 1",
                arguments: [code, expiresAt.timeIntervalSince1970])
            return .success(Pairing(code: code, expiresAt: expiresAt))
        }
    }

    /// The code waiting to be entered, if any (for the panel).
    public func currentPairing(now: Date) throws(StoreError) -> Pairing? {
        try read("the pairing code was not read") { db in
            guard let row = try Row.fetchOne(db, sql: "SELECT code, expiresAt FROM pairing WHERE id = 1"),
                let code = row["code"] as String?, let expires = row["expiresAt"] as Double?,
                expires > now.timeIntervalSince1970
            else { return nil }
            return Pairing(code: code, expiresAt: Date(timeIntervalSince1970: expires))
        }
    }

    /// Checks `code`; when right, the code is used up and a session with `tokenHash` is stored. After
    /// `lockAfter` wrong codes in a row the code is burnt and pairing locked (the web process counts each
    /// client address on its own, and passes a higher cap here for all addresses together).
    public func redeem(
        code: String, tokenHash: String, now: Date, lockAfter: Int = wrongCodesBeforeLock
    ) throws(StoreError) -> Redemption {
        let seconds = now.timeIntervalSince1970
        return try write("the code was not checked") { db -> Redemption in
            guard let row = try Row.fetchOne(db, sql: "SELECT * FROM pairing WHERE id = 1") else { return .noCode }
            if let locked = row["lockedUntil"] as Double?, locked > seconds {
                return .locked(until: Date(timeIntervalSince1970: locked))
            }
            guard let expected = row["code"] as String?, let expires = row["expiresAt"] as Double?, expires > seconds
            else { return .noCode }
            if Self.sameBytes(code, expected) {
                try db.execute(sql: "UPDATE pairing SET code = NULL, expiresAt = NULL, wrongCodes = 0 WHERE id = 1")
                let expiresAt = seconds + Self.sessionLifetime
                try db.execute(
                    sql: "INSERT OR REPLACE INTO session (tokenHash, createdAt, expiresAt) VALUES (?, ?, ?)",
                    arguments: [tokenHash, seconds, expiresAt])
                return .paired(expiresAt: Date(timeIntervalSince1970: expiresAt))
            }
            let wrong = (row["wrongCodes"] as Int? ?? 0) + 1
            if wrong >= lockAfter {
                // The code is burnt too: after the lock a person makes a new one.
                let until = seconds + Self.lockDuration
                try db.execute(
                    sql:
                        "UPDATE pairing SET code = NULL, expiresAt = NULL, wrongCodes = 0, lockedUntil = ? WHERE id = 1",
                    arguments: [until])
                return .locked(until: Date(timeIntervalSince1970: until))
            }
            try db.execute(sql: "UPDATE pairing SET wrongCodes = ? WHERE id = 1", arguments: [wrong])
            return .wrong(remaining: lockAfter - wrong)
        }
    }

    /// Whether a session with this token hash exists and has not expired.
    public func isValidSession(tokenHash: String, now: Date) throws(StoreError) -> Bool {
        try read("the session was not checked") { db in
            try Bool.fetchOne(
                db, sql: "SELECT EXISTS (SELECT 1 FROM session WHERE tokenHash = ? AND expiresAt > ?)",
                arguments: [tokenHash, now.timeIntervalSince1970]) ?? false
        }
    }

    /// Ends every browser's session (`swiftwing web revoke`); returns how many there were.
    @discardableResult
    public func revokeAll() throws(StoreError) -> Int {
        try write("no session was ended") { db in
            try db.execute(sql: "DELETE FROM session")
            return db.changesCount
        }
    }

    /// Sessions not yet expired.
    public func sessionCount(now: Date) throws(StoreError) -> Int {
        try read("the sessions were not counted") { db in
            try Int.fetchOne(
                db, sql: "SELECT count(*) FROM session WHERE expiresAt > ?", arguments: [now.timeIntervalSince1970])
                ?? 0
        }
    }

    /// Compares in time independent of where the strings differ.
    static func sameBytes(_ a: String, _ b: String) -> Bool {
        let left = Array(a.utf8)
        let right = Array(b.utf8)
        guard left.count == right.count else { return false }
        var difference: UInt8 = 0
        for index in left.indices { difference |= left[index] ^ right[index] }
        return difference == 0
    }

    private func read<T>(_ consequence: String, _ body: (Database) throws -> T) throws(StoreError) -> T {
        do {
            return try queue.read(body)
        } catch {
            throw StoreError.from(error, databasePath: path, consequence: consequence)
        }
    }

    private func write<T>(_ consequence: String, _ body: (Database) throws -> T) throws(StoreError) -> T {
        do {
            return try queue.write(body)
        } catch {
            throw StoreError.from(error, databasePath: path, consequence: consequence)
        }
    }
}
