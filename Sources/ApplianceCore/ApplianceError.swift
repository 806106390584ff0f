import SwiftWingCore

/// Facts about this build, for `--version`, `status` and the User-Agent.
public enum ApplianceInfo {
    public static let version = SwiftWingVersion.string
}

/// Why the daemon or a command cannot go on, as advice: what is wrong and what to do.
public struct ApplianceError: Error, CustomStringConvertible, Sendable {
    public var description: String

    public init(_ description: String) {
        self.description = description
    }
}
