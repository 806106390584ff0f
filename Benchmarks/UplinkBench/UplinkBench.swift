// UplinkBench: what the backend link costs on top of the server, on loopback.
//
//  1. press → books committed: a scan is queued, the uplink uploads it (real libcurl), follows its
//     stream from the real reference backend and commits its books; the server's configured
//     recognition delay is subtracted, leaving the client's own overhead (plus loopback HTTP and
//     the server's own handling, which this cannot separate). Goal: < 20 ms median.
//  2. drain: N scans queued while the backend is down; the backend starts; scans/min until all
//     are done (bounded by concurrency × the server's delay: both are printed).
//  3. memory: this process's RSS while N scans are queued and `concurrency` streams are open.
//
// `UplinkBench spines` measures the landed books' spines instead (SpineBench.swift).
//
// Usage: swift run -c release UplinkBench [--scans 50] [--drain 500] [--delay-ms 100] [--fixture F] [--quality 85]
// (a higher --quality makes the larger photos a finely textured shelf gives at q85).
import Foundation
import HTTPEngine
import Imaging
import Logging
import Store
import SwiftWingCore
import Talaria
import Uplink

struct BenchError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

func option(_ name: String, _ fallback: Int) -> Int {
    guard let index = CommandLine.arguments.firstIndex(of: name), index + 1 < CommandLine.arguments.count else {
        return fallback
    }
    return Int(CommandLine.arguments[index + 1]) ?? fallback
}

func stringOption(_ name: String) -> String? {
    guard let index = CommandLine.arguments.firstIndex(of: name), index + 1 < CommandLine.arguments.count else {
        return nil
    }
    return CommandLine.arguments[index + 1]
}

let pressCount = option("--scans", 50)
let drainCount = option("--drain", 500)
let delayMs = option("--delay-ms", 100)
let jpegQuality = option("--quality", 85)

func fixturePath() -> String {
    stringOption("--fixture")
        ?? (ShippedFiles.folder("shelves") ?? ShippedFiles.sourceTree + "/Fixtures/shelves") + "/two_shelves.jpg"
}

/// A size line of /proc/self/status (`VmRSS`, `VmHWM`) in MB.
func statusMegabytes(_ field: String) -> Double {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
        let line = status.split(separator: "\n").first(where: { $0.hasPrefix(field + ":") })
    else { return -1 }
    let kilobytes = Double(line.split(separator: " ").dropFirst().first ?? "0") ?? 0
    return kilobytes / 1024
}

func residentMegabytes() -> Double { statusMegabytes("VmRSS") }

/// The peak RSS since the process started or since `resetPeakResident()`.
func peakResidentMegabytes() -> Double { statusMegabytes("VmHWM") }

/// Sets VmHWM to the current RSS, so the next peak is that of what follows.
func resetPeakResident() {
    try? "5".write(toFile: "/proc/self/clear_refs", atomically: false, encoding: .utf8)
}

func freePort() -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    _ = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
    }
    return Int(UInt16(bigEndian: address.sin_port))
}

/// The reference backend as a child process.
final class Backend: @unchecked Sendable {
    let port: Int
    var process: Process?
    let extra: [String]

    init(port: Int, extra: [String]) {
        self.port = port
        self.extra = extra
    }

    func start() throws {
        let binary = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(
            "talaria-reference")
        let process = Process()
        process.executableURL = binary
        process.arguments = ["--port", "\(port)", "--retry-ms", "1000", "--log-level", "warning"] + extra
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        self.process = process
        // Its one line on stdout says it listens.
        var line = Data()
        while !String(decoding: line, as: UTF8.self).contains("\n") {
            let chunk = out.fileHandleForReading.availableData
            if chunk.isEmpty { throw BenchError("talaria-reference exited before listening") }
            line.append(chunk)
        }
    }

    func stop() {
        guard let process else { return }
        process.terminate()
        process.waitUntilExit()
        self.process = nil
    }
}

func percentile(_ sorted: [Double], _ p: Double) -> Double {
    sorted.isEmpty ? .nan : sorted[min(sorted.count - 1, Int((Double(sorted.count - 1) * p).rounded()))]
}

func format(_ value: Double) -> String { String(format: "%.1f", value) }

