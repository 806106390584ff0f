// The only file that calls libgpiod. Written against libgpiod 1.6 (Debian and Raspberry Pi OS
// bookworm: `libgpiod2` 1.6.3, which speaks the kernel's v1 GPIO character-device uAPI); a port to
// libgpiod 2.x replaces this file and nothing else.
import CGPIOD
import SwiftWingCore

#if canImport(Glibc)
    import Glibc
#endif

/// The libgpiod this module is linked with.
public enum LibGPIOD {
    /// e.g. "1.6.3". The corresponding C function is `gpiod_version_string`.
    public static var version: String { String(cString: gpiod_version_string()) }
}

/// Which line of which chip, and how to request it.
public struct GPIOLineSpec: Sendable, Equatable, CustomStringConvertible {
    /// The chip's label (`pinctrl-bcm2835`, `pinctrl-rp1`) or name (`gpiochip0`). Never a number
    /// alone: the Pi 5 renumbered its chips.
    public var chip: String
    /// The line's name (`GPIO17`, `SHUTTER`) or its offset on the chip (`17`).
    public var line: String
    /// Active when the pin is low (a button to GND with a pull-up; a buzzer driven through a PNP).
    public var activeLow: Bool
    /// For inputs only.
    public var bias: LineBias

    public init(chip: String, line: String, activeLow: Bool, bias: LineBias = .asIs) {
        self.chip = chip
        self.line = line
        self.activeLow = activeLow
        self.bias = bias
    }

    public var description: String { "line \(line) of GPIO chip \(chip)" }
}

/// Why a GPIO line could not be used, worded as advice: the chip, the line, and the fix.
public struct GPIOError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        /// No chip has that label or name; `available` lists "name [label] (N lines)".
        case chipNotFound(available: [String])
        /// The chip has no line of that name, or the offset is beyond its lines.
        case lineNotFound(chipLines: Int)
        /// Another program (or a kernel driver such as gpio-keys) holds the line.
        case busy(consumer: String?)
        /// `/dev/gpiochipN` cannot be opened by this user.
        case permission
        /// The kernel or driver refused the request flags (bias needs kernel 5.5+).
        case unsupported(errno: Int32)
        /// Anything else, with the call that failed.
        case system(SystemCallError)
    }

    public var kind: Kind
    public var spec: GPIOLineSpec
    /// The chip's device name once found (`gpiochip0`).
    public var chipName: String?

    public init(kind: Kind, spec: GPIOLineSpec, chipName: String? = nil) {
        self.kind = kind
        self.spec = spec
        self.chipName = chipName
    }

    public var description: String {
        let chip = chipName.map { "\(spec.chip) (\($0))" } ?? spec.chip
        switch kind {
        case .chipNotFound(let available):
            let list = available.isEmpty ? "none (no /dev/gpiochip* at all)" : available.joined(separator: ", ")
            return "no GPIO chip labelled or named \"\(spec.chip)\"; chips here: \(list). "
                + "Fix: set the chip's label or name from that list (gpiodetect shows them)"
        case .lineNotFound(let count):
            return "GPIO chip \(chip) has no line \"\(spec.line)\" (it has \(count) lines). "
                + "Fix: use a line name from `gpioinfo \(chipName ?? spec.chip)` or an offset below \(count)"
        case .busy(let consumer):
            let holder = consumer.map { "\"\($0)\"" } ?? "another program"
            return "line \(spec.line) of GPIO chip \(chip) is busy (held by \(holder)). "
                + "Fix: stop the other user (a gpio-keys or gpio-shutdown overlay in config.txt, another gpiomon), "
                + "or wire to a free line"
        case .permission:
            return "no permission to open GPIO chip \(chip) for line \(spec.line). "
                + "Fix: run swiftwing in the group `gpio` (sudo usermod -aG gpio swiftwing; the systemd unit sets "
                + "SupplementaryGroups=gpio) and on plain Debian install udev/70-swiftwing.rules so /dev/gpiochip* belong to it"
        case .unsupported(let code):
            return "GPIO chip \(chip) refused the request for line \(spec.line) (\(String(cString: strerror(code)))): "
                + "the kernel or driver cannot set bias \(spec.bias.rawValue). Fix: set bias = \"as-is\" and fit an external resistor"
        case .system(let error):
            return "GPIO chip \(chip), line \(spec.line): \(error)"
        }
    }
}

/// One edge of an input line as the kernel stamped it.
public struct GPIOEdge: Sendable, Equatable {
    /// `true` when the line became active (pressed), honouring active-low.
    public var active: Bool
    public var time: MonotonicInstant
}

/// An open chip; closes on deinit. Only this file sees `gpiod_chip`.
private final class ChipHandle {
    let pointer: OpaquePointer
    let name: String
    let label: String

    init(pointer: OpaquePointer) {
        self.pointer = pointer
        self.name = String(cString: gpiod_chip_name(pointer))
        self.label = String(cString: gpiod_chip_label(pointer))
    }

    deinit { gpiod_chip_close(pointer) }

