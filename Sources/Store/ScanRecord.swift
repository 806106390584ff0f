import Foundation
import GRDB
import SwiftWingCore

/// Where a scan is on its way to the library. Stored as the raw value.
///
/// `queued → uploading → analyzing → done`, with `failed` (see ``ScanRecord/retryable``) and
/// `needsAttention` (a person must look: the photo is missing, the backend rejected it for good…).
/// `done` is final (enforced by a trigger).
public enum ScanState: String, CaseIterable, Codable, Sendable, Hashable, DatabaseValueConvertible {
    case queued
    case uploading
    case analyzing
    case done
    case failed
    case needsAttention = "needs_attention"
}

/// What the daemon knows when it queues a scan: the spooled photo and when it was taken.
public struct NewScan: Sendable, Hashable {
    public var id: UUID
    /// When the shutter was pressed, on `CLOCK_MONOTONIC`.
    public var pressedAt: MonotonicInstant
    /// When the shutter was pressed, wall clock (for people; may be wrong on a Pi without RTC).
    public var pressedWallAt: Date
    /// The timestamp of the frame that was kept.
    public var frameAt: MonotonicInstant?
    /// The photo, already durable in the spool (``SpoolDirectory/write(jpeg:for:)``).
    public var image: SpooledImage
    public var width: Int
    public var height: Int
    public var thumbnail: SpooledImage?
    /// The frame's quality, when it was measured.
    public var quality: ScanQuality?
    /// The codes read in the frame.
    public var barcodes: [ScanBarcode]

    public init(
        id: UUID, pressedAt: MonotonicInstant, pressedWallAt: Date, frameAt: MonotonicInstant?,
        image: SpooledImage, width: Int, height: Int, thumbnail: SpooledImage? = nil,
        quality: ScanQuality? = nil, barcodes: [ScanBarcode] = []
    ) {
        self.id = id
        self.pressedAt = pressedAt
        self.pressedWallAt = pressedWallAt
        self.frameAt = frameAt
        self.image = image
        self.width = width
        self.height = height
        self.thumbnail = thumbnail
        self.quality = quality
        self.barcodes = barcodes
    }
}

/// One row of the `scan` table: a press of the shutter and everything that happened to it since.
///
/// `jobToken` is a secret: ``description`` and the `Codable` (JSON) form leave it out, and it is
/// cleared when the scan is done. The database mapping is written by hand (`init(row:)`,
/// `encode(to:)`) so that the JSON form can differ from the row.
public struct ScanRecord: Identifiable, Hashable, Sendable, FetchableRecord, PersistableRecord {
    public static let databaseTableName = "scan"

    /// The scan id; also the first job's `Idempotency-Key` (send ``idempotencyKey``).
    public var id: UUID
    public var pressedAt: MonotonicInstant
    public var pressedWallAt: Date
    public var frameAt: MonotonicInstant?
    public var createdAt: Date
    public var updatedAt: Date
    public var state: ScanState
    /// Upload attempts started (incremented by ``ScanQueue/markUploading(_:now:)``).
    public var attempts: Int
    /// Not before this time (backoff, rate limit); `nil` means now.
    public var nextAttemptAt: Date?
    public var jobID: String?
    public var streamURL: String?
    public var statusURL: String?
    /// The per-job bearer token for the stream. Never log it.
    public var jobToken: String?
    /// The last SSE event id seen, for `Last-Event-ID` when resuming.
    public var lastEventID: String?
    /// 0…1.
    public var progress: Double
    public var lastError: String?
    /// For `failed`: may it be retried? `nil` when unknown or not failed.
    public var retryable: Bool?
    /// The photo's file name inside the spool directory (``SpoolDirectory/path(of:)`` gives the path).
    public var imagePath: String
    public var imageSize: Int
    public var width: Int
    public var height: Int
    /// The thumbnail's file name inside the spool directory.
    public var thumbnailPath: String?
    /// Re-queued by ``ScanQueue/reconcile(spool:now:)`` from a spool file whose row was never committed.
    public var recovered: Bool
    /// When a person discarded the scan. A discarded scan is in no list of work.
    public var discardedAt: Date?
    /// The `Idempotency-Key` of the current job when it is not the scan id: a job the server failed
    /// (or lost) is re-sent under a new key, because the server would answer the old key with the
    /// old, failed job. `nil` for the first job of every scan.
    public var uploadKey: String?
    /// The backend still holds this done scan's job and photo: `DELETE …/cleanup` is owed (retried
    /// until 2xx or 404, never blocking the library).
    public var cleanupPending: Bool = false
    /// Cleanup requests that failed so far (for backoff and for `swiftwing queue`).
    public var cleanupAttempts: Int = 0
    /// The frame's quality as measured before queueing; `nil` for scans from before the check.
    public var quality: ScanQuality?
    /// The codes read in the frame (ISBNs among them made books at once).
    public var barcodes: [ScanBarcode] = []
    /// A person asked for this poor frame to be uploaded anyway (`swiftwing queue retry`).
    public var uploadDespiteQuality: Bool = false