@main
struct UplinkBench {
    static func main() async throws {
        if CommandLine.arguments.dropFirst().first == "spines" {
            try SpineBench.run()
            return
        }
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = .error
            return handler
        }
        // What the daemon uploads: the shelf photo as a 1920x1080 frame, JPEG q85 by default (as a press makes it).
        let photo = try JPEGDecoder().decode(contentsOf: fixturePath(), minimumWidth: 1920, minimumHeight: 1080)
        let frame = try YUV420Scaler().resized(photo, width: 1920, height: 1080)
        let jpeg = try JPEGEncoder(quality: jpegQuality).encode(frame)
        print(
            "UplinkBench: a 1920x1080 q\(jpegQuality) JPEG of the shelf photo, \(jpeg.count) bytes, server recognition delay \(delayMs) ms, \(ProcessInfo.processInfo.activeProcessorCount) CPUs"
        )
        let port = freePort()
        let backend = Backend(port: port, extra: ["--recognition-delay-ms", "\(delayMs)"])
        try backend.start()
        defer { backend.stop() }

        let directory = NSTemporaryDirectory() + "swiftwing-uplinkbench-" + UUID().uuidString
        let state = StateDirectory(path: directory)
        try state.create()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let database = try AppDatabase.open(state)
        let spool = SpoolDirectory(state)
        let engine = CurlEngine()
        defer { engine.shutdown() }

        final class Landed: @unchecked Sendable {
            let lock = NSCondition()
            var times: [UUID: ContinuousClock.Instant] = [:]
            func note(_ id: UUID) {
                lock.lock()
                times[id] = .now
                lock.broadcast()
                lock.unlock()
            }
            func time(of id: UUID) -> ContinuousClock.Instant? {
                lock.lock()
                defer { lock.unlock() }
                return times[id]
            }
            /// Polls (never blocks a pool thread): the landing time was taken by the event itself.
            func wait(for id: UUID, timeout: Double) async -> ContinuousClock.Instant? {
                let deadline = ContinuousClock.now + .seconds(timeout)
                while ContinuousClock.now < deadline {
                    if let time = time(of: id) { return time }
                    try? await Task.sleep(for: .microseconds(200))
                }
                return nil
            }
            var count: Int {
                lock.lock()
                defer { lock.unlock() }
                return times.count
            }
        }
        let landed = Landed()
        var settings = UplinkSettings(
            endpoints: TalariaEndpoints(base: URL(string: "http://127.0.0.1:\(port)/")!), deviceID: UUID(),
            apiKey: APIKeySource(path: nil), version: "bench")
        settings.probeInterval = 0.2
        settings.retry = RetryPolicy(backoff: [0.1, 0.2, 0.4], roundInterval: 2)
        let uplink = UplinkService(
            settings: settings, transport: engine, database: database, spool: spool, logger: Logger(label: "bench"),
            events: { event in if case .booksLanded(let id, _) = event { landed.note(id) } })
        let service = Task { try await uplink.run() }

        func queueScan() throws -> UUID {
            let id = UUID()
            let image = try spool.write(jpeg: jpeg, for: id)
            try database.queue.enqueue(
                NewScan(
                    id: id, pressedAt: .now(), pressedWallAt: Date(), frameAt: nil, image: image, width: 1920,
                    height: 1080))
            return id
        }

