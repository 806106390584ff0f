import Foundation
import SwiftWingCore

#if canImport(Glibc)
import Glibc
#endif

/// The device's persistent identity, sent as `X-Device-ID` on every request.
public enum DeviceIdentity {
    /// Reads the UUID in `<state>/device-id`, or creates it (a random UUID v4, mode 0600, written
    /// durably) when the file does not exist. A file that exists but cannot be read or does not
    /// hold a UUID is an error, not replaced: the backend knows the device by that id.
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
            throw StoreError.deviceIdentityUnreadable(path: path, reason: error.description)
        } catch let error as StoreError {
            throw error
        } catch {
            throw StoreError.deviceIdentityUnreadable(path: path, reason: "\(error)")
        }

        let id = UUID()  // Foundation's UUID() is a random (version 4) UUID
        let text = Array((id.uuidString.lowercased() + "\n").utf8)
        let failure: SystemCallError? = text.withUnsafeBytes { raw in
            do throws(SystemCallError) {
                try FileOperations.writeDurably(
                    raw, to: path, temporaryPath: path + ".tmp." + FileOperations.randomSuffix(), mode: 0o600)
                return nil
            } catch {
                return error
            }
        }
        if let failure {
            throw StoreError.fileSystem(failure, directory: stateDirectory.path,
                                        consequence: "the device id was not saved and the daemon cannot start")
        }
        return id
    }
}
