import Foundation
import NIOCore
import Synchronization

/// Wrong pairing codes counted per client address, so a neighbour's five wrong codes lock only the
/// neighbour: the owner's browser, at another address, can still pair with the code on the panel.
///
/// An IPv6 client counts by its /64 (a host picks any address in its prefix at will). All addresses
/// together still burn the code after ``WebApp/wrongCodesAcrossAddresses`` (``WebAccess`` counts
/// those, in the database), so many addresses cannot guess either: 20 tries at 10^6 codes.
/// Kept in memory: a restart forgets the per-address counts, not the database's.
final class PairingTries: Sendable {
    struct Entry: Sendable {
        var wrong = 0
        var lockedUntil: Date?
        var last: Date
    }

    enum Verdict: Equatable, Sendable {
        case wrong(remaining: Int)
        case locked(until: Date)
    }

    let wrongBeforeLock: Int
    let lockDuration: TimeInterval
    /// Addresses remembered at once; the oldest are forgotten first (a flood of addresses costs memory only up
    /// to this, and forgetting an address only gives it its tries back, which the database's cap still bounds).
    let capacity: Int
    private let entries = Mutex<[String: Entry]>([:])

    init(wrongBeforeLock: Int, lockDuration: TimeInterval, capacity: Int = 1024) {
        self.wrongBeforeLock = wrongBeforeLock
        self.lockDuration = lockDuration
        self.capacity = capacity
    }

    /// Until when `address` may not try a code, if it is locked.
    func lockedUntil(_ address: String, now: Date) -> Date? {
        entries.withLock { entries in
            guard let until = entries[address]?.lockedUntil else { return nil }
            if until > now { return until }
            entries[address] = nil
            return nil
        }
    }

    /// Counts a wrong code from `address`.
    func wrong(_ address: String, now: Date) -> Verdict {
        entries.withLock { entries in
            if entries[address] == nil, entries.count >= capacity {
                // Expired locks first, then whoever tried longest ago.
                entries = entries.filter { ($0.value.lockedUntil ?? .distantFuture) > now }
                while entries.count >= capacity, let oldest = entries.min(by: { $0.value.last < $1.value.last }) {
                    entries[oldest.key] = nil
                }
            }
            var entry = entries[address] ?? Entry(last: now)
            entry.wrong += 1
            entry.last = now
            if entry.wrong >= wrongBeforeLock {
                let until = now.addingTimeInterval(lockDuration)
                entries[address] = Entry(wrong: 0, lockedUntil: until, last: now)
                return .locked(until: until)
            }
            entries[address] = entry
            return .wrong(remaining: wrongBeforeLock - entry.wrong)
        }
    }

    /// A right code: the address starts afresh.
    func paired(_ address: String) {
        _ = entries.withLock { $0.removeValue(forKey: address) }
    }

    /// The key a client's tries count under: its IPv4 address, or its IPv6 /64 (an IPv4-mapped one as IPv4).
    static func key(for address: SocketAddress?) -> String {
        guard let address else { return "unknown" }
        switch address {
        case .v4:
            return address.ipAddress ?? "unknown"
        case .v6(let v6):
            var bytes = v6.address.sin6_addr
            let octets = withUnsafeBytes(of: &bytes) { Array($0) }
            if octets[0..<10].allSatisfy({ $0 == 0 }) && octets[10] == 0xFF && octets[11] == 0xFF {
                return octets[12..<16].map(String.init).joined(separator: ".")
            }
            let prefix = stride(from: 0, to: 8, by: 2).map {
                String(UInt16(octets[$0]) << 8 | UInt16(octets[$0 + 1]), radix: 16)
            }
            return prefix.joined(separator: ":") + "::/64"
        case .unixDomainSocket:
            return "local"
        }
    }
}

/// The names a request may call the device by, against DNS rebinding: a page on another site whose name
/// was made to resolve to the device's address sends its own name in `Host`, and is refused. An IP address
/// literal, `localhost`, the device's host name and its `.local` (mDNS) name are accepted.
struct HostCheck: Sendable {
    let names: Set<String>

    init(extra: [String] = []) {
        var names: Set<String> = ["localhost"]
        var buffer = [CChar](repeating: 0, count: 256)
        if gethostname(&buffer, buffer.count - 1) == 0 {
            let name = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
                .lowercased()
            if !name.isEmpty {
                names.insert(name)
                names.insert(name + ".local")
                // A fully qualified host name's first label, and that label's .local name.
                if let first = name.split(separator: ".").first {
                    names.insert(String(first))
                    names.insert(first + ".local")
                }
            }
        }
        for name in extra where !name.isEmpty { names.insert(name.lowercased()) }
        self.names = names
    }

    /// Whether `authority` (a `Host` header: a name or address, an optional port) names this device.
    func allows(_ authority: String?) -> Bool {
        guard let authority = authority?.lowercased(), !authority.isEmpty else { return false }
        let host: Substring
        if authority.hasPrefix("[") {
            // [v6]:port
            guard let close = authority.firstIndex(of: "]") else { return false }
            host = authority[authority.index(after: authority.startIndex)..<close]
            let rest = authority[authority.index(after: close)...]
            guard rest.isEmpty || (rest.first == ":" && Self.isDigits(rest.dropFirst())) else { return false }
            return host.contains(":") && host.allSatisfy { $0.isASCII && ($0.isHexDigit || $0 == ":" || $0 == ".") }
        }
        if let colon = authority.lastIndex(of: ":") {
            let port = authority[authority.index(after: colon)...]
            guard Self.isDigits(port) else { return false }
            host = authority[..<colon]
        } else {
            host = authority[...]
        }
        let name = host.hasSuffix(".") ? host.dropLast() : host
        return Self.isIPv4(name) || names.contains(String(name))
    }

    static func isIPv4(_ text: Substring) -> Bool {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4
            && parts.allSatisfy { $0.count <= 3 && isDigits($0) && (Int($0) ?? 256) <= 255 }
    }

    static func isDigits(_ text: Substring) -> Bool {
        !text.isEmpty && text.utf8.allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
    }
}
