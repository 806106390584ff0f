import SwiftWingCore

#if canImport(Glibc)
    import Glibc
#endif

/// One child process spoken to over its standard input and output, with blocking I/O bounded by deadlines.
/// Used from one thread only (the supervisor's); never on an actor or the cooperative pool.
///
/// Its stdin, stdout and stderr are Unix sockets rather than pipes: writes can say `MSG_NOSIGNAL` (a worker that
/// died must not raise SIGPIPE in the service), and `socketpair` sets close-on-exec where Glibc's module lacks
/// `pipe2`. Its stderr is read along the way and its end kept for error messages.
final class WorkerProcess {
    let pid: pid_t
    private let input: Int32
    private let output: Int32
    private let errors: Int32
    private var buffered: [UInt8] = []
    private var errorTail: [UInt8] = []
    private var reaped: Int32?
    private static let errorTailLimit = 4096
    /// The longest line taken from the worker (a reply for one photo is a few hundred KiB): a worker that
    /// writes without end is stopped here instead of growing the service's memory.
    static let lineLimit = 16 << 20
    /// How long one `poll` may sleep before the deadline is checked against the (possibly injected) clock.
    private static let pollSliceMilliseconds: Int32 = 20

    enum Failure: Error {
        /// The process closed its output (it exited or crashed); the text says how, with its last stderr lines.
        case ended(String)
        case deadlinePassed
    }

    /// Starts `executable` with `arguments` (argv[0] excluded) and the service's environment.
    /// No other descriptor of the service reaches it. The corresponding C functions are `socketpair` and
    /// `posix_spawn`.
    init(executable: String, arguments: [String]) throws(OCRWorkerError) {
        var inputPair: [Int32] = [-1, -1]
        var outputPipe: [Int32] = [-1, -1]
        var errorPipe: [Int32] = [-1, -1]
        let kind = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        guard socketpair(AF_UNIX, kind, 0, &inputPair) == 0, socketpair(AF_UNIX, kind, 0, &outputPipe) == 0,
            socketpair(AF_UNIX, kind, 0, &errorPipe) == 0
        else {
            let reason = String(cString: strerror(errno))
            for fd in inputPair + outputPipe + errorPipe where fd >= 0 { close(fd) }
            throw .couldNotStart("no pipes for the OCR worker: \(reason)")
        }
        let child: pid_t
        do {
            child = try spawnChild(
                executable: executable, arguments: arguments, standardInput: inputPair[1],
                standardOutput: outputPipe[1], standardError: errorPipe[1])
        } catch {
            for fd in inputPair + outputPipe + errorPipe { close(fd) }
            throw .couldNotStart(
                "cannot run the OCR worker \(executable): \(error.reason) (create its environment with"
                    + " scripts/ocr-venv.sh)")
        }
        close(inputPair[1])
        close(outputPipe[1])
        close(errorPipe[1])
        pid = child
        input = inputPair[0]
        output = outputPipe[0]
        errors = errorPipe[0]
        for fd in [input, output, errors] {
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        }
    }

    deinit {
        kill()
        close(input)
        close(output)
        close(errors)
    }

    /// The last lines the process wrote to stderr (at most 4 KiB).
    var stderrTail: String {
        String(decoding: errorTail, as: UTF8.self).trimmingTrailingWhitespace
    }

