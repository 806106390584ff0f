import CShim
import Logging
import SwiftWingCore
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The shutter on any key device (evdev): a gpio-keys overlay, a USB foot pedal, a Bluetooth camera
/// remote. Every `event*` device under the directory that can send one of the configured keys is
/// opened; devices that appear later are picked up through inotify, devices that vanish (`ENODEV`)
/// are dropped with one log line. Key-down is a press, autorepeat (value 2) is ignored, a key held
/// for the long-press threshold gives `.longPress`. Runs on a thread of its own ("swiftwing-keys").
///
/// With an ``allowList`` only the devices it names are used; each device's presses are limited to
/// one per ``PressRateLimit`` interval (150 ms), on the kernel's event timestamps.
///
/// Timestamps: each device is switched to `CLOCK_MONOTONIC` with `EVIOCSCLOCKID` (the default is
/// `CLOCK_REALTIME`), so a key press compares directly with frame timestamps.
public final class KeyShutter: ShutterInput {
    public let directory: String
    public let keys: Set<UInt16>
    public let timing: PressTiming
    /// The devices that may press the shutter (empty: any with a shutter key).
    public let allowList: KeyDeviceAllowList
    /// The shortest time between two presses from one device.
    public let minimumPressIntervalNanoseconds: Int64
    private let logger: Logger
    private let realtimePriority: RealtimePriority?
    private let running = Mutex<PollLoopThread?>(nil)
    private let openDevices = Mutex<[String: String]>([:])
    private let stats = Mutex(ShutterStatistics())

    public init(
        directory: String = "/dev/input", keys: [UInt16] = KeyCodes.defaultShutterKeys,
        longPressMilliseconds: Int? = 2000, extendedHoldMilliseconds: Int? = nil,
        realtimePriority: RealtimePriority? = nil, allowList: KeyDeviceAllowList = KeyDeviceAllowList(),
        minimumPressIntervalNanoseconds: Int64 = PressRateLimit.defaultMinimumIntervalNanoseconds,
        logger: Logger = Logger(label: "shutter")
    ) {
        self.realtimePriority = realtimePriority
        self.allowList = allowList
        self.minimumPressIntervalNanoseconds = minimumPressIntervalNanoseconds
        self.directory = directory
        self.keys = Set(keys)
        self.timing = .keys(
            longPressMilliseconds: longPressMilliseconds, extendedHoldMilliseconds: extendedHoldMilliseconds)
        self.logger = logger
    }

    public var name: String {
        "keys \(keys.sorted().map(KeyCodes.name(of:)).joined(separator: ",")) on \(directory)/event*"
            + (allowList.allowsAny ? "" : " from \(allowList)")
    }

    /// `event*` nodes opened and looked at so far (kept or not): shows the inotify pick-up works.
    public var examined: Int { examinedCount.withLock { $0 } }
    private let examinedCount = Mutex(0)

    /// The devices in use now: path → device name.
    public var devices: [String: String] { openDevices.withLock { $0 } }

    public var statistics: ShutterStatistics { stats.withLock { $0 } }

    public func start(_ handler: @escaping @Sendable (ShutterEvent) -> Void) throws {
        let timer = try DeadlineTimer()
        let inotify = try retryingOnInterrupt("inotify_init1") { inotify_init1(Int32(IN_CLOEXEC | IN_NONBLOCK)) }
        let thread: PollLoopThread
        do {
            thread = try PollLoopThread(name: "swiftwing-keys", realtimePriority: realtimePriority) { [self] wake in
                var loop = Loop(owner: self, inotify: inotify, handler: handler)
                loop.run(wake: wake, timer: timer)
                loop.closeAll()
                close(inotify)
            }
        } catch {
            close(inotify)
            throw error
        }
        running.withLock { $0 = thread }
    }

    /// Wakes the loop and waits until it has closed its devices.
    public func stop() {
        running.withLock { $0.take() }?.stop()
    }

    /// One open event device.
    struct Device {
        let fd: Int32
        let path: String
        let name: String
        var detectors: [UInt16: PressDetector]
        var rateLimit: PressRateLimit
    }

    /// The thread's state: only the thread touches it.
    struct Loop {
        let owner: KeyShutter
        let inotify: Int32
        let handler: @Sendable (ShutterEvent) -> Void
        var devices: [Int32: Device] = [:]
        var directoryWatch: Int32 = -1
        var parentWatch: Int32 = -1
        var refusedPaths: Set<String> = []
        /// Devices not on the allow-list, logged once each.
        var ignoredPaths: Set<String> = []
        var warnedNoDirectory = false

