import Logging
import SwiftWingCore
import Talaria

/// Where frames come from: a V4L2 device node, or the synthetic camera for development.
public enum CameraDevice: Equatable, Sendable, CustomStringConvertible {
    case v4l2(path: String)
    /// Replays the JPEGs of a folder; `nil` means the shelf photos shipped with the project.
    case synthetic(folder: String?)

    /// Parses `/dev/videoN`, `synthetic` or `synthetic:DIR`.
    public init(parsing text: String) throws(ConfigurationValueError) {
        if text == "synthetic" {
            self = .synthetic(folder: nil)
        } else if text.hasPrefix("synthetic:") {
            let folder = String(text.dropFirst("synthetic:".count))
            guard !folder.isEmpty else {
                throw ConfigurationValueError(
                    "`synthetic:` needs a folder of JPEGs after the colon, e.g. synthetic:/srv/shelves")
            }
            self = .synthetic(folder: folder)
        } else if text.hasPrefix("/") {
            self = .v4l2(path: text)
        } else {
            throw ConfigurationValueError(
                "\"\(text)\" is neither a device path nor `synthetic`: use e.g. /dev/video0, /dev/v4l/by-id/…, synthetic or synthetic:DIR"
            )
        }
    }

    public var description: String {
        switch self {
        case .v4l2(let path): path
        case .synthetic(nil): "synthetic"
        case .synthetic(let folder?): "synthetic:\(folder)"
        }
    }
}

/// Where the status panel is drawn.
public enum PanelOutput: Equatable, Sendable, CustomStringConvertible {
    case none
    case framebuffer(path: String)
    case png(path: String)

    /// Parses `none`, `fb:/dev/fb0` or `png:PATH`.
    public init(parsing text: String) throws(ConfigurationValueError) {
        if text == "none" {
            self = .none
        } else if text.hasPrefix("fb:"), text.count > 3 {
            self = .framebuffer(path: String(text.dropFirst(3)))
        } else if text.hasPrefix("png:"), text.count > 4 {
            self = .png(path: String(text.dropFirst(4)))
        } else {
            throw ConfigurationValueError(
                "\"\(text)\" is not a panel output: use none, fb:/dev/fb0 or png:/path/to/panel.png")
        }
    }

    public var description: String {
        switch self {
        case .none: "none"
        case .framebuffer(let path): "fb:\(path)"
        case .png(let path): "png:\(path)"
        }
    }
}

/// Everything the daemon and the CLI are configured with.
///
/// Values come from the defaults here, then the TOML file, then `SWIFTWING_*` environment variables,
/// then command-line flags, each overriding the one before. Secrets are never part of it: the
/// backend's API key is read from a credential file at the moment it is needed.
public struct ApplianceConfiguration: Equatable, Sendable {
    public struct Camera: Equatable, Sendable {
        public var device: CameraDevice = .v4l2(path: "/dev/video0")
        public var width = 1920
        public var height = 1080
        public var framesPerSecond = 15
        /// Driver buffers: two suffice (see ``CameraConfiguration/minimumBuffers``), and each is a
        /// full sensor frame of kernel memory (3 MiB at 1080p, 18 MiB at 12 MP).
        public var bufferCount = 2
        /// Degrees clockwise to turn frames for a camera mounted sideways: 0, 90, 180 or 270.
        public var rotation = 0
        public var autofocus: Bool?
        public var focusAbsolute: Int?
        public var zoomAbsolute: Int?
        public var exposureAbsolute: Int?
        /// Seconds without a frame after which the camera counts as stalled and is reopened.
        public var stallTimeoutSeconds = 5.0
        /// Seconds a press waits for its frame before it is refused.
        public var captureTimeoutSeconds = 3.0
    }

    public struct Imaging: Equatable, Sendable {
        public var maxLongEdge = 1920
        public var jpegQuality = 85
        public var thumbnailLongEdge = 160
        /// Presses being captured or processed at once; one more is refused, never delayed.
        public var queueDepth = 4
        /// Upload frames the quality check finds blurred or dark (otherwise they wait for a person).
        public var uploadPoorFrames = false
        /// Where a frame stops being good enough to upload (`imaging.min_sharpness` …).
        public var qualityThresholds = QualityThresholds()
    }

    /// What the device does with what it reads in a frame by itself (`[identify]`).
    public struct Identify: Equatable, Sendable {
        /// Send scans whose books were read from barcodes to the backend as well.
        public var uploadBarcodeScans = false
    }

