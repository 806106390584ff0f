import Foundation
import GRDB
import SwiftWingCore

#if canImport(Glibc)
    import Glibc
#endif

/// What ``ScanQueue/reconcile(spool:now:)`` found and did, for the daemon to log on start.
public struct ReconciliationReport: Hashable, Sendable, CustomStringConvertible {
    /// Temporary files of interrupted writes, removed.
    public var sweptTemporaryFiles: [String] = []
    /// Photos in the spool without a queue row (the device stopped between saving the photo and
    /// queuing it): re-queued as `queued` scans marked ``ScanRecord/recovered``.
    public var recoveredScans: [UUID] = []
    /// Photos without a row that are not whole JPEGs: moved to `spool/quarantine/` (path and why).
    public var quarantinedFiles: [QuarantinedFile] = []
    /// Rows whose photo is missing: marked `needs_attention` (they cannot be uploaded).
    public var scansMissingImages: [UUID] = []
    /// `analyzing` rows whose photo is missing: left as they are, since the backend already has
    /// the photo and the result can still be fetched; a re-upload will not be possible.
    public var analyzingScansMissingImages: [UUID] = []
    /// Photos or thumbnails of scans already `done` or discarded (the device stopped before deleting them, or
    /// between deleting the thumbnail and the photo): removed.
    public var removedFilesOfDoneScans: [UUID] = []
    /// Photos of `done` scans whose books' spines were never cut (the device stopped between landing the books and
    /// keeping their spines): kept for the uplink, which cuts the spines when it starts and then removes them.
    public var photosKeptForSpines: [UUID] = []

    public struct QuarantinedFile: Hashable, Sendable {
        public var path: String
        public var reason: String
    }

    public init() {}

    /// Nothing was out of place.
    public var isClean: Bool {
        sweptTemporaryFiles.isEmpty && recoveredScans.isEmpty && quarantinedFiles.isEmpty
            && scansMissingImages.isEmpty && analyzingScansMissingImages.isEmpty && removedFilesOfDoneScans.isEmpty
            && photosKeptForSpines.isEmpty
    }

    public var description: String {
        if isClean { return "spool and queue agree" }
        func ids(_ list: [UUID]) -> String { list.map { $0.uuidString.lowercased() }.joined(separator: ", ") }
        var parts: [String] = []
        if !recoveredScans.isEmpty {
            parts.append("\(recoveredScans.count) photo(s) without a queue row re-queued: \(ids(recoveredScans))")
        }
        if !quarantinedFiles.isEmpty {
            let list = quarantinedFiles.map { "\($0.path) (\($0.reason))" }.joined(separator: ", ")
            parts.append("\(quarantinedFiles.count) damaged photo(s) moved to quarantine: \(list)")
        }
        if !scansMissingImages.isEmpty {
            parts.append(
                "\(scansMissingImages.count) scan(s) whose photo is missing marked needs_attention: "
                    + ids(scansMissingImages))
        }
        if !analyzingScansMissingImages.isEmpty {
            parts.append(
                "\(analyzingScansMissingImages.count) analyzing scan(s) without their photo (results "
                    + "still fetched, no re-upload possible): \(ids(analyzingScansMissingImages))")
        }
        if !removedFilesOfDoneScans.isEmpty {
            parts.append(
                "\(removedFilesOfDoneScans.count) photo(s) of done or discarded scans removed: \(ids(removedFilesOfDoneScans))"
            )
        }
        if !photosKeptForSpines.isEmpty {
            parts.append(
                "\(photosKeptForSpines.count) photo(s) of done scans kept until the uplink cuts their books' spines: "
                    + ids(photosKeptForSpines))
        }
        if !sweptTemporaryFiles.isEmpty {
            parts.append("\(sweptTemporaryFiles.count) temporary file(s) of interrupted writes removed")
        }
        return parts.joined(separator: "; ")
    }
}

