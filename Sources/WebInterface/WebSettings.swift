import ApplianceCore
import Foundation

/// What `swiftwing-web` is configured with: the `[web]` section, the daemon's state directory and control
/// socket, and the bounds on what one browser may cost the process.
public struct WebSettings: Sendable {
    /// The bounds on requests: a page is a few KiB, a form a few hundred bytes.
    public struct Limits: Sendable {
        /// The largest request body read (a form); more is answered 413.
        public var bodyBytes = 16 << 10
        /// One header line, all headers together, and how many.
        public var headerFieldBytes = 8 << 10
        public var headerListBytes = 16 << 10
        public var headerFieldCount = 64
        /// Connections open at once; more wait in the listen backlog.
        public var connections = 32
        /// A connection that sends or takes nothing this long is closed (slow clients).
        public var idleSeconds: Int64 = 30
        /// Live-status streams at once, and how long each runs before the browser reconnects.
        public var eventStreams = 8
        public var eventStreamSeconds: Int64 = 600

        public init() {}
    }

    /// The daemon's configuration: the state directory and control socket, and for library changes the
    /// same value `swiftwing library edit` passes.
    public var configuration: ApplianceConfiguration
    public var limits = Limits()
    /// How often the live status is looked at for changes, in milliseconds.
    public var statusIntervalMilliseconds: Int64 = 700

    public init(configuration: ApplianceConfiguration) {
        self.configuration = configuration
    }

    public var address: String { configuration.web.address }
    public var port: Int { configuration.web.port }
}

/// The time the process goes by; tests advance it instead of sleeping.
public struct WebClock: Sendable {
    public var now: @Sendable () -> Date

    public init(now: @escaping @Sendable () -> Date) {
        self.now = now
    }

    public static let system = WebClock { Date() }
}