    public init(
        id: UUID, pressedAt: MonotonicInstant, pressedWallAt: Date, frameAt: MonotonicInstant? = nil,
        createdAt: Date, updatedAt: Date, state: ScanState = .queued, attempts: Int = 0,
        nextAttemptAt: Date? = nil, jobID: String? = nil, streamURL: String? = nil, statusURL: String? = nil,
        jobToken: String? = nil, lastEventID: String? = nil, progress: Double = 0, lastError: String? = nil,
        retryable: Bool? = nil, imagePath: String, imageSize: Int, width: Int, height: Int,
        thumbnailPath: String? = nil, recovered: Bool = false, discardedAt: Date? = nil
    ) {
        self.id = id
        self.pressedAt = pressedAt
        self.pressedWallAt = pressedWallAt
        self.frameAt = frameAt
        self.createdAt = createdAt
        self.updatedAt = updatedAt
        self.state = state
        self.attempts = attempts
        self.nextAttemptAt = nextAttemptAt
        self.jobID = jobID
        self.streamURL = streamURL
        self.statusURL = statusURL
        self.jobToken = jobToken
        self.lastEventID = lastEventID
        self.progress = progress
        self.lastError = lastError
        self.retryable = retryable
        self.imagePath = imagePath
        self.imageSize = imageSize
        self.width = width
        self.height = height
        self.thumbnailPath = thumbnailPath
        self.recovered = recovered
        self.discardedAt = discardedAt
    }

    /// The lowercase UUID string stored in the `id` column.
    public var idString: String { id.uuidString.lowercased() }

    /// Sent as `Idempotency-Key`: the scan id, unless the scan was re-sent after its job failed.
    public var idempotencyKey: String { uploadKey ?? idString }

    /// The table's columns.
    public enum Columns {
        public static let id = Column("id")
        public static let pressedAt = Column("pressedAt")
        public static let pressedWallAt = Column("pressedWallAt")
        public static let frameAt = Column("frameAt")
        public static let createdAt = Column("createdAt")
        public static let updatedAt = Column("updatedAt")
        public static let state = Column("state")
        public static let attempts = Column("attempts")
        public static let nextAttemptAt = Column("nextAttemptAt")
        public static let jobID = Column("jobId")
        public static let streamURL = Column("streamUrl")
        public static let statusURL = Column("statusUrl")
        public static let jobToken = Column("jobToken")
        public static let lastEventID = Column("lastEventId")
        public static let progress = Column("progress")
        public static let lastError = Column("lastError")
        public static let retryable = Column("retryable")
        public static let imagePath = Column("imagePath")
        public static let imageSize = Column("imageSize")
        public static let width = Column("width")
        public static let height = Column("height")
        public static let thumbnailPath = Column("thumbnailPath")
        public static let recovered = Column("recovered")
        public static let discardedAt = Column("discardedAt")
        public static let uploadKey = Column("uploadKey")
        public static let cleanupPending = Column("cleanupPending")
        public static let cleanupAttempts = Column("cleanupAttempts")
        public static let qualityVerdict = Column("qualityVerdict")
        public static let sharpness = Column("sharpness")
        public static let exposureMean = Column("exposureMean")
        public static let exposureShadows = Column("exposureShadows")
        public static let exposureHighlights = Column("exposureHighlights")
        public static let barcodes = Column("barcodes")
        public static let uploadDespiteQuality = Column("uploadDespiteQuality")
    }