        init(owner: KeyShutter, inotify: Int32, handler: @escaping @Sendable (ShutterEvent) -> Void) {
            self.owner = owner
            self.inotify = inotify
            self.handler = handler
        }

        var logger: Logger { owner.logger }

        mutating func run(wake: WakeEvent, timer: DeadlineTimer) {
            watchDirectory()
            while true {
                timer.arm(devices.values.flatMap { $0.detectors.values.compactMap(\.nextDeadline) }.min())
                let ready: [Int32: Int16]
                do {
                    ready = try waitReadable([wake.descriptor, timer.fd, inotify] + devices.keys.sorted())
                } catch {
                    logger.error("the key shutter stopped: \(error)")
                    return
                }
                if ready[wake.descriptor] != nil { return }
                if ready[inotify] != nil { readNotifications() }
                for (fd, revents) in ready where devices[fd] != nil {
                    readDevice(fd, revents: revents)
                }
                if ready[timer.fd] != nil {
                    timer.drain()
                    let now = MonotonicInstant.now()
                    for fd in devices.keys {
                        for code in devices[fd]!.detectors.keys {
                            let events = devices[fd]!.detectors[code]!.advance(to: now)
                            deliver(events, from: fd)
                        }
                    }
                }
            }
        }

        mutating func deliver(_ events: [ShutterEvent], from fd: Int32) {
            for event in events {
                guard devices[fd]?.rateLimit.admit(event) ?? true else {
                    owner.stats.withLock { $0.throttled += 1 }
                    continue
                }
                handler(event)
                owner.stats.withLock {
                    switch event {
                    case .press: $0.presses += 1
                    case .longPress: $0.longPresses += 1
                    case .extendedHold: break
                    }
                }
            }
        }

        /// Watches the directory (or, while it does not exist yet, its parent for its creation) and
        /// opens what is already there.
        mutating func watchDirectory() {
            let mask = UInt32(IN_CREATE | IN_ATTRIB | IN_MOVED_TO)
            directoryWatch = inotify_add_watch(inotify, owner.directory, mask)
            if directoryWatch < 0 {
                let parent = owner.directory.split(separator: "/").dropLast().joined(separator: "/")
                parentWatch = inotify_add_watch(inotify, "/" + parent, UInt32(IN_CREATE))
                if !warnedNoDirectory {
                    warnedNoDirectory = true
                    logger.info(
                        "no \(owner.directory) yet (no input device): a key device plugged in later is picked up")
                }
                return
            }
            for entry in Self.listEventDevices(owner.directory) { open(entry) }
        }

        static func listEventDevices(_ directory: String) -> [String] {
            guard let dir = opendir(directory) else { return [] }
            defer { closedir(dir) }
            var names: [String] = []
            while let entry = readdir(dir) {
                let name = withUnsafePointer(to: entry.pointee.d_name) {
                    String(cString: UnsafeRawPointer($0).assumingMemoryBound(to: CChar.self))
                }
                if name.hasPrefix("event") { names.append(name) }
            }
            return names.sorted()
        }

