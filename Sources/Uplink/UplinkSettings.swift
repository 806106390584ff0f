import Foundation
import HTTPEngine
import SwiftWingCore
import Talaria

/// Everything the uplink needs to know about its backend and its pace.
public struct UplinkSettings: Sendable {
    public var endpoints: TalariaEndpoints
    /// Sent as `X-Device-ID` (persistent per device, `<state>/device-id`).
    public var deviceID: UUID
    public var apiKey: APIKeySource
    /// For `User-Agent: swiftwing/<version>`.
    public var version: String
    /// Jobs in flight at once; each holds its slot from upload to terminal state (docs/protocol.md §5).
    public var concurrency: Int = 3
    public var retry = RetryPolicy()
    /// Status polls of one job are at least this far apart (docs/protocol.md §4: ≤ 1 request / 2 s).
    public var pollInterval: TimeInterval = 2
    /// A stream open this long without a terminal event is abandoned for polling (docs/protocol.md §2).
    public var abandonStreamAfter: TimeInterval = 300
    /// A job the backend answers 404 for this long (status) or whose results stay 404 after it
    /// completed is lost (expired, or the server forgot it): the scan is sent again as a new job.
    /// While its job is missing a scan is checked about ten times, holding no upload slot between.
    public var jobLostAfter: TimeInterval = 120
    /// While offline, the backend is probed this often so queued scans go out soon after it returns.
    public var probeInterval: TimeInterval = 15
    /// Owed cleanups are retried this often.
    public var cleanupInterval: TimeInterval = 60
    /// The scheduler goes round at least this often when idle, so its heartbeat shows it is alive.
    public var idleTick: TimeInterval = 5
    public var uploadTimeouts = HTTPTimeouts(connect: .seconds(10), total: .seconds(120), stall: .seconds(30))
    public var requestTimeouts = HTTPTimeouts(connect: .seconds(10), total: .seconds(30), stall: .seconds(20))
    public var streamTimeouts = HTTPTimeouts.eventStream
    /// Progress and `Last-Event-ID` are written to the queue at most this often per job (each write
    /// is an fsync); the terminal state is always written at once.
    public var progressPersistInterval: TimeInterval = 1

    public init(endpoints: TalariaEndpoints, deviceID: UUID, apiKey: APIKeySource, version: String) {
        self.endpoints = endpoints
        self.deviceID = deviceID
        self.apiKey = apiKey
        self.version = version
    }
}

/// Where the backend API key comes from: a credential file, read when it is needed (so a key
/// replaced on disk is used without a restart), never from the configuration file, never logged.
public struct APIKeySource: Sendable, Hashable {
    /// `nil`: no key is configured (a development backend on loopback).
    public let path: String?

    public init(path: String?) {
        self.path = path
    }

    /// The configured file, else systemd's `$CREDENTIALS_DIRECTORY/api-key` when it exists.
    public static func resolve(configured: String?, environment: [String: String] = ProcessInfo.processInfo.environment)
        -> APIKeySource
    {
        if let configured { return APIKeySource(path: configured) }
        if let directory = environment["CREDENTIALS_DIRECTORY"], !directory.isEmpty {
            let candidate = directory + "/api-key"
            if FileManager.default.isReadableFile(atPath: candidate) { return APIKeySource(path: candidate) }
        }
        return APIKeySource(path: nil)
    }

    /// The key (surrounding whitespace and the final newline trimmed), or `nil` when none is
    /// configured. Errors name the file and the fix, never the key.
    public func read() throws(UplinkError) -> String? {
        guard let path else { return nil }
        // Not Data(contentsOf:): it follows a link and reads a FIFO or /dev/zero until memory runs out.
        let data: [UInt8]
        do {
            data = try SecretFile.read(path, limit: 4096)
        } catch {
            throw .apiKeyUnreadable(path: path, reason: error.reason)
        }
        let key = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        // Empty is how the unit passes "no key installed" (its SetCredential= default), as on a fresh install.
        guard !key.isEmpty else { throw .apiKeyMissing(path: path) }
        guard !key.contains(where: { $0.isNewline || $0 == "\0" }) else {
            throw .apiKeyUnreadable(path: path, reason: "it holds more than one line")
        }
        return key
    }
}

public enum UplinkError: Error, Hashable, Sendable, CustomStringConvertible {
    case apiKeyUnreadable(path: String, reason: String)
    /// The key file is empty: no key has been installed yet.
    case apiKeyMissing(path: String)
    case backendURLRefused(String)

    public var description: String {
        switch self {
        case .apiKeyUnreadable(let path, let reason):
            "the API key file \(path) cannot be used (\(reason)): put the key alone in that file "
                + "(systemd: LoadCredentialEncrypted=api-key), readable by the swiftwing user; scans wait in the queue"
        case .apiKeyMissing(let path):
            "no API key is installed (\(path) is empty), so nothing is uploaded and scans wait on the device: "
                + "encrypt the key with `systemd-creds encrypt --name=api-key KEYFILE /etc/swiftwing/api-key.cred` "
                + "and `systemctl restart swiftwing` (or put it in the file backend.api_key_file names)"
        case .backendURLRefused(let reason):
            "backend.url cannot be used: \(reason)"
        }
    }
}
