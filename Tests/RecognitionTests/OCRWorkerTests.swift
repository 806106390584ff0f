import Foundation
import Recognition
import Testing

/// The repository's root, found from this file's path.
let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().path
let recognitionFixtures = "\(repositoryRoot)/Tests/RecognitionTests/Fixtures"

/// A supervisor over the fake worker (plain python3: the fake needs no packages).
func fakeWorker(
    _ arguments: [String] = [], clock: any WorkerClock = MonotonicWorkerClock(), readTimeout: Double = 60
) -> OCRWorkerSupervisor {
    OCRWorkerSupervisor(
        configuration: OCRWorkerConfiguration(
            python: "/usr/bin/python3", script: "\(recognitionFixtures)/fake_ocr_worker.py", workerArguments: arguments,
            startupTimeout: 30, readTimeout: readTimeout),
        clock: clock)
}

/// Runs `body` while advancing `clock` a second at a time, until `body` returns: a deadline passes without the
/// test waiting for it.
func advancing<T: Sendable>(
    _ clock: ManualWorkerClock, _ body: @escaping @Sendable () async throws -> T
) async throws -> T {
    let task = Task { try await body() }
    let ticker = Task {
        while !Task.isCancelled {
            clock.advance(by: 1)
            try? await Task.sleep(for: .milliseconds(5))
        }
    }
    defer { ticker.cancel() }
    return try await task.value
}

func workerError(_ body: () async throws -> Void) async -> OCRWorkerError? {
    do {
        try await body()
        return nil
    } catch let error as OCRWorkerError {
        return error
    } catch {
        Issue.record("not an OCRWorkerError: \(error)")
        return nil
    }
}

@Suite struct OCRWorkerSupervisorTests {
    @Test func readsThroughTheWorkerAndKeepsItWarm() async throws {
        let supervisor = fakeWorker()
        defer { supervisor.shutdown() }
        let first = try await supervisor.read(jpeg: Array("abc".utf8))
        let second = try await supervisor.read(jpeg: Array(repeating: 7, count: 300_000))
        #expect(first.lines.map(\.text) == ["3"])
        #expect(second.lines.map(\.text) == ["300000"])
        #expect(first.lines.first?.polygon.count == 4)
        #expect(supervisor.workerStarts == 1)
    }

    @Test func aCrashFailsThePhotoRetryablyAndTheNextPhotoRestartsTheWorker() async throws {
        let supervisor = fakeWorker()
        defer { supervisor.shutdown() }
        let error = await workerError { _ = try await supervisor.read(jpeg: Array("crash".utf8)) }
        guard case .crashed(let detail) = error else {
            Issue.record("expected a crash, got \(String(describing: error))")
            return
        }
        #expect(error?.isRetryable == true)
        #expect(detail.contains("exit status 3"))
        #expect(detail.contains("fake worker told to crash"))
        let after = try await supervisor.read(jpeg: Array("ok".utf8))
        #expect(after.lines.map(\.text) == ["2"])
        #expect(supervisor.workerStarts == 2)
    }

    @Test func aHungWorkerIsKilledAtTheDeadlineAndReplaced() async throws {
        let clock = ManualWorkerClock()
        let supervisor = fakeWorker(clock: clock, readTimeout: 30)
        defer { supervisor.shutdown() }
        try await supervisor.warmUp()
        let hungPID = try #require(supervisor.workerProcessID)
        let error = await workerError {
            _ = try await advancing(clock) { try await supervisor.read(jpeg: Array("hang".utf8)) }
        }
        #expect(error == .timedOut(seconds: 30))
        #expect(error?.isRetryable == true)
        // The hung process is gone (killed and reaped), not left behind.
        #expect(kill(hungPID, 0) == -1)
        let after = try await supervisor.read(jpeg: Array("ok".utf8))
        #expect(after.lines.map(\.text) == ["2"])
        #expect(supervisor.workerStarts == 2)
    }