        mutating func readNotifications() {
            var buffer = [UInt8](repeating: 0, count: 4096)
            let count = buffer.withUnsafeMutableBytes { read(inotify, $0.baseAddress, $0.count) }
            guard count > 0 else { return }
            var offset = 0
            while offset + 16 <= count {
                let (watch, mask, length) = buffer.withUnsafeBytes {
                    (
                        $0.loadUnaligned(fromByteOffset: offset, as: Int32.self),
                        $0.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self),
                        Int($0.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self))
                    )
                }
                let nameBytes = buffer[(offset + 16)..<min(count, offset + 16 + length)].prefix { $0 != 0 }
                let name = String(decoding: nameBytes, as: UTF8.self)
                offset += 16 + length
                if watch == parentWatch, owner.directory.hasSuffix("/" + name) {
                    inotify_rm_watch(inotify, parentWatch)
                    parentWatch = -1
                    watchDirectory()
                } else if watch == directoryWatch, name.hasPrefix("event"), mask & UInt32(IN_IGNORED) == 0 {
                    open(name)
                } else if watch == directoryWatch, mask & UInt32(IN_IGNORED) != 0 {
                    // The directory itself went away (the last input device left on a devtmpfs): wait for it again.
                    directoryWatch = -1
                    watchDirectory()
                }
            }
        }

        /// Opens `directory/name` if it is an event device that can send one of the keys.
        mutating func open(_ name: String) {
            let path = owner.directory + "/" + name
            guard !devices.values.contains(where: { $0.path == path }) else { return }
            let fd = Glibc.open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
            guard fd >= 0 else {
                let code = errno
                // A node just created by devtmpfs is root-only until udev sets its group: IN_ATTRIB retries.
                if code == EACCES || code == EPERM, refusedPaths.insert(path).inserted {
                    let message =
                        "cannot open key device \(path): \(String(cString: strerror(code))). Fix: run swiftwing in the "
                        + "group `input` (the systemd unit sets SupplementaryGroups=input)"
                    logger.warning("\(message)")
                }
                return
            }
            refusedPaths.remove(path)
            owner.examinedCount.withLock { $0 += 1 }
            let (offered, deviceName) = KeyDeviceSurvey.capabilities(fd: fd, keys: owner.keys)
            guard !offered.isEmpty else {
                close(fd)
                return
            }
            let identity = KeyDeviceSurvey.identity(fd: fd, name: deviceName)
            guard owner.allowList.allows(identity) else {
                close(fd)
                if ignoredPaths.insert(path).inserted {
                    let message =
                        "key device \(path), \(identity), has a shutter key but is not in shutter.key_devices "
                        + "(\(owner.allowList)): ignored; add its name or vendor:product there to use it"
                    logger.notice("\(message)")
                }
                return
            }
            ignoredPaths.remove(path)
            var clock = CLOCK_MONOTONIC
            if sw_ioctl_ptr(fd, sw_EVIOCSCLOCKID(), &clock) != 0 {
                logger.warning(
                    "key device \(path) keeps realtime timestamps (EVIOCSCLOCKID: \(String(cString: strerror(errno)))); they are converted"
                )
            }
            var detectors: [UInt16: PressDetector] = [:]
            for code in offered { detectors[code] = PressDetector(timing: owner.timing, source: .key) }
            devices[fd] = Device(
                fd: fd, path: path, name: deviceName, detectors: detectors,
                rateLimit: PressRateLimit(minimumIntervalNanoseconds: owner.minimumPressIntervalNanoseconds))
            owner.openDevices.withLock { $0[path] = deviceName }
            logger.info(
                "key device added",
                metadata: [
                    "device": "\(path)", "name": "\(deviceName)",
                    "keys": "\(offered.sorted().map(KeyCodes.name(of:)).joined(separator: ","))",
                ])
        }

        mutating func readDevice(_ fd: Int32, revents: Int16) {
            let size = InputEventDecoder.nativeSize
            var buffer = [UInt8](repeating: 0, count: size * 64)
            while true {
                let count: Int
                do {
                    count = try retryingOnInterrupt("read") {
                        buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                    }
                } catch {
                    if error.errno == EAGAIN { return }
                    drop(fd, reason: error.errno == ENODEV ? "removed" : error.reason)
                    return
                }
                if count == 0 {
                    drop(fd, reason: "end of file")
                    return
                }
                let events = buffer.withUnsafeBytes {
                    InputEventDecoder.decode(UnsafeRawBufferPointer(rebasing: $0[0..<count]), eventSize: size)
                }
                for event in events { handle(event, on: fd) }
                if count < buffer.count { return }
            }
        }

        mutating func handle(_ event: InputEvent, on fd: Int32) {
            if event.type == InputEvent.syncType, event.code == InputEvent.droppedCode {
                owner.stats.withLock { $0.possibleOverflows += 1 }
                logger.warning(
                    "key device \(devices[fd]?.path ?? "?") dropped events (SYN_DROPPED): its buffer overflowed")
                return
            }
            guard let action = event.keyAction, devices[fd]?.detectors[event.code] != nil else { return }
            owner.stats.withLock { $0.edges += 1 }
            let time = EventClock.monotonic(
                seconds: Int(event.time.nanoseconds / 1_000_000_000),
                nanoseconds: Int(event.time.nanoseconds % 1_000_000_000))
            switch action {
            case .repeated:
                return
            case .down:
                let events = devices[fd]!.detectors[event.code]!.edge(active: true, at: time)
                deliver(events, from: fd)
            case .up:
                let events = devices[fd]!.detectors[event.code]!.edge(active: false, at: time)
                deliver(events, from: fd)
            }
        }

        mutating func drop(_ fd: Int32, reason: String) {
            guard let device = devices.removeValue(forKey: fd) else { return }
            close(fd)
            owner.openDevices.withLock { $0[device.path] = nil }
            logger.info(
                "key device gone",
                metadata: ["device": "\(device.path)", "name": "\(device.name)", "reason": "\(reason)"])
        }

        mutating func closeAll() {
            for fd in devices.keys { close(fd) }
            devices = [:]
            owner.openDevices.withLock { $0 = [:] }
        }
    }
}
