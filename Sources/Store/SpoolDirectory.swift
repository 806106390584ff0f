import Foundation
import Logging
import SwiftWingCore

#if canImport(Glibc)
    import Glibc
#endif

/// A photo (or thumbnail) that is durable in the spool: the bytes are on disk and its name is in
/// the directory, both fsynced.
public struct SpooledImage: Hashable, Sendable {
    /// The file name inside the spool directory, e.g. `3f1c…e1.jpg` (what the queue row stores).
    public var fileName: String
    /// The absolute path.
    public var path: String
    /// Bytes.
    public var size: Int

    public init(fileName: String, path: String, size: Int) {
        self.fileName = fileName
        self.path = path
        self.size = size
    }
}

/// The spool: one JPEG per queued scan, `<state>/spool/<scan id>.jpg`, plus an optional
/// `<scan id>.thumb.jpg`, until the scan is done.
///
/// A write is durable before it returns (temporary file → write loop → fsync → rename → fsync of
/// the directory), and leaves nothing behind when it fails. Only then does the caller queue the
/// row (``ScanQueue/enqueue(_:now:)``).
public struct SpoolDirectory: Sendable {
    /// The spool directory.
    public let path: String
    /// Where files that fail validation on start are moved.
    public let quarantinePath: String
    /// The state directory, named in errors (it is what a person frees space on or moves).
    public let stateDirectoryPath: String

    /// Temporary files start with this; a crash can leave them, ``sweepTemporaryFiles()`` removes them.
    static let temporaryPrefix = ".tmp."
    static let imageSuffix = ".jpg"
    static let thumbnailSuffix = ".thumb.jpg"

    /// The spool of `stateDirectory` (created by ``StateDirectory/create()``).
    public init(_ stateDirectory: StateDirectory) {
        self.path = stateDirectory.spoolPath
        self.quarantinePath = stateDirectory.quarantinePath
        self.stateDirectoryPath = stateDirectory.path
    }

    /// The file name of a scan's photo.
    public static func imageFileName(for id: UUID) -> String { id.uuidString.lowercased() + imageSuffix }
    /// The file name of a scan's thumbnail.
    public static func thumbnailFileName(for id: UUID) -> String { id.uuidString.lowercased() + thumbnailSuffix }

    /// The absolute path of a file name stored in a queue row (``ScanRecord/imagePath``, ``ScanRecord/thumbnailPath``).
    public func path(of fileName: String) -> String { path + "/" + fileName }

    /// Writes a scan's photo durably as `<id>.jpg`. On failure (full disk, read-only file system,
    /// permissions, I/O error) no file is left and the error says what happened and what to do;
    /// the press was not saved.
    /// The corresponding C functions are `open`, `write`, `fsync`, `rename`.
    public func write(jpeg bytes: some ContiguousBytes, for id: UUID) throws(StoreError) -> SpooledImage {
        try write(bytes, fileName: Self.imageFileName(for: id), consequence: "the press was not saved")
    }

    /// Writes a scan's thumbnail durably as `<id>.thumb.jpg` (same guarantees as ``write(jpeg:for:)``).
    public func write(thumbnail bytes: some ContiguousBytes, for id: UUID) throws(StoreError) -> SpooledImage {
        try write(bytes, fileName: Self.thumbnailFileName(for: id), consequence: "the thumbnail was not saved")
    }

    private func write(_ bytes: some ContiguousBytes, fileName: String, consequence: String) throws(StoreError)
        -> SpooledImage
    {
        let finalPath = path(of: fileName)
        let temporaryPath = path(of: Self.temporaryPrefix + fileName + "." + FileOperations.randomSuffix())
        let result: Result<Int, SystemCallError> = bytes.withUnsafeBytes { raw in
            do throws(SystemCallError) {
                try FileOperations.writeDurably(raw, to: finalPath, temporaryPath: temporaryPath, mode: 0o640)
                return .success(raw.count)
            } catch {
                return .failure(error)
            }
        }
        switch result {
        case .success(let size):
            return SpooledImage(fileName: fileName, path: finalPath, size: size)
        case .failure(let error):
            throw Self.classify(error, spool: path, stateDirectory: stateDirectoryPath, consequence: consequence)
        }
    }

