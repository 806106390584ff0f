import Foundation

public enum JobStatus: String, Sendable {
    case queued, processing, completed, failed, canceled
    var isFinished: Bool { self == .completed || self == .failed || self == .canceled }
}

/// A job's event as the job produced it; how it is written on a stream depends on that stream's faults.
enum LogicalEvent: Sendable {
    case progress(status: JobStatus, progress: Double, processed: Int, total: Int, message: String?, timestamp: String)
    /// The recognised book at this position of the job's list.
    case result(bookIndex: Int)
    case statusResult(status: JobStatus, message: String)
    /// Informational (docs/protocol.md §2): enrichment of this book fell back to another source.
    case enrichmentDegraded(bookIndex: Int)
    case completed(timestamp: String)
    case failed(status: JobStatus, code: String, message: String, retryable: Bool)

    var isTerminal: Bool {
        switch self {
        case .completed, .failed: true
        default: false
        }
    }
}

struct JobEvent: Sendable {
    /// 1, 2, 3 ... in the order the job produced them: the SSE `id:`.
    let id: Int
    let event: LogicalEvent
}

/// Stream faults that, once seen by a job's stream, shape everything later written about that job.
enum StickyFault: Sendable, Hashable {
    case resultsKey, completeAlias, stripped, progress100, badISBN, wrongTypes
}

/// One book of a job as the server sends it.
struct JobBook: Sendable {
    /// The book's JSON (docs/protocol.md §3) before any stream fault reshapes it.
    let json: JSONValue
    let isbn13: String?
    /// The ISBN as written in `json` (ISBN-10 for some of the hash recognizer's books).
    let sentISBN: String?
    let title: String
    let confidence: Double
    /// Alternates the `result` event's shape (a bare book or a one-book list) between the hash recognizer's
    /// books; 0 (a bare book) for a real recognizer's.
    let variant: Int
    /// The hash recognizer's unsure books come with an informational `enrichment_degraded` event.
    let sendsDegradedEvent: Bool

    init(_ book: RecognisedBook) {
        json = book.json()
        isbn13 = book.book.isbn13
        sentISBN = book.sentISBN
        title = book.book.title
        confidence = book.confidence
        variant = book.catalogIndex
        sendsDegradedEvent = book.confidence < 0.7
    }

    init(_ book: FoundBook) {
        json = book.json
        isbn13 = book.isbn.flatMap { ISBN.isbn13($0.filter { $0 != "-" && $0 != " " }) }
        sentISBN = book.isbn
        title = book.title
        confidence = book.confidence
        variant = 0
        sendsDegradedEvent = false
    }
}

struct Job: Sendable {
    let id: String
    let token: String
    let idempotencyKey: String
    let deviceID: String
    /// Empty until the recognizer has answered (at once for the hash recognizer).
    var books: [JobBook]
    var unmatched: [UnmatchedSpine] = []
    let createdAt: Date
    var updatedAt: Date
    var status: JobStatus = .queued
    var progress: Double = 0
    var processed = 0
    var events: [JobEvent] = []
    var cleaned = false
    var sticky: Set<StickyFault> = []
    /// Set by the `failed` / `failed-retryable` stream faults: the next timeline step fails the job instead.
    var pendingFailure: (code: String, message: String, retryable: Bool)?
    var timeline: Task<Void, Never>?
    /// When the job finished, on the state's clock.
    var finishedAt: Duration?
}

/// What a stream needs to render a job's events.
struct JobSnapshot: Sendable {
    let id: String
    let token: String
    let status: JobStatus
    let progress: Double
    let processed: Int
    let books: [JobBook]
    let unmatched: [UnmatchedSpine]
    let sticky: Set<StickyFault>
    let events: [JobEvent]
    let cleaned: Bool
    let createdAt: Date
    let updatedAt: Date
}

