import Glibc
import Logging
import SwiftWingCore
import Talaria

/// A value's problem, without knowing where the value came from; ``ConfigurationKey`` adds that.
public struct ConfigurationValueError: Error, Equatable, Sendable {
    public var message: String
    public init(_ message: String) { self.message = message }
}

/// A configuration value as written, before it is checked against its key.
enum RawConfigurationValue {
    case string(String)
    case integer(Int)
    case double(Double)
    case bool(Bool)
    case other(typeName: String)

    var typeName: String {
        switch self {
        case .string: "a string"
        case .integer: "an integer"
        case .double: "a number"
        case .bool: "a boolean"
        case .other(let name): name
        }
    }
}

/// One setting: its TOML section and name, the type it takes, and how it lands in the configuration.
struct ConfigurationKey: Sendable {
    enum Kind: Sendable {
        case string, integer, double, bool

        var example: String {
            switch self {
            case .string: "\"text\" in double quotes"
            case .integer: "a whole number without quotes"
            case .double: "a number without quotes"
            case .bool: "true or false without quotes"
            }
        }
    }

    let section: String
    let name: String
    let kind: Kind
    let example: String
    /// Throws only ``ConfigurationValueError`` (closures here cannot spell a typed throw).
    let apply: @Sendable (inout ApplianceConfiguration, RawConfigurationValue) throws -> Void

    /// `camera.width`
    var path: String { "\(section).\(name)" }

    /// `SWIFTWING_CAMERA_WIDTH`
    var environmentName: String { "SWIFTWING_\(section.uppercased())_\(name.uppercased())" }

    /// Converts text from the environment or a flag to this key's kind.
    func value(fromText text: String) throws(ConfigurationValueError) -> RawConfigurationValue {
        switch kind {
        case .string:
            return .string(text)
        case .integer:
            guard let number = Int(text) else { throw ConfigurationValueError("\"\(text)\" is not a whole number") }
            return .integer(number)
        case .double:
            guard let number = Double(text) else { throw ConfigurationValueError("\"\(text)\" is not a number") }
            return .double(number)
        case .bool:
            switch text.lowercased() {
            case "true", "1", "yes", "on": return .bool(true)
            case "false", "0", "no", "off": return .bool(false)
            default: throw ConfigurationValueError("\"\(text)\" is not true or false")
            }
        }
    }
}

// MARK: - The keys

private func string(_ value: RawConfigurationValue) throws(ConfigurationValueError) -> String {
    guard case .string(let text) = value else { throw typeMismatch(value, expected: "a string") }
    return text
}

private func integer(_ value: RawConfigurationValue, in range: ClosedRange<Int>) throws(ConfigurationValueError) -> Int
{
    guard case .integer(let number) = value else { throw typeMismatch(value, expected: "an integer") }
    guard range.contains(number) else {
        throw ConfigurationValueError("\(number) is out of range: use \(range.lowerBound)…\(range.upperBound)")
    }
    return number
}

private func double(_ value: RawConfigurationValue, in range: ClosedRange<Double>) throws(ConfigurationValueError)
    -> Double
{
    let number: Double
    switch value {
    case .double(let d): number = d
    case .integer(let i): number = Double(i)
    default: throw typeMismatch(value, expected: "a number")
    }
    guard range.contains(number) else {
        throw ConfigurationValueError("\(number) is out of range: use \(range.lowerBound)…\(range.upperBound)")
    }
    return number
}

private func bool(_ value: RawConfigurationValue) throws(ConfigurationValueError) -> Bool {
    guard case .bool(let flag) = value else { throw typeMismatch(value, expected: "true or false") }
    return flag
}

private func typeMismatch(_ value: RawConfigurationValue, expected: String) -> ConfigurationValueError {
    ConfigurationValueError("expected \(expected), found \(value.typeName)")
}

private func absolutePath(_ value: RawConfigurationValue) throws(ConfigurationValueError) -> String {
    let path = try string(value)
    guard path.hasPrefix("/") else {
        throw ConfigurationValueError("\"\(path)\" is not an absolute path: start it with /")
    }
    return path
}

private func nonEmpty(_ text: String, what: String) throws(ConfigurationValueError) -> String {
    guard !text.isEmpty else { throw ConfigurationValueError("it is empty: write \(what)") }
    return text
}

/// An IPv4 or IPv6 address as written (no host names: the web page must not listen where a name happens to
/// point).
private func ipAddress(_ value: RawConfigurationValue) throws(ConfigurationValueError) -> String {
    let text = try string(value)
    var v4 = in_addr()
    var v6 = in6_addr()
    guard inet_pton(AF_INET, text, &v4) == 1 || inet_pton(AF_INET6, text, &v6) == 1 else {
        throw ConfigurationValueError(
            "\"\(text)\" is not an IP address: use 0.0.0.0 for every network, 127.0.0.1 for this device only, "
                + "or one of the device's addresses (ip -brief address)")
    }
    return text
}

