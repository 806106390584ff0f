import SwiftWingCore

#if canImport(Glibc)
    import Glibc
#endif

/// A file body on the transfer thread: the descriptor opened when the transfer starts, and how far
/// curl has read prefix + file + suffix. The file is read with `pread` in the chunks curl asks for,
/// so memory stays at curl's upload buffer whatever the file's size, and a rewind is a new position.
///
/// The length announced is fixed when the file is opened. A file that ends early fails the read
/// (curl then aborts the transfer) instead of sending a short body; bytes a growing file gains are
/// not sent. A file removed (or replaced by a rename) before all of it was read fails too: its
/// bytes would still come through the descriptor, but whoever removed it no longer wants it sent.
final class FileBodyReader {
    let body: HTTPFileBody
    /// The file's size when it was opened.
    let fileSize: Int
    private var descriptor: Int32?
    private(set) var position = 0

    /// Opens the file and takes its size from that descriptor.
    /// The corresponding C functions are `open` and `fstat`.
    init(_ body: HTTPFileBody) throws(HTTPError) {
        self.body = body
        let descriptor: Int32
        do {
            descriptor = try FileOperations.open(body.path, O_RDONLY | O_CLOEXEC)
        } catch {
            throw Self.unreadable(body.path, error)
        }
        let info: stat
        do {
            info = try Self.status(of: descriptor, path: body.path)
        } catch {
            _ = Glibc.close(descriptor)
            throw Self.unreadable(body.path, error)
        }
        guard info.st_mode & S_IFMT == S_IFREG else {
            _ = Glibc.close(descriptor)
            throw .requestBodyUnreadable(path: body.path, detail: "not a regular file")
        }
        self.descriptor = descriptor
        fileSize = Int(info.st_size)
    }

    deinit {
        close()
    }

    /// Prefix, file and suffix: the body's length on the wire.
    var totalSize: Int { body.prefix.count + fileSize + body.suffix.count }

    /// Fills `buffer` from the current position and moves past what it filled; 0 at the end.
    /// Throws when the file ended before its announced size or a read failed.
    /// The corresponding C function is `pread`.
    func read(into buffer: UnsafeMutableRawBufferPointer) throws(HTTPError) -> Int {
        guard let base = buffer.baseAddress else { return 0 }
        let fileStart = body.prefix.count
        let suffixStart = fileStart + fileSize
        var filled = 0
        while filled < buffer.count && position < totalSize {
            let room = buffer.count - filled
            let count: Int
            if position < fileStart {
                count = min(room, fileStart - position)
                copy(body.prefix, from: position, count: count, to: base + filled)
            } else if position < suffixStart {
                let wanted = min(room, suffixStart - position)
                count = try readFile(at: position - fileStart, count: wanted, to: base + filled)
            } else {
                count = min(room, totalSize - position)
                copy(body.suffix, from: position - suffixStart, count: count, to: base + filled)
            }
            position += count
            filled += count
        }
        return filled
    }

    /// Moves to `offset` bytes from the body's start (curl rewinds to send the body again).
    /// False when `offset` is outside the body.
    func seek(to offset: Int) -> Bool {
        guard offset >= 0 && offset <= totalSize else { return false }
        position = offset
        return true
    }

    /// Closes the file. Idempotent.
    func close() {
        if let descriptor { _ = Glibc.close(descriptor) }
        descriptor = nil
    }

    /// The detail leaves out the path, which the error carries already.
    private static func unreadable(_ path: String, _ error: SystemCallError) -> HTTPError {
        .requestBodyUnreadable(path: path, detail: "\(error.call): \(error.reason) (errno \(error.errno))")
    }

    /// The corresponding C function is `fstat`.
    private static func status(of descriptor: Int32, path: String) throws(SystemCallError) -> stat {
        var info = stat()
        _ = try retryingOnInterrupt("fstat", subject: path) { fstat(descriptor, &info) }
        return info
    }

    private func copy(_ bytes: [UInt8], from offset: Int, count: Int, to destination: UnsafeMutableRawPointer) {
        bytes.withUnsafeBytes { destination.copyMemory(from: $0.baseAddress! + offset, byteCount: count) }
    }

    private func readFile(
        at offset: Int, count: Int, to destination: UnsafeMutableRawPointer
    ) throws(HTTPError) -> Int {
        guard let descriptor else {
            throw .requestBodyUnreadable(path: body.path, detail: "the file was closed before it was sent")
        }
        let links: nlink_t
        do {
            links = try Self.status(of: descriptor, path: body.path).st_nlink
        } catch {
            throw Self.unreadable(body.path, error)
        }
        guard links > 0 else {
            throw .requestBodyUnreadable(path: body.path, detail: "it was removed while being sent")
        }
        let got: Int
        do {
            got = try retryingOnInterrupt("pread", subject: body.path) {
                Glibc.pread(descriptor, destination, count, off_t(offset))
            }
        } catch {
            throw Self.unreadable(body.path, error)
        }
        guard got > 0 else {
            throw .requestBodyUnreadable(
                path: body.path,
                detail: "it ended at byte \(offset) while being sent; \(fileSize) bytes had been announced")
        }
        return got
    }
}