    /// Writes all of `bytes` to the process's stdin before `deadline`.
    func write(_ bytes: [UInt8], deadline: Double, clock: any WorkerClock) throws(Failure) {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes.withUnsafeBytes { raw in
                send(input, raw.baseAddress! + offset, raw.count - offset, Int32(MSG_NOSIGNAL))
            }
            if sent > 0 {
                offset += sent
                continue
            }
            if sent < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR {
                throw .ended(endDescription(after: "its input closed (\(String(cString: strerror(errno))))"))
            }
            try wait(forWritable: true, deadline: deadline, clock: clock)
        }
    }

    /// Reads one line (without its newline) from the process's stdout before `deadline`, at most ``lineLimit``
    /// bytes. The deadline is checked on every turn, not only when nothing is waiting: a worker that keeps
    /// writing would otherwise never meet it.
    func readLine(deadline: Double, clock: any WorkerClock) throws(Failure) -> [UInt8] {
        var searched = 0
        while true {
            if let newline = buffered[searched...].firstIndex(of: UInt8(ascii: "\n")) {
                let line = Array(buffered[..<newline])
                buffered.removeSubrange(...newline)
                return line
            }
            searched = buffered.count
            if buffered.count > Self.lineLimit {
                buffered = []
                throw .ended(
                    "the OCR worker (pid \(pid)) sent a line longer than \(Self.lineLimit >> 20) MiB without a line end: "
                        + "it is out of step or broken, and is restarted")
            }
            if clock.now >= deadline { throw .deadlinePassed }
            var chunk = [UInt8](repeating: 0, count: 65536)
            let count = chunk.withUnsafeMutableBytes { read(output, $0.baseAddress, $0.count) }
            if count > 0 {
                buffered += chunk[..<count]
                continue
            }
            if count == 0 {
                throw .ended(endDescription(after: "its output ended"))
            }
            if errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR {
                throw .ended(endDescription(after: "reading its output failed (\(String(cString: strerror(errno))))"))
            }
            try wait(forWritable: false, deadline: deadline, clock: clock)
        }
    }

    /// Ends the process at once (SIGKILL) and reaps it. The corresponding C functions are `kill` and `waitpid`.
    func kill() {
        guard reaped == nil else { return }
        _ = Glibc.kill(pid, SIGKILL)
        reap(blocking: true)
    }

    /// Closes the process's stdin, which asks the worker to exit; kills it if it has not after `grace` seconds.
    func finish(grace: Double, clock: any WorkerClock) {
        shutdown(input, Int32(SHUT_WR))
        let deadline = clock.now + grace
        while reaped == nil && clock.now < deadline {
            reap(blocking: false)
            if reaped == nil { usleep(10_000) }
        }
        kill()
    }

    /// Sleeps in `poll` until the fd is ready, draining stderr meanwhile, or throws once the deadline has passed.
    private func wait(forWritable: Bool, deadline: Double, clock: any WorkerClock) throws(Failure) {
        while true {
            if clock.now >= deadline { throw .deadlinePassed }
            var fds = [
                pollfd(fd: forWritable ? input : output, events: Int16(forWritable ? POLLOUT : POLLIN), revents: 0),
                pollfd(fd: errors, events: Int16(POLLIN), revents: 0),
            ]
            let ready = poll(&fds, nfds_t(fds.count), Self.pollSliceMilliseconds)
            if ready < 0 && errno != EINTR {
                throw .ended(endDescription(after: "poll failed (\(String(cString: strerror(errno))))"))
            }
            if fds[1].revents != 0 { drainErrors() }
            if fds[0].revents != 0 { return }
        }
    }

    private func drainErrors() {
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(errors, $0.baseAddress, $0.count) }
            guard count > 0 else { return }
            errorTail += chunk[..<count]
            if errorTail.count > Self.errorTailLimit {
                errorTail.removeFirst(errorTail.count - Self.errorTailLimit)
            }
        }
    }

    private func reap(blocking: Bool) {
        guard reaped == nil else { return }
        var status: Int32 = 0
        while true {
            let result = waitpid(pid, &status, blocking ? 0 : WNOHANG)
            if result == pid {
                reaped = status
                return
            }
            if result < 0 && errno == EINTR { continue }
            if result < 0 { reaped = -1 }  // Not our child any more (reaped elsewhere): nothing left to wait for.
            return
        }
    }

    /// How the process ended, for an error message: its exit status or signal, and what it said on stderr.
    private func endDescription(after what: String) -> String {
        // The output closes a moment before the process is reaped; give it that moment.
        for _ in 0..<50 where reaped == nil {
            reap(blocking: false)
            if reaped == nil { usleep(10_000) }
        }
        drainErrors()
        var description = "the OCR worker (pid \(pid)) stopped: \(what)"
        if let status = reaped, status >= 0 {
            let signal = status & 0x7f
            if signal == 0 {
                description += ", exit status \((status >> 8) & 0xff)"
            } else {
                description += ", killed by signal \(signal)"
            }
        }
        let tail = stderrTail
        if !tail.isEmpty { description += "; its last output on stderr:\n\(tail)" }
        return description
    }
}

extension String {
    fileprivate var trimmingTrailingWhitespace: String {
        var text = Substring(self)
        while let last = text.last, last.isWhitespace { text.removeLast() }
        return String(text)
    }
}