    /// Finds a chip by label or name by walking every chip (never by number).
    /// The corresponding C functions are `gpiod_chip_iter_new` and `gpiod_chip_iter_next_noclose`.
    static func find(_ spec: GPIOLineSpec) throws(GPIOError) -> ChipHandle {
        guard let iterator = gpiod_chip_iter_new() else {
            let code = errno
            if code == EACCES || code == EPERM { throw GPIOError(kind: .permission, spec: spec) }
            throw GPIOError(
                kind: .system(SystemCallError("gpiod_chip_iter_new", subject: "/dev/gpiochip*", errno: code)),
                spec: spec)
        }
        defer { gpiod_chip_iter_free_noclose(iterator) }
        var found: ChipHandle?
        var seen: [String] = []
        while let chip = gpiod_chip_iter_next_noclose(iterator) {
            let handle = ChipHandle(pointer: chip)
            if found == nil, handle.label == spec.chip || handle.name == spec.chip || "/dev/\(handle.name)" == spec.chip
            {
                found = handle
            } else {
                seen.append("\(handle.name) [\(handle.label)] (\(gpiod_chip_num_lines(chip)) lines)")
            }
        }
        guard let found else { throw GPIOError(kind: .chipNotFound(available: seen), spec: spec) }
        return found
    }

    /// The corresponding C functions are `gpiod_chip_find_line` and `gpiod_chip_get_line`.
    func line(_ spec: GPIOLineSpec) throws(GPIOError) -> OpaquePointer {
        let count = Int(gpiod_chip_num_lines(pointer))
        if let offset = UInt32(spec.line) {
            guard Int(offset) < count, let line = gpiod_chip_get_line(pointer, offset) else {
                throw GPIOError(kind: .lineNotFound(chipLines: count), spec: spec, chipName: name)
            }
            return line
        }
        guard let line = gpiod_chip_find_line(pointer, spec.line) else {
            throw GPIOError(kind: .lineNotFound(chipLines: count), spec: spec, chipName: name)
        }
        return line
    }

    func requestError(_ code: Int32, line: OpaquePointer, spec: GPIOLineSpec, call: String) -> GPIOError {
        switch code {
        case EBUSY:
            gpiod_line_update(line)
            let consumer = gpiod_line_consumer(line).map { String(cString: $0) }
            return GPIOError(kind: .busy(consumer: consumer), spec: spec, chipName: name)
        case EACCES, EPERM:
            return GPIOError(kind: .permission, spec: spec, chipName: name)
        case EINVAL, EOPNOTSUPP, ENOTSUP:
            return GPIOError(kind: .unsupported(errno: code), spec: spec, chipName: name)
        default:
            return GPIOError(
                kind: .system(SystemCallError(call, subject: "\(name) line \(spec.line)", errno: code)), spec: spec,
                chipName: name)
        }
    }
}

private func flags(for spec: GPIOLineSpec, input: Bool) -> Int32 {
    var flags: Int32 = 0
    if spec.activeLow { flags |= Int32(GPIOD_LINE_REQUEST_FLAG_ACTIVE_LOW) }
    if input {
        switch spec.bias {
        case .pullUp: flags |= Int32(GPIOD_LINE_REQUEST_FLAG_BIAS_PULL_UP)
        case .pullDown: flags |= Int32(GPIOD_LINE_REQUEST_FLAG_BIAS_PULL_DOWN)
        case .disabled: flags |= Int32(GPIOD_LINE_REQUEST_FLAG_BIAS_DISABLE)
        case .asIs: break
        }
    }
    return flags
}

/// An input line requested for both-edge events. Owned by one thread (the shutter's poll loop).
///
/// Timestamps: the v1 uAPI that libgpiod 1.6 speaks stamps events with `CLOCK_MONOTONIC` since
/// Linux 5.7 (before that, `CLOCK_REALTIME`). `readEdges` checks each stamp against both clocks and
/// converts a realtime stamp, so a press always compares with frame timestamps.
///
/// Overflow: the kernel keeps 16 events per line (v1) and drops newer ones silently when nobody
/// reads; v1 events carry no sequence numbers (v2 does; libgpiod 1.6 cannot use v2), so a loss
/// cannot be proven. A read that returns a full batch is the sign: `readEdges` reports it.
public final class GPIOInputLine: @unchecked Sendable {
    /// Events the kernel buffers per line (v1 uAPI: a kfifo of 16) and the largest batch read.
    public static let batchSize = 16

    public let spec: GPIOLineSpec
    public let chipName: String
    public let chipLabel: String
    private let chip: ChipHandle
    private let line: OpaquePointer
    private var released = false

    /// Requests the line for both edges. The corresponding C function is
    /// `gpiod_line_request_both_edges_events_flags`.
    public init(spec: GPIOLineSpec, consumer: String = "swiftwing") throws(GPIOError) {
        let chip = try ChipHandle.find(spec)
        let line = try chip.line(spec)
        if gpiod_line_request_both_edges_events_flags(line, consumer, flags(for: spec, input: true)) != 0 {
            throw chip.requestError(errno, line: line, spec: spec, call: "gpiod_line_request_both_edges_events_flags")
        }
        self.spec = spec
        self.chip = chip
        self.line = line
        self.chipName = chip.name
        self.chipLabel = chip.label
    }

