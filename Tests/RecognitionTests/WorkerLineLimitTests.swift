import Foundation
import Testing

@testable import Recognition

/// Issue 36, point 5: the OCR worker's output is read in lines of at most 16 MiB, with the deadline checked on
/// every turn of the read, so a worker that writes without end neither grows the service nor outlives its deadline.
@Suite struct WorkerLineLimitTests {
    private func worker(_ program: String) throws -> WorkerProcess {
        try WorkerProcess(executable: "/usr/bin/python3", arguments: ["-c", program])
    }

    @Test func aLineLongerThan16MiBEndsTheWorkerInsteadOfGrowingTheBuffer() throws {
        // 17 MiB, then the line end, then it waits: before the cap this came back as one 17 MiB line.
        let process = try worker(
            "import sys, time\nout = sys.stdout.buffer\nfor _ in range(17 * 16): out.write(b'x' * 65536)\n"
                + "out.write(b'\\n'); out.flush(); time.sleep(600)")
        defer { process.kill() }
        let clock = ManualWorkerClock()
        do {
            let line = try process.readLine(deadline: clock.now + 3600, clock: clock)
            Issue.record("a line of \(line.count) bytes was taken")
        } catch {
            guard case .ended(let detail) = error else {
                Issue.record("not ended: \(error)")
                return
            }
            #expect(detail.contains("longer than 16 MiB"), "\(detail)")
        }
    }

    @Test func aLineJustUnderTheCapIsRead() throws {
        let process = try worker(
            "import sys, time\nout = sys.stdout.buffer\nout.write(b'y' * (16 * 1024 * 1024 - 1) + b'\\n'); out.flush()\n"
                + "time.sleep(600)")
        defer { process.kill() }
        let clock = ManualWorkerClock()
        #expect(try process.readLine(deadline: clock.now + 3600, clock: clock).count == 16 * 1024 * 1024 - 1)
    }

    @Test func aWorkerThatNeverStopsWritingMeetsItsDeadline() throws {
        let process = try worker(
            "import sys\nout = sys.stdout.buffer\nwhile True: out.write(b'z' * 65536); out.flush()")
        defer { process.kill() }
        let clock = ManualWorkerClock()
        let deadline = clock.now + 10
        clock.advance(by: 11)
        #expect(throws: WorkerProcess.Failure.self) { try process.readLine(deadline: deadline, clock: clock) }
        do {
            _ = try process.readLine(deadline: deadline, clock: clock)
        } catch {
            guard case .deadlinePassed = error else {
                Issue.record("not the deadline: \(error)")
                return
            }
        }
    }
}