    /// The photo `fileName` (a scan's ``ScanRecord/imagePath``) as it is on disk now, for an upload
    /// that reads it while sending: the file is opened, so a photo that is gone or unreadable is
    /// reported here, and its size comes from that descriptor. Nothing is read.
    /// The corresponding C functions are `open` and `fstat`.
    public func image(_ fileName: String) throws(StoreError) -> SpooledImage {
        let imagePath = path(of: fileName)
        do throws(SystemCallError) {
            let fd = try FileOperations.open(imagePath, O_RDONLY | O_CLOEXEC)
            defer { _ = Glibc.close(fd) }
            var info = stat()
            _ = try retryingOnInterrupt("fstat", subject: imagePath) { fstat(fd, &info) }
            guard info.st_mode & S_IFMT == S_IFREG else {
                let kind = info.st_mode & S_IFMT == S_IFDIR ? EISDIR : EINVAL
                throw SystemCallError("open", subject: imagePath, errno: kind)
            }
            return SpooledImage(fileName: fileName, path: imagePath, size: Int(info.st_size))
        } catch {
            throw Self.classify(
                error, spool: path, stateDirectory: stateDirectoryPath,
                consequence: "the photo \(fileName) was not read")
        }
    }

    /// Removes a scan's photo and thumbnail (after it is done or discarded), durably. Missing files are fine.
    public func remove(scan id: UUID) throws(StoreError) {
        do {
            // The photo goes last: while it exists, the next start's reconciliation finishes an interrupted removal.
            try FileOperations.unlink(path(of: Self.thumbnailFileName(for: id)))
            try FileOperations.unlink(path(of: Self.imageFileName(for: id)))
            try FileOperations.fsyncDirectory(path)
        } catch {
            throw Self.classify(
                error, spool: path, stateDirectory: stateDirectoryPath,
                consequence: "the spool file of scan \(id.uuidString.lowercased()) remains")
        }
    }

    /// Removes temporary files a crash left behind (a write that never reached its rename), and
    /// returns their names. The daemon calls it on start, holding the state-directory lock.
    @discardableResult
    public func sweepTemporaryFiles() throws(StoreError) -> [String] {
        do {
            let stray = try FileOperations.directoryEntries(path).filter { $0.hasPrefix(Self.temporaryPrefix) }.sorted()
            for name in stray { try FileOperations.unlink(path(of: name)) }
            if !stray.isEmpty { try FileOperations.fsyncDirectory(path) }
            return stray
        } catch {
            throw Self.classify(
                error, spool: path, stateDirectory: stateDirectoryPath,
                consequence: "stray temporary files were not removed")
        }
    }

    /// The photos in the spool (`<uuid>.jpg`), by scan id.
    func imageFiles() throws(StoreError) -> [UUID: String] {
        let names: [String]
        do {
            names = try FileOperations.directoryEntries(path)
        } catch {
            throw Self.classify(
                error, spool: path, stateDirectory: stateDirectoryPath, consequence: "the spool was not read")
        }
        var result: [UUID: String] = [:]
        for name in names
        where name.hasSuffix(Self.imageSuffix) && !name.hasSuffix(Self.thumbnailSuffix)
            && !name.hasPrefix(".")
        {
            if let id = UUID(uuidString: String(name.dropLast(Self.imageSuffix.count))) { result[id] = name }
        }
        return result
    }

    /// Moves a spool file into the quarantine folder, durably; returns its new path.
    func quarantine(_ fileName: String) throws(StoreError) -> String {
        let destination = quarantinePath + "/" + fileName
        do {
            try FileOperations.makeDirectory(quarantinePath, mode: 0o750)
            try FileOperations.rename(path(of: fileName), to: destination)
            try FileOperations.fsyncDirectory(quarantinePath)
            try FileOperations.fsyncDirectory(path)
        } catch {
            throw Self.classify(
                error, spool: path, stateDirectory: stateDirectoryPath,
                consequence: "\(fileName) stays in the spool")
        }
        return destination
    }

    static func classify(
        _ error: SystemCallError, spool: String, stateDirectory: String, consequence: String
    ) -> StoreError {
        switch error.errno {
        case ENOSPC, EDQUOT, EROFS:
            // Space and mount state belong to the state directory's file system: name that.
            return StoreError.fileSystem(
                error, directory: "the state directory \(stateDirectory)", consequence: consequence)
        default:
            return StoreError.fileSystem(error, directory: spool, consequence: consequence)
        }
    }
}
