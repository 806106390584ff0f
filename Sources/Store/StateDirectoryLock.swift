import SwiftWingCore
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Exclusive use of a state directory by one daemon: an `flock(LOCK_EX)` on `<state>/swiftwing.lock`,
/// which holds the PID of the holder. The kernel drops the lock when the process exits, however it
/// exits, so a crash never leaves a stale lock. Keep the value alive for the life of the process.
public final class StateDirectoryLock: Sendable {
    /// The lock file.
    public let path: String
    private let descriptor: Mutex<Int32?>

    private init(path: String, descriptor: Int32) {
        self.path = path
        self.descriptor = Mutex(descriptor)
    }

    /// Takes the lock without waiting. Throws ``StoreError/stateDirectoryLocked(directory:holderPID:)``
    /// (with the holder's PID when the lock file has it) when another process, or another
    /// acquisition in this process, holds it.
    /// The corresponding C function is `flock`.
    public static func acquire(stateDirectory: StateDirectory) throws(StoreError) -> StateDirectoryLock {
        let path = stateDirectory.lockPath
        let consequence = "the daemon cannot start"
        try stateDirectory.checkWritableByThisUser()
        let fd: Int32
        do {
            // O_NOFOLLOW: a symlink planted as the lock file must not make the daemon (or root) open,
            // truncate and write the file it points at.
            fd = try FileOperations.open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, mode: 0o644)
        } catch {
            throw StoreError.fileSystem(error, directory: stateDirectory.path, consequence: consequence)
        }
        do {
            _ = try retryingOnInterrupt("flock", subject: path) { flock(fd, LOCK_EX | LOCK_NB) }
        } catch {
            defer { _ = close(fd) }
            if error.errno == EWOULDBLOCK {
                let text = (try? FileOperations.read(fd, count: 32, at: 0, path: path)) ?? []
                let pid = Int32(String(decoding: text, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
                throw StoreError.stateDirectoryLocked(directory: stateDirectory.path, holderPID: pid)
            }
            throw StoreError.fileSystem(error, directory: stateDirectory.path, consequence: consequence)
        }
        // Record who holds it, for the next one's error message. Failing here is not fatal.
        let pid = Array("\(getpid())\n".utf8)
        if ftruncate(fd, 0) == 0 {
            _ = pid.withUnsafeBytes { pwrite(fd, $0.baseAddress!, $0.count, 0) }
        }
        return StateDirectoryLock(path: path, descriptor: fd)
    }

    /// Releases the lock (also done when the value is deinitialised or the process exits).
    public func release() {
        descriptor.withLock { fd in
            if let open = fd {
                _ = flock(open, LOCK_UN)
                _ = close(open)
                fd = nil
            }
        }
    }

    deinit {
        release()
    }
}