extension ScanQueue {
    /// Makes the spool and the queue agree after a crash or power cut. The daemon calls it once on
    /// start, holding the ``StateDirectoryLock``, before it accepts presses. Nothing is dropped
    /// silently:
    ///
    /// - temporary files of interrupted writes are removed (their rename never happened, so no row
    ///   can point at them);
    /// - a photo without a row is re-queued (`queued`, ``ScanRecord/recovered``, a note in
    ///   `lastError`) when it is a whole JPEG, and moved to `spool/quarantine/` otherwise;
    /// - a row whose photo is missing becomes `needs_attention`, naming the missing file (except
    ///   `analyzing` ones, which need the backend's result, not the photo);
    /// - the photo of a `done` scan is removed, unless its books' spines are still to be cut (the uplink does that
    ///   when it starts, then removes it).
    ///
    /// `orphanNote` is the `lastError` of a re-queued photo (by default: the device stopped between
    /// saving it and queuing it).
    public func reconcile(
        spool: SpoolDirectory, now: Date = Date(), orphanNote: String? = nil
    ) throws(StoreError) -> ReconciliationReport {
        var report = ReconciliationReport()
        report.sweptTemporaryFiles = try spool.sweepTemporaryFiles()
        let files = try spool.imageFiles()
        let rows = try database.read("the queue was not read") { db in
            try Row.fetchAll(db, sql: "SELECT id, state, discardedAt, imagePath FROM scan")
        }

        var known: Set<UUID> = []
        var missing: [(UUID, ScanState, String)] = []
        var doneWithFile: [UUID] = []
        let awaitingSpines = try database.scansAwaitingSpines()
        for row in rows {
            guard let id = UUID(uuidString: row["id"]) else { continue }
            known.insert(id)
            let state: ScanState = row["state"]
            let imagePath: String = row["imagePath"]
            let discarded = (row["discardedAt"] as DatabaseValue) != .null
            let present = FileOperations.exists(spool.path(of: imagePath))
            if state == .done, !discarded, present, awaitingSpines.contains(id) {
                report.photosKeptForSpines.append(id)
            } else if state == .done || discarded {
                let thumbnail = FileOperations.exists(spool.path(of: SpoolDirectory.thumbnailFileName(for: id)))
                if present || thumbnail { doneWithFile.append(id) }
            } else if !present && state != .needsAttention {
                missing.append((id, state, imagePath))
            }
        }

        // Photos without rows, oldest file first so the queue keeps the order of the presses.
        var orphans: [(id: UUID, name: String, modified: Date)] = []
        for (id, name) in files where !known.contains(id) {
            let modified = (try? FileOperations.status(spool.path(of: name))).map(Self.modificationDate) ?? now
            orphans.append((id, name, modified))
        }
        orphans.sort { ($0.modified, $0.name) < ($1.modified, $1.name) }
        for orphan in orphans {
            let path = spool.path(of: orphan.name)
            let bytes: [UInt8]
            do {
                bytes = try FileOperations.readFile(path, limit: 64 << 20)
            } catch {
                throw SpoolDirectory.classify(
                    error, spool: spool.path, stateDirectory: spool.stateDirectoryPath,
                    consequence: "\(orphan.name) was not re-queued")
            }
            switch JPEGInspection.inspect(bytes) {
            case .failure(let invalid):
                let destination = try spool.quarantine(orphan.name)
                report.quarantinedFiles.append(.init(path: destination, reason: invalid.reason))
            case .success(let jpeg):
                let thumbnail = SpoolDirectory.thumbnailFileName(for: orphan.id)
                let record = ScanRecord(
                    id: orphan.id, pressedAt: MonotonicInstant(nanoseconds: 0), pressedWallAt: orphan.modified,
                    createdAt: now, updatedAt: now, state: .queued,
                    lastError: orphanNote
                        ?? ("recovered on start: the photo was in the spool without a queue row "
                            + "(the device stopped between saving it and queuing it)"),
                    imagePath: orphan.name, imageSize: bytes.count, width: jpeg.width, height: jpeg.height,
                    thumbnailPath: FileOperations.exists(spool.path(of: thumbnail)) ? thumbnail : nil,
                    recovered: true)
                try database.write("\(orphan.name) was not re-queued") { db in try record.insert(db) }
                report.recoveredScans.append(orphan.id)
            }
        }

        for (id, state, imagePath) in missing {
            if state == .analyzing {
                report.analyzingScansMissingImages.append(id)
                continue
            }
            try markNeedsAttention(
                id,
                reason: "the photo \(spool.path(of: imagePath)) is missing from the spool, so the scan cannot be "
                    + "uploaded: discard it (`swiftwing queue discard \(id.uuidString.lowercased())`)",
                now: now)
            report.scansMissingImages.append(id)
        }

        for id in doneWithFile {
            try spool.remove(scan: id)
            report.removedFilesOfDoneScans.append(id)
        }
        return report
    }

    static func modificationDate(_ info: stat) -> Date {
        Date(timeIntervalSince1970: TimeInterval(info.st_mtim.tv_sec) + TimeInterval(info.st_mtim.tv_nsec) / 1e9)
    }
}