    public struct Backend: Equatable, Sendable {
        /// No URL: the daemon runs without an uplink and scans stay queued.
        public var url: String?
        /// A file holding the API key. Default: `$CREDENTIALS_DIRECTORY/api-key` (systemd credentials).
        public var apiKeyFile: String?
        /// CA certificates (PEM) to trust for the backend instead of the system's (a private CA).
        public var caFile: String?
        /// Jobs in flight at once, each from upload to its terminal state.
        public var concurrency = 3
        /// Status polls of one job are at least this far apart (the backend allows one per 2 s).
        public var pollIntervalSeconds = 2.0
        /// While offline, the backend is probed this often so queued scans go out soon after it returns.
        public var probeIntervalSeconds = 15.0
        /// After a round of 3 failed attempts a scan waits this long (or for the network to return).
        public var roundIntervalSeconds = 180.0
        /// A progress stream without a terminal event this long is abandoned for polling.
        public var streamAbandonSeconds = 300.0
        /// A job the backend answers 404 for this long is lost: its scan is sent again as a new job.
        public var jobLostAfterSeconds = 120.0
    }

    /// Books known only by their ISBN completed from a public catalogue (`[enrichment]`).
    public struct Enrichment: Equatable, Sendable {
        public var enabled = true
        public var provider: CatalogProvider = .openLibrary
        /// The catalogue's base URL; `nil`: the provider's public service.
        public var baseURL: String?
    }

    /// The shutter button on a GPIO line and shutter keys on input devices (`[shutter]`).
    public struct Shutter: Equatable, Sendable {
        /// The GPIO chip's label (`pinctrl-bcm2835`, Pi 5: `pinctrl-rp1`) or name (`gpiochip0`); empty: no GPIO button.
        public var gpioChip = ""
        /// The line's name (`GPIO17`) or offset (`17`).
        public var gpioLine = "GPIO17"
        public var activeLow = true
        public var bias = "pull-up"
        /// The contact must stay open this long before the button counts as released.
        public var debounceMilliseconds = 30
        /// The contact must stay closed this long before a press counts (shorter pulses are glitches).
        public var glitchMilliseconds = 8
        /// Held this long: the second action (retry failed scans, show the address). 0 turns it off.
        public var longPressMilliseconds = 2000
        /// Key codes that press the shutter on any input device; "none" turns key devices off.
        public var keys = "KEY_CAMERA,KEY_ENTER,KEY_SPACE,KEY_VOLUMEUP"
        /// Where input devices appear.
        public var keyDirectory = "/dev/input"
        /// The key devices that may press the shutter: names (`AB Shutter3`) and `vendor:product`
        /// ids (`05ac:0220`), comma-separated; empty: any device that has one of `keys`.
        public var keyDevices = ""
        /// SCHED_FIFO priority for the shutter and buzzer threads (1…49); 0: normal scheduling.
        public var realtimePriority = 0
    }

    /// The buzzer and the exposure light on GPIO outputs (`[buzzer]`).
    public struct Buzzer: Equatable, Sendable {
        /// Empty: the shutter's chip.
        public var gpioChip = ""
        /// Empty: no buzzer.
        public var gpioLine = ""
        public var activeLow = false
        /// The light lit for the exposure of the captured frame; empty: no light.
        public var lightLine = ""
        public var lightActiveLow = false
    }

    /// The library in a browser, `swiftwing-web` (`[web]`): off unless turned on, as it listens on the network.
    public struct Web: Equatable, Sendable {
        public var enabled = false
        /// The IP address to listen on: 0.0.0.0 for every network, 127.0.0.1 for this device only.
        public var address = "0.0.0.0"
        public var port = 8080
        /// The Now page has a shutter button.
        public var shutterButton = true
    }

    public var stateDirectory = "/var/lib/swiftwing"
    public var controlSocket = "/run/swiftwing/control.sock"
    public var logLevel: Logger.Level = .info
    /// A press is refused while the state directory has less free space than this.
    public var minimumFreeMegabytes = 64
    public var camera = Camera()
    public var imaging = Imaging()
    public var identify = Identify()
    public var backend = Backend()
    public var enrichment = Enrichment()
    public var panel: PanelOutput = .none
    public var shutter = Shutter()
    public var buzzer = Buzzer()
    public var web = Web()

    public init() {}

    /// The default configuration file.
    public static let defaultPath = "/etc/swiftwing/swiftwing.toml"
}