        // 1. press → books committed, one scan at a time, alternating with the floor: the same
        //    upload and stream on the same engine and server with nothing else (no queue, no parser,
        //    no commit), so the difference is the uplink's own cost.
        func milliseconds(_ duration: Duration) -> Double {
            Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
        }
        let endpoints = TalariaEndpoints(base: URL(string: "http://127.0.0.1:\(port)/")!)
        func floorExchange() async throws -> Double {
            let start = ContinuousClock.now
            let upload = ScanUploadRequest(
                endpoints: endpoints, idempotencyKey: UUID().uuidString.lowercased(), deviceID: UUID(), apiKey: nil,
                version: "bench")
            let response = try await engine.send(
                HTTPRequest(
                    method: .post, url: upload.url,
                    headers: upload.headers.map { HTTPHeader(name: $0.name, value: $0.value) },
                    body: upload.body(jpeg: jpeg)))
            let accepted = try UploadAccepted.decode(response.body, base: endpoints.base)
            guard let streamURL = accepted.streamURL else { throw BenchError("no stream URL") }
            var headers = [HTTPHeader(name: "Accept", value: "text/event-stream")]
            if let token = accepted.streamToken {
                headers.append(HTTPHeader(name: "Authorization", value: "Bearer \(token)"))
            }
            var seen: [UInt8] = []
            reading: for try await part in engine.stream(
                HTTPRequest(method: .get, url: streamURL, headers: headers, timeouts: .eventStream))
            {
                if case .body(let bytes) = part {
                    seen += bytes
                    if String(decoding: seen, as: UTF8.self).contains("event: completed") { break reading }
                }
            }
            return milliseconds(ContinuousClock.now - start)
        }
        var overheads: [Double] = []
        var floors: [Double] = []
        for index in 0..<(pressCount + 3) {
            let floor = try await floorExchange()
            let start = ContinuousClock.now
            let id = try queueScan()
            uplink.wake()
            guard let end = await landed.wait(for: id, timeout: 30) else {
                throw BenchError("scan \(index) did not land in 30 s")
            }
            if index >= 3 {  // 3 warm-up rounds
                overheads.append(milliseconds(end - start) - Double(delayMs))
                floors.append(floor - Double(delayMs))
            }
        }
        let differences = zip(overheads, floors).map { $0 - $1 }.sorted()
        overheads.sort()
        floors.sort()
        print(
            "press → books committed minus the server's \(delayMs) ms (n=\(overheads.count)): median \(format(percentile(overheads, 0.5))) ms, p90 \(format(percentile(overheads, 0.9))) ms, min \(format(overheads.first ?? .nan)) ms, max \(format(overheads.last ?? .nan)) ms"
        )
        print(
            "floor, the same upload + stream with nothing else, minus \(delayMs) ms: median \(format(percentile(floors, 0.5))) ms, p90 \(format(percentile(floors, 0.9))) ms, min \(format(floors.first ?? .nan)) ms"
        )
        print(
            "the uplink's own cost (pairwise difference): median \(format(percentile(differences, 0.5))) ms, p90 \(format(percentile(differences, 0.9))) ms; ratio of medians \(String(format: "%.2f", percentile(overheads, 0.5) / percentile(floors, 0.5)))"
        )

        // 2. drain after an offline spell.
        backend.stop()
        var ids: [UUID] = []
        for _ in 0..<drainCount { ids.append(try queueScan()) }
        let queuedRSS = residentMegabytes()
        let before = landed.count
        try backend.start()
        resetPeakResident()
        let drainStart = ContinuousClock.now
        uplink.wake()
        while landed.count - before < drainCount {
            try await Task.sleep(for: .milliseconds(20))
            if ContinuousClock.now - drainStart > .seconds(600) {
                throw BenchError("the drain did not finish in 10 min")
            }
        }
        let drainSeconds =
            Double((ContinuousClock.now - drainStart).components.seconds)
            + Double((ContinuousClock.now - drainStart).components.attoseconds) / 1e18
        let ceiling = Double(settings.concurrency) * 60_000 / Double(max(delayMs, 1))
        print(
            "drain of \(drainCount) scans queued offline: \(format(drainSeconds)) s from the backend's return (incl. noticing it) = \(format(Double(drainCount) / drainSeconds * 60)) scans/min; ceiling at concurrency \(settings.concurrency) and \(delayMs) ms/job: \(format(ceiling)) scans/min"
        )
        // Uploads in flight all through the drain: what each one holds shows in this peak.
        let drainPeak = peakResidentMegabytes()
        print("memory over the drain: peak RSS \(format(drainPeak)) MB, \(format(queuedRSS)) MB before it")

        // 3. memory: N queued, `concurrency` streams open (a slow backend keeps them open).
        backend.stop()
        let slow = Backend(port: port, extra: ["--recognition-delay-ms", "60000"])
        for _ in 0..<drainCount { ids.append(try queueScan()) }
        try slow.start()
        defer { slow.stop() }
        uplink.wake()
        try await Task.sleep(for: .seconds(3))
        let snapshot = uplink.snapshot
        print(
            "memory: RSS \(format(residentMegabytes())) MB with \(drainCount) queued and \(snapshot.jobsInFlight) streams open (\(format(queuedRSS)) MB with \(drainCount) queued offline)"
        )
        service.cancel()
        _ = await service.result
    }
}