/// Counters for `GET /_stats`.
struct Stats: Sendable {
    var jobsCreated = 0
    var uploads = 0
    var uploadsByIdempotencyKey: [String: Int] = [:]
    var streamsOpened = 0
    var resumes = 0
    var statusPolls = 0
    var resultsFetches = 0
    var cleanups: [String] = []
    var cleanupsNotFound: [String] = []
    var cancels = 0
    var faultsApplied: [String] = []
    var catalogLookups: [String: Int] = [:]
    var catalogSearches: [String] = []
    var recognitionsFailed = 0
    var jobsCompleted = 0
    var jobsForgotten = 0

    /// How many entries a list keeps, and how long each may be, when the state forgets finished jobs (any client
    /// can put any string in a list: a cleanup of a job id that does not exist, say).
    static let boundedListLength = 20
    static let boundedEntryLength = 100

    static func record(_ entry: String, in list: inout [String], bounded: Bool) {
        guard bounded else {
            list.append(entry)
            return
        }
        list.append(String(entry.prefix(boundedEntryLength)))
        if list.count > boundedListLength { list.removeFirst(list.count - boundedListLength) }
    }
}

/// All mutable server state: jobs, the idempotency index, the fault queue and the counters.
public actor ReferenceState {
    let configuration: ReferenceConfiguration
    let recognizer: any PhotoRecognizing
    /// Measures `configuration.recognitionTimeout` and `forgetFinishedJobsAfter`; tests pass a clock they advance.
    let clock: any Clock<Duration>
    /// Time on `clock` since the state was made.
    private let elapsed: @Sendable () -> Duration
    /// A sleep on `clock` until a duration from now (now being when this is called, not when the sleep is awaited).
    private let sleeper: @Sendable (Duration) -> @Sendable () async throws -> Void
    private var jobs: [String: Job] = [:]
    private var jobByKey: [String: String] = [:]
    private var faultQueue: [Fault] = []
    private var stats = Stats()
    private var nextJobNumber = 1
    /// Jobs holding their photo (`maxWaitingPhotos`): from their upload until they finish or are cleaned up.
    private var photosHeld: Set<String> = []
    /// Uploads reading their body with a place reserved (`reserve(forKey:)`), by reservation.
    private var receiving: Set<Int> = []
    private var nextReservation = 0
    /// Event streams open now, by job id (`maxStreamsPerJob`).
    private var openStreams: [String: Int] = [:]
    /// Whether jobs are forgotten and the stats lists bounded (`forgetFinishedJobsAfter`).
    private var bounded: Bool { configuration.forgetFinishedJobsAfter != nil }

    public init(
        configuration: ReferenceConfiguration, recognizer: any PhotoRecognizing = HashRecognizer(),
        clock: any Clock<Duration> = ContinuousClock()
    ) {
        self.configuration = configuration
        self.recognizer = recognizer
        self.clock = clock
        self.elapsed = Self.stopwatch(clock)
        self.sleeper = Self.sleeper(clock)
    }

    private static func stopwatch<C: Clock>(_ clock: C) -> @Sendable () -> Duration where C.Duration == Duration {
        let start = clock.now
        return { start.duration(to: clock.now) }
    }

    // MARK: Faults

    /// The faults for one request of `kind`: every run-level fault of that kind, plus the first queued one.
    func takeFaults(_ kind: RequestKind) -> [FaultAction] {
        var faults = configuration.faults.filter { $0.kind == kind }
        if let i = faultQueue.firstIndex(where: { $0.kind == kind }) {
            faults.append(faultQueue.remove(at: i))
        }
        for fault in faults { Stats.record(fault.spelling, in: &stats.faultsApplied, bounded: bounded) }
        return faults.map(\.action)
    }

    func enqueue(_ faults: [Fault]) -> Int {
        faultQueue += faults
        return faultQueue.count
    }

    var pendingFaults: [String] { faultQueue.map(\.spelling) }

    // MARK: Jobs

    func countUpload(idempotencyKey: String?) {
        stats.uploads += 1
        guard let key = idempotencyKey else { return }
        // Bounded, only the keys of jobs still known are counted: any client may send any key, authorized or not.
        if bounded && jobByKey[key] == nil { return }
        stats.uploadsByIdempotencyKey[key, default: 0] += 1
    }

    /// A place for one upload's photo from before its body is read until it makes a job or fails, so that uploads
    /// read side by side cannot hold more photos in memory than `maxWaitingPhotos` either.
    struct PhotoReservation: Sendable {
        /// 0: nothing was reserved (no limit, or the key already had its job).
        let id: Int
        /// Returns when `uploadDeadline` has passed since the reservation (nil: no deadline).
        var deadline: (@Sendable () async throws -> Void)?
    }

    /// Reserves a place for an upload of `key`, or nil when every place is taken by a photo waiting to be read
    /// or being received: a known key always gets one (it gets its job back), as does every upload when there
    /// is no limit.
    func reserve(forKey key: String) -> PhotoReservation? {
        forgetExpiredJobs()
        // Counted from when the place is taken, before the body is read, not from when the reading starts.
        let deadline = configuration.uploadDeadline.map(sleeper)
        guard configuration.maxWaitingPhotos != nil, jobByKey[key] == nil else {
            return PhotoReservation(id: 0, deadline: deadline)
        }
        guard hasRoom() else { return nil }
        nextReservation += 1
        receiving.insert(nextReservation)
        return PhotoReservation(id: nextReservation, deadline: deadline)
    }

    private static func sleeper<C: Clock>(_ clock: C) -> @Sendable (Duration) -> @Sendable () async throws -> Void
    where C.Duration == Duration {
        { duration in
            let end = clock.now.advanced(by: duration)
            return { try await clock.sleep(until: end, tolerance: nil) }
        }
    }

    /// Gives back a place the upload did not turn into a job (a bad body, a dropped connection); a place that
    /// became a job was handed over already.
    func release(_ reservation: PhotoReservation) {
        receiving.remove(reservation.id)
    }

    /// Whether one more photo fits beside those waiting, being read or being received.
    private func hasRoom() -> Bool {
        guard let limit = configuration.maxWaitingPhotos else { return true }
        return photosHeld.count + receiving.count < limit
    }

    /// The job of this idempotency key, created (and started) if it is new; nil when it is new and there is no
    /// room for it: its reservation holds the place, or, without one, a place must be free now.
    func job(forKey key: String, deviceID: String, image: [UInt8], reservation: PhotoReservation) -> (
        JobSnapshot, created: Bool
    )? {
        if let id = jobByKey[key], let job = jobs[id] {
            release(reservation)
            return (snapshot(job), false)
        }
        let reserved = receiving.remove(reservation.id) != nil
        guard reserved || hasRoom() else { return nil }
        let number = nextJobNumber
        nextJobNumber += 1
        let id = String(format: "job_%06d_%08x", number, UInt32(truncatingIfNeeded: fnv1a64(Array(key.utf8))))
        let token = "jt_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        let immediate = recognizer.immediateRecognition(of: image)?.map(JobBook.init)
        var job = Job(
            id: id, token: token, idempotencyKey: key, deviceID: deviceID, books: immediate ?? [], createdAt: Date(),
            updatedAt: Date())
        jobByKey[key] = id
        photosHeld.insert(id)
        if bounded { stats.uploadsByIdempotencyKey[key] = 1 }
        stats.jobsCreated += 1
        if let immediate {
            job.timeline = startTimeline(id: id, books: immediate)
        } else {
            job.timeline = startRecognition(id: id, photo: image)
        }
        jobs[id] = job
        append(
            id,
            .progress(
                status: .queued, progress: 0, processed: 0, total: job.books.count, message: nil,
                timestamp: isoTimestamp()))
        return (snapshot(jobs[id]!), true)
    }

    func snapshot(_ id: String) -> JobSnapshot? { jobs[id].map(snapshot) }

    private func snapshot(_ job: Job) -> JobSnapshot {
        JobSnapshot(
            id: job.id, token: job.token, status: job.status, progress: job.progress, processed: job.processed,
            books: job.books,
            unmatched: job.unmatched, sticky: job.sticky, events: job.events, cleaned: job.cleaned,
            createdAt: job.createdAt, updatedAt: job.updatedAt)
    }

    /// The rest of the job's life after the first progress event, spread evenly over the recognition delay.
    private enum Step: Sendable {
        case progress(Double, processed: Int, message: String)
        case result(Int)
        case degraded(Int)
        case statusResult(String)
        case complete
    }

    private func startTimeline(id: String, books: [JobBook]) -> Task<Void, Never> {
        var steps: [Step] = [
            .progress(0.1, processed: 0, message: "Detecting book spines"),
            .progress(0.3, processed: 0, message: "Reading spines"),
        ]
        for (i, book) in books.enumerated() {
            steps.append(.result(i))
            // Books the recogniser is unsure of sometimes come with an informational event clients must ignore.
            if book.sendsDegradedEvent { steps.append(.degraded(i)) }
            steps.append(
                .progress(
                    round2(0.3 + 0.6 * Double(i + 1) / Double(books.count)), processed: i + 1,
                    message: "Recognised \(book.title)"))
        }
        steps.append(.statusResult("Enrichment complete"))
        steps.append(.complete)
        let total = Double(configuration.recognitionDelayMs) * configuration.timeScale
        let stepDelay = Duration.milliseconds(Int((total / Double(steps.count)).rounded()))
        return Task { [steps] in
            for step in steps {
                do { try await Task.sleep(for: stepDelay) } catch { return }
                if !self.advance(id, step) { return }
            }
        }
    }

    /// Applies one timeline step; false when the job is over (finished, failed, cancelled or reset).
    private func advance(_ id: String, _ step: Step) -> Bool {
        guard let job = jobs[id], !job.status.isFinished else { return false }
        if let failure = job.pendingFailure {
            finish(
                id, .failed(status: .failed, code: failure.code, message: failure.message, retryable: failure.retryable)
            )
            return false
        }
        let total = job.books.count
        switch step {
        case .progress(let p, let processed, let message):
            append(
                id,
                .progress(
                    status: .processing, progress: p, processed: processed, total: total, message: message,
                    timestamp: isoTimestamp()))
        case .result(let i):
            append(id, .result(bookIndex: i))
        case .degraded(let i):
            append(id, .enrichmentDegraded(bookIndex: i))
        case .statusResult(let message):
            append(id, .statusResult(status: .processing, message: message))
        case .complete:
            finish(id, .completed(timestamp: isoTimestamp()))
            return false
        }
        return true
    }

    // MARK: A recognizer's job

    /// Runs the recognizer on the photo as the job's task: its progress becomes `progress` events, its books
    /// `result` events, then `completed`. A failure, a crash of the step or `recognitionTimeout` passing fails the
    /// job (retryable unless the recognizer said otherwise); the server carries on with other jobs.
    private func startRecognition(id: String, photo: [UInt8]) -> Task<Void, Never> {
        let recognizer = self.recognizer
        let timeout = configuration.recognitionTimeout
        let clock = self.clock
        return Task {
            let outcome = await RecognitionRace.run(timeout: timeout, clock: clock) {
                try await recognizer.recognize(photo: photo) { fraction, stage in
                    await self.recognitionProgress(id, fraction: fraction, stage: stage)
                }
            }
            self.recognitionFinished(id, outcome)
        }
    }

    private func recognitionProgress(_ id: String, fraction: Double, stage: String) {
        guard let job = jobs[id], !job.status.isFinished else { return }
        // 0.05–0.9 of the job: the books and the terminal event make up the rest.
        let progress = round2(0.05 + 0.85 * min(max(fraction, 0), 1))
        append(
            id,
            .progress(
                status: .processing, progress: max(progress, job.progress), processed: 0, total: 0, message: stage,
                timestamp: isoTimestamp()))
    }

    private func recognitionFinished(_ id: String, _ outcome: RecognitionOutcome) {
        guard let job = jobs[id], !job.status.isFinished, !job.cleaned else { return }
        if let failure = job.pendingFailure {
            finish(
                id, .failed(status: .failed, code: failure.code, message: failure.message, retryable: failure.retryable)
            )
            return
        }
        switch outcome {
        case .failed(let failure):
            stats.recognitionsFailed += 1
            finish(
                id, .failed(status: .failed, code: failure.code, message: failure.message, retryable: failure.retryable)
            )
        case .recognized(let recognition):
            let books = recognition.books.map(JobBook.init)
            jobs[id]?.books = books
            jobs[id]?.unmatched = recognition.unmatched
            for (i, book) in books.enumerated() {
                append(id, .result(bookIndex: i))
                append(
                    id,
                    .progress(
                        status: .processing, progress: round2(0.9 + 0.1 * Double(i + 1) / Double(books.count + 1)),
                        processed: i + 1,
                        total: books.count, message: "Recognised \(book.title)", timestamp: isoTimestamp()))
            }
            finish(id, .completed(timestamp: isoTimestamp()))
        }
    }

    private func append(_ id: String, _ event: LogicalEvent) {
        guard var job = jobs[id] else { return }
        job.events.append(JobEvent(id: job.events.count + 1, event: event))
        job.updatedAt = Date()
        if case .progress(let status, let progress, let processed, _, _, _) = event {
            job.status = status
            job.progress = progress
            job.processed = processed
        }
        jobs[id] = job
    }

    private func finish(_ id: String, _ terminal: LogicalEvent) {
        append(id, terminal)
        guard var job = jobs[id] else { return }
        switch terminal {
        case .completed:
            job.status = .completed
            job.progress = 1
            job.processed = job.books.count
            stats.jobsCompleted += 1
        case .failed(let status, _, _, _):
            job.status = status
        default: break
        }
        job.timeline?.cancel()
        job.timeline = nil
        job.finishedAt = elapsed()
        jobs[id] = job
        photosHeld.remove(id)
    }

    func addSticky(_ id: String, _ faults: Set<StickyFault>) {
        jobs[id]?.sticky.formUnion(faults)
    }

    func scheduleFailure(_ id: String, retryable: Bool) {
        guard let job = jobs[id], !job.status.isFinished else { return }
        jobs[id]?.pendingFailure =
            retryable
            ? (code: "PROVIDER_TIMEOUT", message: "The recognition provider timed out", retryable: true)
            : (code: "PROVIDER_ERROR", message: "The recognition provider rejected the image", retryable: false)
    }

    enum CancelOutcome {
        case notFound
        case alreadyFinished(JobStatus)
        case canceled
    }

    func cancel(_ id: String) -> CancelOutcome {
        guard let job = jobs[id], !job.cleaned else { return .notFound }
        if job.status.isFinished { return .alreadyFinished(job.status) }
        stats.cancels += 1
        finish(
            id,
            .failed(
                status: .canceled, code: "CANCELED", message: "The job was cancelled by the client", retryable: false))
        return .canceled
    }

    enum CleanupOutcome { case cleaned, notFound }

    func cleanup(_ id: String) -> CleanupOutcome {
        guard let job = jobs[id], !job.cleaned else {
            Stats.record(id, in: &stats.cleanupsNotFound, bounded: bounded)
            return .notFound
        }
        Stats.record(id, in: &stats.cleanups, bounded: bounded)
        if bounded {
            forget(id)
        } else {
            jobs[id]?.cleaned = true
            job.timeline?.cancel()
            photosHeld.remove(id)
        }
        return .cleaned
    }

    /// Drops the job and its idempotency key: a later request for it is answered as for a job that never was.
    private func forget(_ id: String) {
        guard let job = jobs.removeValue(forKey: id) else { return }
        job.timeline?.cancel()
        photosHeld.remove(id)
        if jobByKey[job.idempotencyKey] == id {
            jobByKey[job.idempotencyKey] = nil
            stats.uploadsByIdempotencyKey[job.idempotencyKey] = nil
        }
        stats.jobsForgotten += 1
    }

    /// Forgets the jobs that finished `forgetFinishedJobsAfter` ago or longer and were never cleaned up.
    private func forgetExpiredJobs() {
        guard let retention = configuration.forgetFinishedJobsAfter else { return }
        let now = elapsed()
        for job in jobs.values {
            if let finishedAt = job.finishedAt, now - finishedAt >= retention { forget(job.id) }
        }
    }

    /// Takes one of the job's stream places; false when `maxStreamsPerJob` streams of it are open already.
    func openStream(_ id: String) -> Bool {
        if let limit = configuration.maxStreamsPerJob, openStreams[id, default: 0] >= limit { return false }
        openStreams[id, default: 0] += 1
        return true
    }

    func closeStream(_ id: String) {
        guard let open = openStreams[id] else { return }
        openStreams[id] = open > 1 ? open - 1 : nil
    }

    func countStream(resume: Bool) {
        stats.streamsOpened += 1
        if resume { stats.resumes += 1 }
    }

    func countStatusPoll() { stats.statusPolls += 1 }
    func countResultsFetch() { stats.resultsFetches += 1 }
    func countCatalogLookup(_ isbn: String) { stats.catalogLookups[isbn, default: 0] += 1 }
    func countCatalogSearch(_ query: String) {
        Stats.record(query, in: &stats.catalogSearches, bounded: bounded)
    }

    /// Clears jobs, counters and queued faults (run-level faults stay).
    func reset() {
        for job in jobs.values { job.timeline?.cancel() }
        jobs = [:]
        jobByKey = [:]
        photosHeld = []
        receiving = []
        openStreams = [:]
        faultQueue = []
        stats = Stats()
    }

    func statsJSON() -> JSONValue {
        forgetExpiredJobs()
        return [
            "jobsCreated": .int(stats.jobsCreated),
            "jobsCompleted": .int(stats.jobsCompleted),
            "jobsForgotten": .int(stats.jobsForgotten),
            "photosHeld": .int(photosHeld.count),
            "photosReceiving": .int(receiving.count),
            "uploads": .int(stats.uploads),
            "uploadsByIdempotencyKey": .object(stats.uploadsByIdempotencyKey.mapValues { .int($0) }),
            "jobByIdempotencyKey": .object(jobByKey.mapValues { .string($0) }),
            "streamsOpened": .int(stats.streamsOpened),
            "streamsOpen": .int(openStreams.values.reduce(0, +)),
            "resumes": .int(stats.resumes),
            "statusPolls": .int(stats.statusPolls),
            "resultsFetches": .int(stats.resultsFetches),
            "cleanups": .array(stats.cleanups.map { .string($0) }),
            "cleanupsNotFound": .array(stats.cleanupsNotFound.map { .string($0) }),
            "cancels": .int(stats.cancels),
            "booksByJob": .object(
                jobs.mapValues { job in .array(job.books.compactMap { $0.isbn13.map { .string($0) } }) }),
            "jobStatus": .object(jobs.mapValues { .string($0.status.rawValue) }),
            "faultsApplied": .array(stats.faultsApplied.map { .string($0) }),
            "faultsPending": .array(faultQueue.map { .string($0.spelling) }),
            "catalogLookups": .object(stats.catalogLookups.mapValues { .int($0) }),
            "catalogSearches": .array(stats.catalogSearches.map { .string($0) }),
            "recognitionsFailed": .int(stats.recognitionsFailed),
            "unmatchedByJob": .object(jobs.mapValues { job in .array(job.unmatched.map { .string($0.text) }) }),
        ]
    }
}
