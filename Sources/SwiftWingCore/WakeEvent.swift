import CLinux

#if canImport(Glibc)
    import Glibc
#endif

/// An eventfd that a device thread's poll loop watches beside its devices: `signal()`, from any
/// thread, wakes the loop (to stop, or to look at new work); the loop calls `drain()` when it sees
/// the event readable. Signals before the loop looks are merged into one wake-up.
public final class WakeEvent: Sendable {
    /// The descriptor to pass to ``waitReadable(_:until:)``.
    public let descriptor: Int32

    /// The corresponding C function is `eventfd`.
    public init() throws(SystemCallError) {
        descriptor = try retryingOnInterrupt("eventfd") { eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK)) }
    }

    /// Wakes the loop. Never blocks: the counter only saturates after 2^64 - 2 signals.
    public func signal() {
        var one: UInt64 = 1
        _ = write(descriptor, &one, MemoryLayout<UInt64>.size)
    }

    /// Resets the event after the loop saw it readable.
    public func drain() {
        var count: UInt64 = 0
        _ = read(descriptor, &count, MemoryLayout<UInt64>.size)
    }

    deinit { close(descriptor) }
}

/// Waits until one of `descriptors` is readable (or reports an error or a hang-up) or `deadline`
/// passes, retrying on `EINTR`; returns the ready ones with their `revents` (empty at the deadline).
/// No deadline waits for ever; a deadline already past only looks.
/// The corresponding C function is `poll`.
public func waitReadable(
    _ descriptors: [Int32], until deadline: MonotonicInstant? = nil
) throws(SystemCallError) -> [Int32: Int16] {
    var entries = descriptors.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
    // The timeout is computed again after an interruption, so a signal never stretches the wait.
    _ = try retryingOnInterrupt("poll") { poll(&entries, nfds_t(entries.count), pollTimeout(until: deadline)) }
    var ready: [Int32: Int16] = [:]
    for entry in entries where entry.revents != 0 { ready[entry.fd] = entry.revents }
    return ready
}

/// Whether `descriptor` has data to read now (`POLLIN`), without waiting.
public func isReadable(_ descriptor: Int32) -> Bool {
    let ready = try? waitReadable([descriptor], until: .now())
    return (ready?[descriptor] ?? 0) & Int16(POLLIN) != 0
}

/// Milliseconds from now until `deadline` for `poll`: rounded up (never wakes early), at least 0;
/// -1 (for ever) without a deadline.
public func pollTimeout(until deadline: MonotonicInstant?, now: MonotonicInstant = .now()) -> Int32 {
    guard let deadline else { return -1 }
    let nanoseconds = deadline.nanoseconds(since: now)
    if nanoseconds <= 0 { return 0 }
    return Int32(min((nanoseconds + 999_999) / 1_000_000, Int64(Int32.max)))
}