    @Test func aWorkerThatNeverBecomesReadyFailsToStart() async throws {
        let clock = ManualWorkerClock()
        let supervisor = fakeWorker(["--no-ready"], clock: clock)
        defer { supervisor.shutdown() }
        let error = await workerError { _ = try await advancing(clock) { try await supervisor.read(jpeg: [1]) } }
        guard case .couldNotStart(let detail) = error else {
            Issue.record("expected couldNotStart, got \(String(describing: error))")
            return
        }
        #expect(detail.contains("did not load its models within 30.0 s"))
        #expect(error?.isRetryable == true)
    }

    @Test func answersOutsideTheProtocolAreReportedAndTheWorkerReplaced() async throws {
        let badStart = fakeWorker(["--bad-ready"])
        defer { badStart.shutdown() }
        let startError = await workerError { _ = try await badStart.read(jpeg: [1]) }
        guard case .protocolViolation = startError else {
            Issue.record("expected a protocol violation, got \(String(describing: startError))")
            return
        }
        let supervisor = fakeWorker()
        defer { supervisor.shutdown() }
        let error = await workerError { _ = try await supervisor.read(jpeg: Array("garbage".utf8)) }
        guard case .protocolViolation(let detail) = error else {
            Issue.record("expected a protocol violation, got \(String(describing: error))")
            return
        }
        #expect(detail.contains("{not json"))
        #expect(try await supervisor.read(jpeg: [1, 2]).lines.map(\.text) == ["2"])
        #expect(supervisor.workerStarts == 2)
    }

    @Test func aMissingInterpreterIsACouldNotStartThatNamesTheFix() async throws {
        let supervisor = OCRWorkerSupervisor(
            configuration: OCRWorkerConfiguration(python: "/nonexistent/bin/python3", script: "/nonexistent/w.py"))
        defer { supervisor.shutdown() }
        let error = await workerError { _ = try await supervisor.read(jpeg: [1]) }
        guard case .couldNotStart(let detail) = error else {
            Issue.record("expected couldNotStart, got \(String(describing: error))")
            return
        }
        #expect(detail.contains("/nonexistent/bin/python3"))
        #expect(detail.contains("scripts/ocr-venv.sh"))
    }

    @Test func photosQueuedAtShutdownFailRetryably() async throws {
        let supervisor = fakeWorker()
        supervisor.shutdown()
        let error = await workerError { _ = try await supervisor.read(jpeg: [1]) }
        #expect(error?.isRetryable == true)
    }
}

/// Text in capitals without accents: PP-OCRv6 reads "MUSCULACIÓN" with its accent, as the spine prints it.
func unaccentedCapitals(_ text: String) -> String {
    text.folding(options: [.diacriticInsensitive, .caseInsensitive], locale: nil).uppercased()
}

/// The real worker in its virtual environment (scripts/ocr-venv.sh makes `.ocr-venv` at the repository's root) on
/// one small photo, so the test takes seconds.
@Suite struct RealOCRWorkerTests {
    static func supervisor(_ arguments: [String] = []) throws -> OCRWorkerSupervisor {
        var configuration = try OCRWorkerConfiguration.locate(root: repositoryRoot)
        configuration.workerArguments = arguments
        return OCRWorkerSupervisor(configuration: configuration)
    }

    static func threeSpines() throws -> [UInt8] {
        try Array(Data(contentsOf: URL(fileURLWithPath: "\(recognitionFixtures)/three_spines.jpg")))
    }

