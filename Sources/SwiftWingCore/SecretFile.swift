#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Reads a small secret (an API key) from a file an owner or systemd put there, refusing what is not
/// one: a symbolic link (a file-write bug elsewhere could point it at another secret), a FIFO or a
/// device (`/dev/zero` would be read until memory runs out), anything larger than `limit`.
///
/// The file is opened `O_NOFOLLOW | O_NONBLOCK` (a FIFO with no writer would otherwise block the
/// open), checked with `fstat` on the open descriptor (no race with a swap of the path), and at most
/// `limit + 1` bytes are read, so the size check holds even if the file grows meanwhile.
public enum SecretFile {
    public static let defaultLimit = 4096

    /// The file's bytes, at most `limit`.
    public static func read(_ path: String, limit: Int = defaultLimit) throws(SecretFileError) -> [UInt8] {
        let fd: Int32
        do {
            fd = try FileOperations.open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY)
        } catch {
            // Linux answers ELOOP for a final component that is a link under O_NOFOLLOW.
            if error.errno == ELOOP { throw SecretFileError(path: path, problem: .symbolicLink) }
            throw SecretFileError(path: path, problem: .unreadable(error.reason))
        }
        defer { _ = Glibc.close(fd) }
        var info = stat()
        do {
            _ = try retryingOnInterrupt("fstat", subject: path) { fstat(fd, &info) }
        } catch {
            throw SecretFileError(path: path, problem: .unreadable(error.reason))
        }
        guard info.st_mode & S_IFMT == S_IFREG else {
            throw SecretFileError(path: path, problem: .notRegular(kind: kindName(info.st_mode)))
        }
        guard info.st_size <= limit else { throw SecretFileError(path: path, problem: .tooLarge(limit: limit)) }
        var buffer = [UInt8](repeating: 0, count: limit + 1)
        var filled = 0
        while filled < buffer.count {
            let wanted = buffer.count - filled
            let count: Int
            do {
                count = try retryingOnInterrupt("read", subject: path) {
                    buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + filled, wanted) }
                }
            } catch {
                throw SecretFileError(path: path, problem: .unreadable(error.reason))
            }
            if count == 0 { break }
            filled += count
        }
        guard filled <= limit else { throw SecretFileError(path: path, problem: .tooLarge(limit: limit)) }
        return Array(buffer[0..<filled])
    }

    /// The key in the file at `path`, surrounding whitespace and line ends trimmed (may be empty: the
    /// caller decides what an empty file means). Refuses a key of more than one line.
    public static func readKey(_ path: String, limit: Int = defaultLimit) throws(SecretFileError) -> String {
        let bytes = try read(path, limit: limit)
        var text = Substring(decoding: bytes, as: UTF8.self)
        while let first = text.first, first.isWhitespace { text.removeFirst() }
        while let last = text.last, last.isWhitespace { text.removeLast() }
        guard !text.contains(where: { $0.isNewline || $0 == "\0" }) else {
            throw SecretFileError(path: path, problem: .moreThanOneLine)
        }
        return String(text)
    }

    static func kindName(_ mode: mode_t) -> String {
        switch mode & S_IFMT {
        case S_IFDIR: "a directory"
        case S_IFIFO: "a FIFO"
        case S_IFCHR: "a character device"
        case S_IFBLK: "a block device"
        case S_IFSOCK: "a socket"
        default: "not a regular file"
        }
    }
}

/// Why a secret file was refused: names the file and what to do, never its content.
public struct SecretFileError: Error, Equatable, Sendable, CustomStringConvertible {
    public enum Problem: Equatable, Sendable {
        case symbolicLink
        case notRegular(kind: String)
        case tooLarge(limit: Int)
        case unreadable(String)
        case moreThanOneLine
    }

    public var path: String
    public var problem: Problem

    public init(path: String, problem: Problem) {
        self.path = path
        self.problem = problem
    }

    /// The reason alone, for callers that wrap it in their own sentence.
    public var reason: String {
        switch problem {
        case .symbolicLink:
            "it is a symbolic link, which is not followed: put the key itself in \(path) (a regular file)"
        case .notRegular(let kind):
            "it is \(kind), not a regular file: put the key alone in a regular file at \(path)"
        case .tooLarge(let limit):
            "it is larger than \(limit) bytes: put the key alone in \(path), one line"
        case .moreThanOneLine:
            "it holds more than one line: put the key alone in \(path), one line"
        case .unreadable(let reason):
            "\(reason): make \(path) a regular file readable by this service's user"
        }
    }

    public var description: String { "the key file \(path) cannot be used: \(reason)" }
}
