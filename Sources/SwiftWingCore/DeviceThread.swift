import CLinux
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A named POSIX thread for blocking work: a loop that owns its descriptors and waits in `poll`
/// (shutter, buzzer, camera, HTTP), or a queue of CPU-heavy jobs. Such work never runs on an actor
/// or the cooperative pool. Modelled on swift-nio's `ThreadPosix`.
///
/// `join()` waits for the body to return. A thread nobody joins is detached when its last
/// reference goes, and frees itself when its body returns.
public final class DeviceThread: @unchecked Sendable {
    /// Linux keeps 15 bytes of a thread's name (`TASK_COMM_LEN` with its NUL) and cuts the rest.
    public static let maximumNameLength = 15

    /// The name `top -H`, `ps -L` and crash reports show for this thread.
    public let name: String
    // Written once, by `pthread_create` in `init`, before any other thread can see this object.
    private var handle = pthread_t()
    private let joined = Mutex(false)
    private let schedulingResult = Atomic<Int32>(-1)

    /// Why `name` cannot name a thread (too long to survive the kernel's cut, or empty), or nil.
    public static func nameProblem(_ name: String) -> String? {
        if name.isEmpty { return "a thread needs a name (shown by top -H and in crash reports)" }
        let length = name.utf8.count
        guard length <= maximumNameLength else {
            return "thread name \"\(name)\" is \(length) bytes; Linux keeps \(maximumNameLength) "
                + "(it would show as \"\(String(decoding: name.utf8.prefix(maximumNameLength), as: UTF8.self))\"): "
                + "choose a shorter one"
        }
        return nil
    }

    /// Starts `body` on a new thread named `name` (at most ``maximumNameLength`` bytes, checked).
    ///
    /// With `realtimePriority` the thread asks for `SCHED_FIFO` at that priority (a shutter click
    /// must not wait behind JPEG encoding), with `SCHED_RESET_ON_FORK` so threads it happens to
    /// create do not inherit it. Without the right (root, `CAP_SYS_NICE` or systemd's
    /// `LimitRTPRIO=`) it runs at normal priority; ``isRealtime`` tells which.
    /// The corresponding C functions are `pthread_create`, `prctl(PR_SET_NAME)` and `sched_setscheduler`.
    public init(name: String, realtimePriority: Int32? = nil, _ body: @escaping @Sendable () -> Void) {
        if let problem = Self.nameProblem(name) { preconditionFailure(problem) }
        self.name = name
        let start = Start(name: name, realtimePriority: realtimePriority, thread: self, body: body)
        let context = Unmanaged.passRetained(start).toOpaque()
        let result = Self.create(&handle, context)
        precondition(result == 0, "pthread_create failed: \(String(cString: strerror(result)))")
    }

    /// Starts `body` on a new thread named `name`, or returns nil when the system refuses a thread
    /// (`EAGAIN`: the thread or memory limit), for callers that can decline the work instead.
    public init?(startingIfPossible name: String, _ body: @escaping @Sendable () -> Void) {
        if let problem = Self.nameProblem(name) { preconditionFailure(problem) }
        self.name = name
        let start = Start(name: name, realtimePriority: nil, thread: self, body: body)
        let context = Unmanaged.passRetained(start).toOpaque()
        if Self.create(&handle, context) != 0 {
            Unmanaged<Start>.fromOpaque(context).release()
            joined.withLock { $0 = true }  // nothing to detach
            return nil
        }
    }

    private static func create(_ handle: inout pthread_t, _ context: UnsafeMutableRawPointer) -> Int32 {
        pthread_create(
            &handle, nil,
            { raw in
                let start = Unmanaged<Start>.fromOpaque(raw!).takeRetainedValue()
                _ = sw_thread_set_name(start.name)
                if let priority = start.realtimePriority {
                    start.thread.schedulingResult.store(sw_thread_set_realtime(priority), ordering: .releasing)
                }
                start.body()
                return nil
            }, context)
    }

    deinit {
        let wasJoined = joined.withLock { $0 }
        if !wasJoined { pthread_detach(handle) }
    }

    /// Whether the thread runs with `SCHED_FIFO` (nil: still starting, or no priority asked for).
    public var isRealtime: Bool? {
        let result = schedulingResult.load(ordering: .acquiring)
        return result < 0 ? nil : result == 0
    }

    /// Waits until the body returned. Only the first call joins; a no-op on the thread itself.
    /// The corresponding C function is `pthread_join`.
    public func join() {
        guard pthread_equal(pthread_self(), handle) == 0 else { return }
        let first = joined.withLock { joined in
            defer { joined = true }
            return !joined
        }
        if first { pthread_join(handle, nil) }
    }

    /// The calling thread's name as the kernel keeps it. The corresponding C function is `prctl(PR_GET_NAME)`.
    public static var currentName: String {
        var buffer = [CChar](repeating: 0, count: maximumNameLength + 1)
        _ = sw_thread_get_name(&buffer)
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Whether the calling thread runs on `SCHED_FIFO`. The corresponding C function is `sched_getscheduler`.
    public static var isCurrentThreadRealtime: Bool { sw_thread_is_realtime() != 0 }

    /// What the new thread needs, handed over through `pthread_create`'s context pointer.
    private final class Start {
        let name: String
        let realtimePriority: Int32?
        let thread: DeviceThread
        let body: @Sendable () -> Void

        init(name: String, realtimePriority: Int32?, thread: DeviceThread, body: @escaping @Sendable () -> Void) {
            self.name = name
            self.realtimePriority = realtimePriority
            self.thread = thread
            self.body = body
        }
    }
}

/// A device thread whose poll loop watches a ``WakeEvent`` beside its devices and returns when the
/// event is readable: ``stop()`` signals it and waits until the loop has returned (and so has
/// released what it owns).
public final class PollLoopThread: Sendable {
    private let wake: WakeEvent
    private let thread: DeviceThread

    /// Starts `loop` on a ``DeviceThread`` named `name`, passing it the event that stops it.
    public init(
        name: String, realtimePriority: Int32? = nil, _ loop: @escaping @Sendable (WakeEvent) -> Void
    ) throws(SystemCallError) {
        let wake = try WakeEvent()
        self.wake = wake
        thread = DeviceThread(name: name, realtimePriority: realtimePriority) { loop(wake) }
    }

    /// Whether the thread runs with `SCHED_FIFO` (nil: still starting, or no priority asked for).
    public var isRealtime: Bool? { thread.isRealtime }

    /// Wakes the loop and waits for it to return. A second call returns at once.
    public func stop() {
        wake.signal()
        thread.join()
    }
}