    public init(row: Row) throws {
        guard let id = UUID(uuidString: row[Columns.id] as String) else {
            throw DatabaseError(
                resultCode: .SQLITE_MISMATCH, message: "scan.id is not a UUID: \(row[Columns.id] as String)")
        }
        self.id = id
        pressedAt = MonotonicInstant(nanoseconds: UInt64(bitPattern: row[Columns.pressedAt] as Int64))
        pressedWallAt = try StorageTimestamp.date(in: row, Columns.pressedWallAt)
        frameAt = (row[Columns.frameAt] as Int64?).map { MonotonicInstant(nanoseconds: UInt64(bitPattern: $0)) }
        createdAt = try StorageTimestamp.date(in: row, Columns.createdAt)
        updatedAt = try StorageTimestamp.date(in: row, Columns.updatedAt)
        state = row[Columns.state]
        attempts = row[Columns.attempts]
        nextAttemptAt = try StorageTimestamp.optionalDate(in: row, Columns.nextAttemptAt)
        jobID = row[Columns.jobID]
        streamURL = row[Columns.streamURL]
        statusURL = row[Columns.statusURL]
        jobToken = row[Columns.jobToken]
        lastEventID = row[Columns.lastEventID]
        progress = row[Columns.progress]
        lastError = row[Columns.lastError]
        retryable = row[Columns.retryable]
        imagePath = row[Columns.imagePath]
        imageSize = row[Columns.imageSize]
        width = row[Columns.width]
        height = row[Columns.height]
        thumbnailPath = row[Columns.thumbnailPath]
        recovered = row[Columns.recovered]
        discardedAt = try StorageTimestamp.optionalDate(in: row, Columns.discardedAt)
        uploadKey = row[Columns.uploadKey]
        cleanupPending = row[Columns.cleanupPending] ?? false
        cleanupAttempts = row[Columns.cleanupAttempts] ?? 0
        if let verdict = row[Columns.qualityVerdict] as ScanQuality.Verdict? {
            quality = ScanQuality(
                verdict: verdict, sharpness: row[Columns.sharpness] ?? 0,
                exposure: .init(
                    mean: row[Columns.exposureMean] ?? 0, shadows: row[Columns.exposureShadows] ?? 0,
                    highlights: row[Columns.exposureHighlights] ?? 0))
        }
        if let json = row[Columns.barcodes] as String?, let data = json.data(using: .utf8) {
            barcodes = (try? JSONDecoder().decode([ScanBarcode].self, from: data)) ?? []
        }
        uploadDespiteQuality = row[Columns.uploadDespiteQuality] ?? false
    }

    public func encode(to container: inout PersistenceContainer) throws {
        container[Columns.id] = idString
        container[Columns.pressedAt] = Int64(bitPattern: pressedAt.nanoseconds)
        container[Columns.pressedWallAt] = StorageTimestamp.databaseValue(pressedWallAt)
        container[Columns.frameAt] = frameAt.map { Int64(bitPattern: $0.nanoseconds) }
        container[Columns.createdAt] = StorageTimestamp.databaseValue(createdAt)
        container[Columns.updatedAt] = StorageTimestamp.databaseValue(updatedAt)
        container[Columns.state] = state
        container[Columns.attempts] = attempts
        container[Columns.nextAttemptAt] = nextAttemptAt.map(StorageTimestamp.databaseValue)
        container[Columns.jobID] = jobID
        container[Columns.streamURL] = streamURL
        container[Columns.statusURL] = statusURL
        container[Columns.jobToken] = jobToken
        container[Columns.lastEventID] = lastEventID
        container[Columns.progress] = progress
        container[Columns.lastError] = lastError
        container[Columns.retryable] = retryable
        container[Columns.imagePath] = imagePath
        container[Columns.imageSize] = imageSize
        container[Columns.width] = width
        container[Columns.height] = height
        container[Columns.thumbnailPath] = thumbnailPath
        container[Columns.recovered] = recovered
        container[Columns.discardedAt] = discardedAt.map(StorageTimestamp.databaseValue)
        container[Columns.uploadKey] = uploadKey
        container[Columns.cleanupPending] = cleanupPending
        container[Columns.cleanupAttempts] = cleanupAttempts
        container[Columns.qualityVerdict] = quality?.verdict
        container[Columns.sharpness] = quality?.sharpness
        container[Columns.exposureMean] = quality?.exposure.mean
        container[Columns.exposureShadows] = quality?.exposure.shadows
        container[Columns.exposureHighlights] = quality?.exposure.highlights
        container[Columns.barcodes] = String(decoding: try JSONEncoder().encode(barcodes), as: UTF8.self)
        container[Columns.uploadDespiteQuality] = uploadDespiteQuality
    }

    /// A discarded scan, or a done one: nothing more will happen to it.
    public var isSettled: Bool { state == .done || discardedAt != nil }
}

extension ScanRecord: CustomStringConvertible {
    /// A one-line summary for logs; never includes the job token.
    public var description: String {
        var parts = ["scan \(idString)", state.rawValue, "attempts=\(attempts)"]
        if let jobID { parts.append("job=\(jobID)") }
        if progress > 0 { parts.append("progress=\(progress)") }
        if recovered { parts.append("recovered") }
        if discardedAt != nil { parts.append("discarded") }
        if let lastError { parts.append("error=\(lastError)") }
        return parts.joined(separator: " ")
    }
}