    @Test func readsTheTitlesAndCallNumbersOfThreeSpines() async throws {
        let supervisor = try Self.supervisor()
        defer { supervisor.shutdown() }
        let jpeg = try Array(Data(contentsOf: URL(fileURLWithPath: "\(recognitionFixtures)/three_spines.jpg")))
        let photo = try await supervisor.read(jpeg: jpeg)
        #expect(photo.width == 250 && photo.height == 725)
        let text = unaccentedCapitals(photo.lines.map(\.text).joined(separator: " "))
        #expect(text.contains("MUSCULACION"))
        // Accented Latin letters survive (PP-OCRv4's alphabet lacked some; PP-OCRv6's has them): "GUÍA DE LA MUSCULACIÓN".
        #expect(photo.lines.contains { $0.text.uppercased().contains("MUSCULACIÓN") })
        // "…de Entrenamiento para Triatlón": the int8 PP-OCRv6 recognizer reads its last word "Triatión" at this size.
        #expect(text.contains("ENTRENAMIENTO PARA TRIAT"))
        #expect(text.contains("796.42"))
        // The spine titles run up the spine: read bottom to top, so each line's start is below its end.
        let title = try #require(photo.lines.first { unaccentedCapitals($0.text).contains("MUSCULACION") })
        #expect(title.polygon[0].y > title.polygon[1].y + 100)

        // Not an image: a clear error, and the same worker goes on.
        let error = await workerError { _ = try await supervisor.read(jpeg: Array("not a photo".utf8)) }
        guard case .unreadableImage(let detail) = error else {
            Issue.record("expected unreadableImage, got \(String(describing: error))")
            return
        }
        #expect(detail.contains("not an image"))
        #expect(error?.isRetryable == false)
        // A truncated JPEG: its header is there, its pixels are not.
        let truncated = await workerError { _ = try await supervisor.read(jpeg: Array(jpeg.prefix(600))) }
        #expect(truncated?.isRetryable == false)
        #expect(supervisor.workerStarts == 1)
    }
}

extension RealOCRWorkerTests {
    /// The worker's defaults (text found strip by strip, here three strips narrower than the photo's spines, so lines
    /// cross the strips' edges; crops padded less; the int8 recognition model) read what the whole photo and the
    /// shipped model read: the same titles and call numbers, each line once.
    @Test func readsTheSameSpinesInStripsWithTheInt8Model() async throws {
        let whole = try Self.supervisor(["--det-strips", "1", "--rec-model", "float", "--rec-min-width", "320"])
        defer { whole.shutdown() }
        let strips = try Self.supervisor(["--det-strips", "3", "--rec-model", "int8", "--rec-min-width", "96"])
        defer { strips.shutdown() }
        let jpeg = try Self.threeSpines()
        let reference = try await whole.read(jpeg: jpeg)
        let photo = try await strips.read(jpeg: jpeg)
        let text = unaccentedCapitals(photo.lines.map(\.text).joined(separator: " "))
        #expect(text.contains("MUSCULACION"))
        #expect(text.contains("ENTRENAMIENTO PARA TRIAT"))
        #expect(text.contains("796.42"))
        // A line joined across strips is one line, not its pieces twice.
        #expect(photo.lines.filter { unaccentedCapitals($0.text).contains("MUSCULACION") }.count == 1)
        #expect(abs(photo.lines.count - reference.lines.count) <= 2)
    }

    /// `--stage-memory` (benchmarks) adds each stage's peak resident memory and CPU seconds to the worker's reply.
    @Test func reportsEachStagesPeakMemoryWhenAsked() throws {
        let configuration = try OCRWorkerConfiguration.locate(root: repositoryRoot)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: configuration.python)
        process.arguments = [configuration.script, "--stage-memory"]
        let input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        let jpeg = try Self.threeSpines()
        let length = UInt32(jpeg.count)
        var frame = Data([UInt8(length >> 24), UInt8((length >> 16) & 0xff), UInt8((length >> 8) & 0xff)])
        frame.append(UInt8(length & 0xff))
        frame.append(contentsOf: jpeg)
        try input.fileHandleForWriting.write(contentsOf: frame)
        // The ready line and the reply, then the worker is stopped. Not by closing its input and reading to the end:
        // a process another test spawns meanwhile inherits this pipe's write end (Foundation's pipes are not
        // close-on-exec), so the end of input never comes and the test would wait for ever.
        var replies = Data()
        while replies.count(where: { $0 == UInt8(ascii: "\n") }) < 2 {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            replies.append(chunk)
        }
        // SIGKILL: the test process's children may inherit SIGTERM ignored. Not `waitUntilExit()`: once, with many
        // children spawned at once, Foundation never noticed this one's exit (a zombie nobody reaped), and the wait
        // held a thread of the cooperative pool for good, which stalled the whole unit stage. What this test checks
        // is in the replies; the exit is only waited for, a while.
        kill(process.processIdentifier, SIGKILL)
        for _ in 0..<300 where process.isRunning { usleep(100_000) }
        let lines = replies.split(separator: UInt8(ascii: "\n"))
        #expect(lines.count == 2)
        let reply = try #require(JSONSerialization.jsonObject(with: Data(lines[1])) as? [String: Any])
        let peaks = try #require(reply["peakMB"] as? [String: Double])
        let cpu = try #require(reply["cpuSeconds"] as? [String: Double])
        #expect(Set(peaks.keys) == ["decode", "detect", "recognize"])
        #expect(Set(cpu.keys) == ["decode", "detect", "recognize"])
        // The models alone take tens of megabytes: a peak below that was not read from the kernel.
        #expect(peaks.values.allSatisfy { $0 > 30 })
        #expect(cpu["recognize", default: 0] > 0)
    }
}

