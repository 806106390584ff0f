import Foundation
import SwiftWingCore

#if canImport(Glibc)
    import Glibc
#endif

/// The device's persistent identity, sent as `X-Device-ID` on every request.
public enum DeviceIdentity {
    /// The device id read on start, and the damaged file it replaced, if any.
    public struct Loaded: Hashable, Sendable {
        public var id: UUID
        /// Where a `device-id` that held no UUID was moved (the id it held is lost to this device).
        public var replacedFile: String?
        /// Why it was replaced.
        public var problem: String?
    }

    /// Reads the UUID in `<state>/device-id`, or creates it (a random UUID v4, mode 0600, written
    /// durably) when the file does not exist.
    ///
    /// A file that exists but does not hold a UUID cannot identify the device any more: it is moved
    /// aside as `device-id.damaged-<UTC time>` (kept, so a person can restore it) and a new id is
    /// made; ``Loaded/replacedFile`` says so, for the daemon to log once. A file that cannot be read
    /// (permissions, I/O) is an error: it may be fine.
    public static func loadOrReplace(stateDirectory: StateDirectory, now: Date = Date()) throws(StoreError) -> Loaded {
        do {
            return Loaded(id: try loadOrCreate(stateDirectory: stateDirectory))
        } catch .deviceIdentityUnreadable(let path, let reason) where FileOperations.exists(path) {
            var aside = path + ".damaged-" + AppDatabase.compactStamp(now)
            if FileOperations.exists(aside) { aside += "-" + FileOperations.randomSuffix() }
            do {
                try FileOperations.rename(path, to: aside)
                try FileOperations.fsyncDirectory(stateDirectory.path)
            } catch {
                throw StoreError.fileSystem(
                    error, directory: stateDirectory.path,
                    consequence: "the damaged device id (\(reason)) was not moved aside")
            }
            return Loaded(id: try loadOrCreate(stateDirectory: stateDirectory), replacedFile: aside, problem: reason)
        }
    }

    /// Reads the UUID in `<state>/device-id`, or creates it (a random UUID v4, mode 0600, written
    /// durably) when the file does not exist. A file that exists but cannot be read or does not
    /// hold a UUID is an error here (``loadOrReplace(stateDirectory:now:)`` replaces one that holds no UUID).
    public static func loadOrCreate(stateDirectory: StateDirectory) throws(StoreError) -> UUID {
        let path = stateDirectory.deviceIDPath
        do {
            let bytes = try FileOperations.readFile(path, limit: 4096)
            let text = String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            guard let id = UUID(uuidString: text) else {
                let shown = text.isEmpty ? "it is empty" : "it holds \(bytes.count) bytes that are not a UUID"
                throw StoreError.deviceIdentityUnreadable(path: path, reason: shown)
            }
            return id
        } catch let error as SystemCallError where error.errno == ENOENT {
            // First start: create it below.
        } catch let error as SystemCallError {
            throw StoreError.fileSystem(
                error, directory: stateDirectory.path,
                consequence: "the device id \(path) was not read and the daemon cannot start")
        } catch let error as StoreError {
            throw error
        } catch {
            throw StoreError.deviceIdentityUnreadable(path: path, reason: "\(error)")
        }

        let id = UUID()  // Foundation's UUID() is a random (version 4) UUID
        let text = Array((id.uuidString.lowercased() + "\n").utf8)
        try stateDirectory.writeFileDurably(
            text, to: path, mode: 0o600, consequence: "the device id was not saved and the daemon cannot start")
        return id
    }
}