extension ConfigurationKey {
    /// Every key the configuration file, the environment and the flags accept.
    static let all: [ConfigurationKey] = [
        ConfigurationKey(section: "daemon", name: "state_directory", kind: .string, example: "\"/var/lib/swiftwing\"") {
            $0.stateDirectory = try absolutePath($1)
        },
        ConfigurationKey(
            section: "daemon", name: "control_socket", kind: .string, example: "\"/run/swiftwing/control.sock\""
        ) {
            $0.controlSocket = try absolutePath($1)
        },
        ConfigurationKey(section: "daemon", name: "log_level", kind: .string, example: "\"info\"") {
            let text = try string($1)
            guard let level = Logger.Level(rawValue: text) else {
                let names = Logger.Level.allCases.map(\.rawValue).joined(separator: ", ")
                throw ConfigurationValueError("\"\(text)\" is not a log level: use one of \(names)")
            }
            $0.logLevel = level
        },
        ConfigurationKey(section: "daemon", name: "min_free_megabytes", kind: .integer, example: "64") {
            $0.minimumFreeMegabytes = try integer($1, in: 0...1_000_000)
        },
        ConfigurationKey(section: "camera", name: "device", kind: .string, example: "\"/dev/video0\"") {
            $0.camera.device = try CameraDevice(parsing: string($1))
        },
        ConfigurationKey(section: "camera", name: "width", kind: .integer, example: "1920") {
            $0.camera.width = try integer($1, in: 16...16384)
        },
        ConfigurationKey(section: "camera", name: "height", kind: .integer, example: "1080") {
            $0.camera.height = try integer($1, in: 16...16384)
        },
        ConfigurationKey(section: "camera", name: "frames_per_second", kind: .integer, example: "15") {
            $0.camera.framesPerSecond = try integer($1, in: 1...240)
        },
        ConfigurationKey(section: "camera", name: "buffers", kind: .integer, example: "2") {
            $0.camera.bufferCount = try integer($1, in: 2...32)
        },
        ConfigurationKey(section: "camera", name: "rotation", kind: .integer, example: "90") {
            let degrees = try integer($1, in: 0...270)
            guard degrees % 90 == 0 else {
                throw ConfigurationValueError("\(degrees) is not a rotation the camera supports: use 0, 90, 180 or 270")
            }
            $0.camera.rotation = degrees
        },
        ConfigurationKey(section: "camera", name: "autofocus", kind: .bool, example: "true") {
            $0.camera.autofocus = try bool($1)
        },
        ConfigurationKey(section: "camera", name: "focus_absolute", kind: .integer, example: "250") {
            $0.camera.focusAbsolute = try integer($1, in: Int(Int32.min)...Int(Int32.max))
        },
        ConfigurationKey(section: "camera", name: "zoom_absolute", kind: .integer, example: "100") {
            $0.camera.zoomAbsolute = try integer($1, in: Int(Int32.min)...Int(Int32.max))
        },
        ConfigurationKey(section: "camera", name: "exposure_absolute", kind: .integer, example: "300") {
            $0.camera.exposureAbsolute = try integer($1, in: Int(Int32.min)...Int(Int32.max))
        },
        ConfigurationKey(section: "camera", name: "stall_timeout_seconds", kind: .double, example: "5.0") {
            $0.camera.stallTimeoutSeconds = try double($1, in: 0.5...600)
        },
        ConfigurationKey(section: "camera", name: "capture_timeout_seconds", kind: .double, example: "3.0") {
            $0.camera.captureTimeoutSeconds = try double($1, in: 0.1...60)
        },
        ConfigurationKey(section: "imaging", name: "max_long_edge", kind: .integer, example: "1920") {
            $0.imaging.maxLongEdge = try integer($1, in: 64...16384)
        },
        ConfigurationKey(section: "imaging", name: "jpeg_quality", kind: .integer, example: "85") {
            $0.imaging.jpegQuality = try integer($1, in: 1...100)
        },
        ConfigurationKey(section: "imaging", name: "thumbnail_long_edge", kind: .integer, example: "160") {
            $0.imaging.thumbnailLongEdge = try integer($1, in: 16...1024)
        },
        ConfigurationKey(section: "imaging", name: "queue_depth", kind: .integer, example: "4") {
            $0.imaging.queueDepth = try integer($1, in: 1...64)
        },
        ConfigurationKey(section: "imaging", name: "upload_poor_frames", kind: .bool, example: "false") {
            $0.imaging.uploadPoorFrames = try bool($1)
        },
        ConfigurationKey(section: "imaging", name: "min_sharpness", kind: .double, example: "75.0") {
            $0.imaging.qualityThresholds.minimumSharpness = try double($1, in: 0...100_000)
        },
        ConfigurationKey(section: "imaging", name: "min_mean_level", kind: .double, example: "45.0") {
            $0.imaging.qualityThresholds.minimumMeanLevel = try double($1, in: 0...255)
        },
        ConfigurationKey(section: "imaging", name: "max_shadow_fraction", kind: .double, example: "0.5") {
            $0.imaging.qualityThresholds.maximumShadowFraction = try double($1, in: 0...1)
        },
        ConfigurationKey(section: "imaging", name: "max_highlight_fraction", kind: .double, example: "0.5") {
            $0.imaging.qualityThresholds.maximumHighlightFraction = try double($1, in: 0...1)
        },
        ConfigurationKey(section: "identify", name: "upload_barcode_scans", kind: .bool, example: "false") {
            $0.identify.uploadBarcodeScans = try bool($1)
        },
        ConfigurationKey(section: "backend", name: "url", kind: .string, example: "\"https://talaria.example/\"") {
            let url = try string($1)
            guard url.hasPrefix("https://") || url.hasPrefix("http://") else {
                throw ConfigurationValueError("\"\(url)\" is not an http(s) URL: write e.g. https://backend.example")
            }
            $0.backend.url = url
        },
        ConfigurationKey(section: "backend", name: "api_key_file", kind: .string, example: "\"/etc/swiftwing/api-key\"")
        {
            $0.backend.apiKeyFile = try absolutePath($1)
        },
        ConfigurationKey(
            section: "backend", name: "ca_file", kind: .string, example: "\"/etc/swiftwing/backend-ca.pem\""
        ) {
            $0.backend.caFile = try absolutePath($1)
        },
        ConfigurationKey(section: "backend", name: "concurrency", kind: .integer, example: "3") {
            $0.backend.concurrency = try integer($1, in: 1...16)
        },
        ConfigurationKey(section: "backend", name: "poll_interval_seconds", kind: .double, example: "2.0") {
            $0.backend.pollIntervalSeconds = try double($1, in: 2...300)
        },
        ConfigurationKey(section: "backend", name: "probe_interval_seconds", kind: .double, example: "15.0") {
            $0.backend.probeIntervalSeconds = try double($1, in: 0.5...3600)
        },
        ConfigurationKey(section: "backend", name: "round_interval_seconds", kind: .double, example: "180.0") {
            $0.backend.roundIntervalSeconds = try double($1, in: 1...86_400)
        },
        ConfigurationKey(section: "backend", name: "stream_abandon_seconds", kind: .double, example: "300.0") {
            $0.backend.streamAbandonSeconds = try double($1, in: 5...3600)
        },
        ConfigurationKey(section: "backend", name: "job_lost_after_seconds", kind: .double, example: "120.0") {
            $0.backend.jobLostAfterSeconds = try double($1, in: 10...86_400)
        },
        ConfigurationKey(section: "enrichment", name: "enabled", kind: .bool, example: "true") {
            $0.enrichment.enabled = try bool($1)
        },
        ConfigurationKey(section: "enrichment", name: "provider", kind: .string, example: "\"openlibrary\"") {
            let name = try string($1)
            guard let provider = CatalogProvider(rawValue: name) else {
                throw ConfigurationValueError(
                    "\"\(name)\" is not a catalogue this device knows: use "
                        + CatalogProvider.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: " or "))
            }
            $0.enrichment.provider = provider
        },
        ConfigurationKey(section: "enrichment", name: "base_url", kind: .string, example: "\"https://openlibrary.org\"")
        {
            let url = try string($1)
            guard url.hasPrefix("https://") || url.hasPrefix("http://") else {
                throw ConfigurationValueError("\"\(url)\" is not an http(s) URL: write e.g. https://openlibrary.org")
            }
            $0.enrichment.baseURL = url
        },
        ConfigurationKey(section: "panel", name: "output", kind: .string, example: "\"fb:/dev/fb0\"") {
            $0.panel = try PanelOutput(parsing: string($1))
        },
        ConfigurationKey(section: "shutter", name: "gpio_chip", kind: .string, example: "\"pinctrl-bcm2835\"") {
            let chip = try string($1)
            guard chip.isEmpty || !chip.allSatisfy(\.isNumber) else {
                throw ConfigurationValueError(
                    "\"\(chip)\" is a chip number, which changes between boards (the Pi 5 renumbered its chips): "
                        + "use the label or name from gpiodetect, e.g. pinctrl-bcm2835, pinctrl-rp1 or gpiochip0")
            }
            $0.shutter.gpioChip = chip
        },
        ConfigurationKey(section: "shutter", name: "gpio_line", kind: .string, example: "\"GPIO17\"") {
            $0.shutter.gpioLine = try nonEmpty(string($1), what: "a line name such as GPIO17 or an offset such as 17")
        },
        ConfigurationKey(section: "shutter", name: "active_low", kind: .bool, example: "true") {
            $0.shutter.activeLow = try bool($1)
        },
        ConfigurationKey(section: "shutter", name: "bias", kind: .string, example: "\"pull-up\"") {
            let text = try string($1)
            guard LineBias(rawValue: text) != nil else {
                throw ConfigurationValueError(
                    "\"\(text)\" is not a bias: use one of \(LineBias.allCases.map(\.rawValue).joined(separator: ", "))"
                )
            }
            $0.shutter.bias = text
        },
        ConfigurationKey(section: "shutter", name: "debounce_ms", kind: .integer, example: "30") {
            $0.shutter.debounceMilliseconds = try integer($1, in: 0...1000)
        },
        ConfigurationKey(section: "shutter", name: "glitch_ms", kind: .integer, example: "8") {
            $0.shutter.glitchMilliseconds = try integer($1, in: 0...200)
        },
        ConfigurationKey(section: "shutter", name: "long_press_ms", kind: .integer, example: "2000") {
            let value = try integer($1, in: 0...60_000)
            guard value == 0 || value >= 300 else {
                throw ConfigurationValueError("\(value) ms is shorter than a normal press: use 0 (off) or 300…60000")
            }
            $0.shutter.longPressMilliseconds = value
        },
        ConfigurationKey(section: "shutter", name: "keys", kind: .string, example: "\"KEY_CAMERA,KEY_ENTER\"") {
            let text = try string($1)
            do {
                _ = try KeyCodes.parse(text)
            } catch {
                throw ConfigurationValueError("\(error)")
            }
            $0.shutter.keys = text
        },
        ConfigurationKey(section: "shutter", name: "key_directory", kind: .string, example: "\"/dev/input\"") {
            $0.shutter.keyDirectory = try absolutePath($1)
        },
        ConfigurationKey(section: "shutter", name: "key_devices", kind: .string, example: "\"AB Shutter3,05ac:0220\"") {
            let text = try string($1)
            if text.split(separator: ",").contains(where: { $0.trimmingCharacters(in: .whitespaces).isEmpty }) {
                throw ConfigurationValueError(
                    "an empty entry in the list: give device names (as `swiftwing doctor` shows them) or vendor:product "
                        + "ids, separated by commas, or \"\" for any device with a shutter key")
            }
            $0.shutter.keyDevices = text
        },
        ConfigurationKey(section: "shutter", name: "realtime_priority", kind: .integer, example: "10") {
            $0.shutter.realtimePriority = try integer($1, in: 0...49)
        },
        ConfigurationKey(section: "buzzer", name: "gpio_chip", kind: .string, example: "\"pinctrl-bcm2835\"") {
            let chip = try string($1)
            guard chip.isEmpty || !chip.allSatisfy(\.isNumber) else {
                throw ConfigurationValueError("\"\(chip)\" is a chip number: use the label or name from gpiodetect")
            }
            $0.buzzer.gpioChip = chip
        },
        ConfigurationKey(section: "buzzer", name: "gpio_line", kind: .string, example: "\"GPIO27\"") {
            $0.buzzer.gpioLine = try string($1)
        },
        ConfigurationKey(section: "buzzer", name: "active_low", kind: .bool, example: "false") {
            $0.buzzer.activeLow = try bool($1)
        },
        ConfigurationKey(section: "buzzer", name: "light_line", kind: .string, example: "\"GPIO22\"") {
            $0.buzzer.lightLine = try string($1)
        },
        ConfigurationKey(section: "buzzer", name: "light_active_low", kind: .bool, example: "false") {
            $0.buzzer.lightActiveLow = try bool($1)
        },
        ConfigurationKey(section: "web", name: "enabled", kind: .bool, example: "true") {
            $0.web.enabled = try bool($1)
        },
        ConfigurationKey(section: "web", name: "address", kind: .string, example: "\"0.0.0.0\"") {
            $0.web.address = try ipAddress($1)
        },
        ConfigurationKey(section: "web", name: "port", kind: .integer, example: "8080") {
            $0.web.port = try integer($1, in: 1...65535)
        },
        ConfigurationKey(section: "web", name: "shutter_button", kind: .bool, example: "true") {
            $0.web.shutterButton = try bool($1)
        },
    ]

    static func named(section: String, name: String) -> ConfigurationKey? {
        all.first { $0.section == section && $0.name == name }
    }
}