extension ScanRecord: Codable {
    private enum CodingKeys: String, CodingKey {
        case id, pressedAt, pressedWallAt, frameAt, createdAt, updatedAt, state, attempts, nextAttemptAt
        case jobID = "jobId"
        case streamURL = "streamUrl"
        case statusURL = "statusUrl"
        case lastEventID = "lastEventId"
        case progress, lastError, retryable, imagePath, imageSize, width, height, thumbnailPath, recovered
        case discardedAt, cleanupPending, quality, barcodes
    }

    /// The JSON form (for `swiftwing queue --json`): monotonic instants as nanoseconds, no job token.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(idString, forKey: .id)
        try c.encode(pressedAt.nanoseconds, forKey: .pressedAt)
        try c.encode(pressedWallAt, forKey: .pressedWallAt)
        try c.encodeIfPresent(frameAt?.nanoseconds, forKey: .frameAt)
        try c.encode(createdAt, forKey: .createdAt)
        try c.encode(updatedAt, forKey: .updatedAt)
        try c.encode(state, forKey: .state)
        try c.encode(attempts, forKey: .attempts)
        try c.encodeIfPresent(nextAttemptAt, forKey: .nextAttemptAt)
        try c.encodeIfPresent(jobID, forKey: .jobID)
        try c.encodeIfPresent(streamURL, forKey: .streamURL)
        try c.encodeIfPresent(statusURL, forKey: .statusURL)
        try c.encodeIfPresent(lastEventID, forKey: .lastEventID)
        try c.encode(progress, forKey: .progress)
        try c.encodeIfPresent(lastError, forKey: .lastError)
        try c.encodeIfPresent(retryable, forKey: .retryable)
        try c.encode(imagePath, forKey: .imagePath)
        try c.encode(imageSize, forKey: .imageSize)
        try c.encode(width, forKey: .width)
        try c.encode(height, forKey: .height)
        try c.encodeIfPresent(thumbnailPath, forKey: .thumbnailPath)
        try c.encode(recovered, forKey: .recovered)
        try c.encodeIfPresent(discardedAt, forKey: .discardedAt)
        try c.encode(cleanupPending, forKey: .cleanupPending)
        try c.encodeIfPresent(quality, forKey: .quality)
        try c.encode(barcodes, forKey: .barcodes)
    }

    /// Reads the JSON form; the job token is never in it, so it is `nil`.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = try c.decode(UUID.self, forKey: .id)
        pressedAt = MonotonicInstant(nanoseconds: try c.decode(UInt64.self, forKey: .pressedAt))
        pressedWallAt = try c.decode(Date.self, forKey: .pressedWallAt)
        frameAt = try c.decodeIfPresent(UInt64.self, forKey: .frameAt).map(MonotonicInstant.init(nanoseconds:))
        createdAt = try c.decode(Date.self, forKey: .createdAt)
        updatedAt = try c.decode(Date.self, forKey: .updatedAt)
        state = try c.decode(ScanState.self, forKey: .state)
        attempts = try c.decode(Int.self, forKey: .attempts)
        nextAttemptAt = try c.decodeIfPresent(Date.self, forKey: .nextAttemptAt)
        jobID = try c.decodeIfPresent(String.self, forKey: .jobID)
        streamURL = try c.decodeIfPresent(String.self, forKey: .streamURL)
        statusURL = try c.decodeIfPresent(String.self, forKey: .statusURL)
        jobToken = nil
        lastEventID = try c.decodeIfPresent(String.self, forKey: .lastEventID)
        progress = try c.decode(Double.self, forKey: .progress)
        lastError = try c.decodeIfPresent(String.self, forKey: .lastError)
        retryable = try c.decodeIfPresent(Bool.self, forKey: .retryable)
        imagePath = try c.decode(String.self, forKey: .imagePath)
        imageSize = try c.decode(Int.self, forKey: .imageSize)
        width = try c.decode(Int.self, forKey: .width)
        height = try c.decode(Int.self, forKey: .height)
        thumbnailPath = try c.decodeIfPresent(String.self, forKey: .thumbnailPath)
        recovered = try c.decode(Bool.self, forKey: .recovered)
        discardedAt = try c.decodeIfPresent(Date.self, forKey: .discardedAt)
        cleanupPending = try c.decodeIfPresent(Bool.self, forKey: .cleanupPending) ?? false
        quality = try c.decodeIfPresent(ScanQuality.self, forKey: .quality)
        barcodes = try c.decodeIfPresent([ScanBarcode].self, forKey: .barcodes) ?? []
    }
}