extension RealOCRWorkerTests {
    /// The worker run once on one photo, its input, output and errors all files (no pipes: a worker another test
    /// spawns meanwhile would inherit a pipe's end, and the end of input or output would never come). It exits when
    /// its input ends. Returns its lines on stdout and what it wrote on stderr.
    static func runOnce(_ arguments: [String], jpeg: [UInt8], in folder: URL) throws -> (lines: [Data], errors: String)
    {
        let configuration = try OCRWorkerConfiguration.locate(root: repositoryRoot)
        let name = UUID().uuidString
        let input = folder.appendingPathComponent("\(name).in")
        let output = folder.appendingPathComponent("\(name).out")
        let errors = folder.appendingPathComponent("\(name).err")
        let length = UInt32(jpeg.count)
        var frame = Data([UInt8(length >> 24), UInt8((length >> 16) & 0xff), UInt8((length >> 8) & 0xff)])
        frame.append(UInt8(length & 0xff))
        frame.append(contentsOf: jpeg)
        try frame.write(to: input)
        try Data().write(to: output)
        try Data().write(to: errors)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: configuration.python)
        process.arguments = [configuration.script] + arguments
        process.standardInput = try FileHandle(forReadingFrom: input)
        process.standardOutput = try FileHandle(forWritingTo: output)
        process.standardError = try FileHandle(forWritingTo: errors)
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        return (
            try Data(contentsOf: output).split(separator: UInt8(ascii: "\n")).map { Data($0) },
            String(decoding: try Data(contentsOf: errors), as: UTF8.self)
        )
    }

    /// An environment without the derived models (`--derived-models` an empty folder): the worker says on stderr
    /// that it falls back, names the shipped float model in its ready line, and reads what the float model reads.
    @Test func fallsBackToTheShippedFloatModelWhenTheInt8CopyIsMissing() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("ocr-fallback-\(UUID().uuidString)")
        let empty = folder.appendingPathComponent("derived")
        try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let jpeg = try Self.threeSpines()
        let fallback = try Self.runOnce(["--derived-models", empty.path], jpeg: jpeg, in: folder)
        let float = try Self.runOnce(["--derived-models", empty.path, "--rec-model", "float"], jpeg: jpeg, in: folder)

        #expect(fallback.errors.contains("no int8 recognition model at \(empty.path)/"))
        #expect(fallback.errors.contains("reading with the float model"))
        #expect(fallback.errors.contains("scripts/ocr-venv.sh"))
        #expect(!float.errors.contains("no int8 recognition model"))
        try #require(fallback.lines.count == 2 && float.lines.count == 2)
        let ready = try #require(JSONSerialization.jsonObject(with: fallback.lines[0]) as? [String: Any])
        let models = try #require(ready["models"] as? [String: String])
        #expect(models["recognize"]?.hasSuffix("/PP-OCRv6_rec_small.onnx") == true)
        #expect(models["recognize"]?.hasPrefix(empty.path) == false)

        func texts(_ reply: Data) throws -> [String] {
            let object = try #require(JSONSerialization.jsonObject(with: reply) as? [String: Any])
            let lines = try #require(object["lines"] as? [[String: Any]])
            return lines.compactMap { $0["text"] as? String }
        }
        let read = try texts(fallback.lines[1])
        #expect(read == (try texts(float.lines[1])))
        let text = unaccentedCapitals(read.joined(separator: " "))
        #expect(text.contains("MUSCULACION"))
        #expect(text.contains("ENTRENAMIENTO PARA TRIAT"))
    }
}