    deinit { release() }

    /// The descriptor to poll for `POLLIN`. The corresponding C function is `gpiod_line_event_get_fd`.
    public var fileDescriptor: Int32 { gpiod_line_event_get_fd(line) }

    /// The line's level now (`true` = active). The corresponding C function is `gpiod_line_get_value`.
    public func isActive() throws(GPIOError) -> Bool {
        let value = gpiod_line_get_value(line)
        guard value >= 0 else {
            throw GPIOError(
                kind: .system(
                    SystemCallError("gpiod_line_get_value", subject: "\(chipName) line \(spec.line)", errno: errno)),
                spec: spec, chipName: chipName)
        }
        return value == 1
    }

    /// Reads the pending events (call after `POLLIN`); `batchFull` means the kernel's buffer may
    /// have overflowed and edges may be missing. The corresponding C function is
    /// `gpiod_line_event_read_multiple`.
    public func readEdges() throws(GPIOError) -> (edges: [GPIOEdge], batchFull: Bool) {
        var events = [gpiod_line_event](repeating: gpiod_line_event(), count: Self.batchSize)
        let count = events.withUnsafeMutableBufferPointer { buffer in
            gpiod_line_event_read_multiple(line, buffer.baseAddress, UInt32(buffer.count))
        }
        guard count >= 0 else {
            let code = errno
            if code == EAGAIN || code == EINTR { return ([], false) }
            throw GPIOError(
                kind: .system(
                    SystemCallError(
                        "gpiod_line_event_read_multiple", subject: "\(chipName) line \(spec.line)", errno: code)),
                spec: spec, chipName: chipName)
        }
        let edges = events.prefix(Int(count)).map { event in
            GPIOEdge(
                active: event.event_type == Int32(GPIOD_LINE_EVENT_RISING_EDGE),
                time: EventClock.monotonic(seconds: Int(event.ts.tv_sec), nanoseconds: Int(event.ts.tv_nsec)))
        }
        return (edges, Int(count) == Self.batchSize)
    }

    /// Gives the line back to the kernel. The corresponding C function is `gpiod_line_release`.
    public func release() {
        guard !released else { return }
        released = true
        gpiod_line_release(line)
    }
}

/// An output line (buzzer, light). `set` is one ioctl: safe to call on the press path.
public final class GPIOOutputLine: DigitalOutput, @unchecked Sendable {
    public let spec: GPIOLineSpec
    public let chipName: String
    private let chip: ChipHandle
    private let line: OpaquePointer
    private var released = false

    /// Requests the line as an output, inactive. The corresponding C function is
    /// `gpiod_line_request_output_flags`.
    public init(spec: GPIOLineSpec, consumer: String = "swiftwing") throws(GPIOError) {
        let chip = try ChipHandle.find(spec)
        let line = try chip.line(spec)
        if gpiod_line_request_output_flags(line, consumer, flags(for: spec, input: false), 0) != 0 {
            throw chip.requestError(errno, line: line, spec: spec, call: "gpiod_line_request_output_flags")
        }
        self.spec = spec
        self.chip = chip
        self.line = line
        self.chipName = chip.name
    }

    deinit { release() }

    /// Drives the line active or inactive (active-low is applied by the kernel).
    /// The corresponding C function is `gpiod_line_set_value`. Callers serialise calls.
    public func set(active: Bool) throws(SystemCallError) {
        if gpiod_line_set_value(line, active ? 1 : 0) != 0 {
            throw SystemCallError("gpiod_line_set_value", subject: "\(chipName) line \(spec.line)", errno: errno)
        }
    }

    /// Sets the line inactive and gives it back. The corresponding C function is `gpiod_line_release`.
    public func release() {
        guard !released else { return }
        released = true
        _ = gpiod_line_set_value(line, 0)
        gpiod_line_release(line)
    }
}

/// A GPIO line as the kernel reports it, read without requesting it (for `swiftwing doctor`).
public struct GPIOLineState: Sendable, Equatable {
    /// The chip's device name and label (`gpiochip0`, `pinctrl-bcm2711`).
    public var chipName: String
    public var chipLabel: String
    public var offset: Int
    /// Who holds the line (`swiftwing`, `gpio-keys`…), `nil` when nobody does.
    public var consumer: String?
    /// Held by a program or a kernel driver.
    public var isUsed: Bool

    /// Finds the chip by label or name and the line by name or offset, as a request would, and reads
    /// whether it is in use. The corresponding C functions are `gpiod_line_is_used` and
    /// `gpiod_line_consumer`.
    public static func read(_ spec: GPIOLineSpec) throws(GPIOError) -> GPIOLineState {
        let chip = try ChipHandle.find(spec)
        let line = try chip.line(spec)
        gpiod_line_update(line)
        return GPIOLineState(
            chipName: chip.name, chipLabel: chip.label, offset: Int(gpiod_line_offset(line)),
            consumer: gpiod_line_consumer(line).map { String(cString: $0) }, isUsed: gpiod_line_is_used(line))
    }
}
